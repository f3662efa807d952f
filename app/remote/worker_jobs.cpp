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
    if (op == "run" || op == "run_whole") {
      if (!backend_) fail(op + " before build: no kernels were sent");
      backend_->cancel = cancel;
      backend_->setTimeBudget(request.header.value("budget_ms", 0.0));
      checkReps(request);
      return op == "run" ? run(request) : runWhole(request);
    }
    fail("unknown request '" + op + "' (hello, build, run, run_whole, ping)");
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
  const double ms = backend_->run(index, params, request.header.value("warmup", 1), request.header.value("reps", 1));
  Message reply{{{"ok", true}, {"ms", ms}}, {}};
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].output) reply.payload += buffers[i];
  return reply;
}

void ClientJobs::checkReps(const Message& request) const {
  const int warmup = request.header.value("warmup", 1), reps = request.header.value("reps", 1);
  if (warmup < 0 || warmup > 10000 || reps < 1 || reps > 10000) fail("run: warmup and reps must lie in 0..10000 and 1..10000");
}

// The whole run (KernelBackend::runWhole) on buffers of this request: those sent come in the payload, each
// kernel runs once so its values are in place, then the whole run; the outputs marked download go back in step
// order.
Message ClientJobs::runWhole(const Message& request) {
  const nlohmann::json& bs = request.header.at("buffers");
  uint64_t total = 0;
  for (const auto& b : bs) total += b.at("bytes").get<uint64_t>();
  if (total > limits_.maxJobBytes)
    fail("the whole run needs " + std::to_string(total) + " bytes of buffers, over the worker's limit of " +
         std::to_string(limits_.maxJobBytes) + " (serve --max-job-mb)");
  std::vector<std::string> buffers;
  size_t at = 0;
  for (const auto& b : bs) {
    buffers.emplace_back(b.at("bytes").get<size_t>(), '\0');
    if (!b.at("sent").get<bool>()) continue;
    if (at + buffers.back().size() > request.payload.size()) fail("run_whole: the request holds fewer bytes than its buffers say");
    std::memcpy(buffers.back().data(), request.payload.data() + at, buffers.back().size());
    at += buffers.back().size();
  }
  if (at != request.payload.size()) fail("run_whole: the request holds more bytes than its buffers say");
  std::vector<size_t> order;
  std::vector<std::vector<ParamBuffer>> params;
  for (const auto& step : request.header.at("steps")) {
    const size_t index = step.at("kernel").get<size_t>();
    if (index >= kernels_.size() || !kernels_[index]) fail("run_whole: no kernel " + std::to_string(index) + " was built");
    order.push_back(index);
    params.emplace_back();
    for (const auto& p : step.at("params")) {
      const size_t id = p.at("buffer").get<size_t>(), bytes = p.at("bytes").get<size_t>();
      if (id >= buffers.size() || bytes > buffers[id].size()) fail("run_whole: a parameter names a buffer it does not fit");
      params.back().push_back({buffers[id].data(), bytes, p.at("output").get<bool>(), p.at("value").get<std::string>(),
                               p.at("download").get<bool>(), p.at("record").get<bool>()});
    }
  }
  for (size_t k = 0; k < order.size(); ++k) backend_->run(order[k], params[k], 0, 1);
  const auto t = backend_->runWhole(order, params, request.header.value("warmup", 1), request.header.value("reps", 1));
  Message reply{{{"ok", true}, {"whole_ms", t.launchedMs}, {"graph_ms", t.graphMs}, {"note", t.note}}, {}};
  for (const auto& ps : params)
    for (const ParamBuffer& p : ps)
      if (p.output && p.download) reply.payload.append(static_cast<const char*>(p.host), p.bytes);
  return reply;
}

}  // namespace tessera::remote
