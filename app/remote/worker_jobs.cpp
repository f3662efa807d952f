#include "app/remote/worker_jobs.h"

#include <cstring>

#include "ir/error.h"
#include "runtime/execute/remote.h"

namespace tessera::remote {

using execute::detail::ParamBuffer;

ClientJobs::ClientJobs(execute::BackendKind kind, std::string arch, WorkerLimits limits)
    : kind_(kind), arch_(std::move(arch)), limits_(limits) {}

ClientJobs::~ClientJobs() = default;

Message ClientJobs::handle(const Message& request, const CancelToken& cancel) {
  const std::string op = request.header.value("op", std::string());
  cancel_ = cancel;
  try {
    if (op == "build") return build(request);
    if (op == "run") {
      if (!backend_) fail("run before build: no kernels were sent");
      backend_->cancel = cancel;
      return run(request);
    }
    fail("unknown request '" + op + "' (hello, build, run, ping)");
  } catch (const Cancelled&) {
    throw;
  } catch (const std::exception& e) {
    return errorReply(e.what());
  }
}

std::string ClientJobs::lostDevice() const { return backend_ && couldRun_ ? backend_->cannotRun() : ""; }

// A fresh backend for the new kernels: the modules come from the worker's module cache when it has them.
Message ClientJobs::build(const Message& request) {
  const nlohmann::json& list = request.header.at("kernels");
  if (!list.is_array()) fail("build: kernels: expected a list");
  kernels_.clear();
  for (const nlohmann::json& k : list) kernels_.push_back(k.is_null() ? std::nullopt : std::optional(kernelFromJson(k)));
  std::vector<const codegen::GeneratedKernel*> ptrs;
  for (const auto& k : kernels_) ptrs.push_back(k ? &*k : nullptr);
  backend_ = execute::detail::makeKernelBackend(kind_, arch_, "", modcache::defaultModuleCache());
  couldRun_ = backend_->cannotRun().empty();
  backend_->cancel = cancel_;
  std::vector<execute::detail::KernelBuild> builds = backend_->build(ptrs);
  cancel_.check();
  nlohmann::json out = nlohmann::json::array();
  for (const auto& b : builds) out.push_back(buildToJson(b));
  return {{{"ok", true}, {"builds", out}}, {}};
}

// The inputs come in the request, the outputs go back in the reply; every buffer lives for this request only.
Message ClientJobs::run(const Message& request) {
  const size_t index = request.header.at("kernel").get<size_t>();
  if (index >= kernels_.size() || !kernels_[index]) fail("run: no kernel " + std::to_string(index) + " was built");
  const nlohmann::json& ps = request.header.at("params");
  uint64_t total = 0;
  for (const auto& p : ps) total += p.at("bytes").get<uint64_t>();
  if (total > limits_.maxJobBytes)
    fail("run of kernel '" + kernels_[index]->kernelId + "' needs " + std::to_string(total) + " bytes of buffers, over the worker's limit of " +
         std::to_string(limits_.maxJobBytes) + " (serve --max-job-mb)");
  std::vector<std::string> buffers;
  std::vector<ParamBuffer> params;
  size_t at = 0;
  for (const auto& p : ps) {
    ParamBuffer b{nullptr, p.at("bytes").get<size_t>(), p.at("output").get<bool>(), "", true, p.at("record").get<bool>()};
    buffers.emplace_back(b.bytes, '\0');
    if (sentToWorker(b)) {
      if (at + b.bytes > request.payload.size()) fail("run: the request holds fewer bytes than its parameters say");
      std::memcpy(buffers.back().data(), request.payload.data() + at, b.bytes);
      at += b.bytes;
    }
    params.push_back(b);
  }
  if (at != request.payload.size()) fail("run: the request holds more bytes than its parameters say");
  for (size_t i = 0; i < params.size(); ++i) params[i].host = buffers[i].data();
  const int warmup = request.header.value("warmup", 1), reps = request.header.value("reps", 1);
  if (warmup < 0 || warmup > 10000 || reps < 1 || reps > 10000) fail("run: warmup and reps must lie in 0..10000 and 1..10000");
  backend_->setTimeBudget(request.header.value("budget_ms", 0.0));
  const double ms = backend_->run(index, params, warmup, reps);
  Message reply{{{"ok", true}, {"ms", ms}}, {}};
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].output) reply.payload += buffers[i];
  return reply;
}

}  // namespace tessera::remote
