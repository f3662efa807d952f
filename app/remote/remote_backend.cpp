// Each backend holds one connection, opened when it is made, in the thread that uses it: the executor makes a
// backend per run (and the tuner per batch), so a run is one connection, and a worker that went away fails only
// the run in flight; the next run connects again.
#include "app/remote/remote_backend.h"

#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "app/remote/link.h"
#include "app/remote/own_worker.h"
#include "ir/error.h"
#include "runtime/cuda/cuda_driver.h"

namespace tessera::remote {
namespace {

using execute::detail::KernelBuild;
using execute::detail::ParamBuffer;

// Long enough for a cold build of a big model's kernels; a run waits as long as the worker's own time limit.
constexpr double kBuildTimeoutS = 1800;

class RemoteBackend : public execute::detail::KernelBackend {
 public:
  // `where` follows the worker's device in device() (" on HOST:PORT"); `options` as Link's.
  RemoteBackend(std::string address, execute::BackendKind kind, LinkOptions options = {}, std::string where = {})
      : address_(std::move(address)), kind_(kind), where_(where.empty() ? " on " + address_ : std::move(where)) {
    try {
      connect(std::move(options));
    } catch (const std::exception& e) {
      cannotRun_ = e.what();
    }
  }
  // A backend that cannot run, saying why (a worker that did not start).
  RemoteBackend(execute::BackendKind kind, std::string cannotRun, std::string where)
      : kind_(kind), where_(std::move(where)), cannotRun_(std::move(cannotRun)) {}

  std::string device() const override {
    return (link_ ? link_->worker().device : std::string("unreachable worker")) + where_;
  }
  std::string cannotRun() const override { return cannotRun_; }
  uint64_t freeDeviceBytes() const override { return link_ ? link_->worker().freeDeviceBytes : 0; }

  std::vector<KernelBuild> build(const std::vector<const codegen::GeneratedKernel*>& kernels) override {
    std::vector<KernelBuild> out(kernels.size());
    names_.assign(kernels.size(), "");
    nlohmann::json list = nlohmann::json::array();
    for (size_t i = 0; i < kernels.size(); ++i) {
      list.push_back(kernels[i] ? kernelToJson(*kernels[i]) : nlohmann::json());
      if (kernels[i]) names_[i] = kernels[i]->kernelId;
    }
    if (!cannotRun_.empty()) {
      for (size_t i = 0; i < kernels.size(); ++i)
        if (kernels[i]) out[i].error = cannotRun_;
      return out;
    }
    Message reply;
    try {
      reply = linked().request({{{"op", "build"}, {"kernels", list}}, {}}, cancel, kBuildTimeoutS);
    } catch (const Cancelled&) {
      throw;
    } catch (const std::exception& e) {
      for (size_t i = 0; i < kernels.size(); ++i)
        if (kernels[i]) out[i].error = e.what();
      return out;
    }
    const nlohmann::json& builds = reply.header.at("builds");
    for (size_t i = 0; i < kernels.size() && i < builds.size(); ++i) out[i] = buildFromJson(builds[i]);
    return out;
  }

  double run(size_t index, const std::vector<ParamBuffer>& params, int warmup, int reps) override {
    if (!cannotRun_.empty()) fail(cannotRun_);
    Message request{{{"op", "run"}, {"kernel", index}, {"warmup", warmup}, {"reps", reps}, {"budget_ms", timeBudgetMs_}}, {}};
    nlohmann::json ps = nlohmann::json::array();
    for (const ParamBuffer& p : params) {
      ps.push_back({{"bytes", p.bytes}, {"output", p.output}, {"record", p.record}});
      if (sentToWorker(p)) request.payload.append(static_cast<const char*>(p.host), p.bytes);
    }
    request.header["params"] = ps;
    const std::string& name = names_.at(index);
    const uint64_t limit = linked().worker().maxRequestBytes;
    if (limit && request.payload.size() > limit)
      fail("kernel '" + name + "': its inputs are " + std::to_string(request.payload.size()) + " bytes, over the " +
           std::to_string(limit) + " bytes the worker at " + address_ + " takes in one request (serve --max-request-mb)");
    Message reply;
    try {
      reply = linked().request(request, cancel);
    } catch (const Cancelled&) {
      throw;
    } catch (const std::exception& e) {
      fail("kernel '" + name + "': " + e.what());
    }
    readOutputs(params, reply.payload, name);
    return reply.header.at("ms").get<double>();
  }

  // The whole run in one request: each distinct buffer once (those read before any step writes them travel with
  // it), each step's parameters by buffer number; the worker runs each kernel once, then the whole run, and sends
  // back the outputs marked download, in step order.
  WholeRunTimes runWhole(const std::vector<size_t>& order, const std::vector<std::vector<ParamBuffer>>& params,
                         int warmup, int reps) override {
    if (!cannotRun_.empty()) fail(cannotRun_);
    std::map<const void*, size_t> number;
    std::vector<size_t> bytes;
    std::vector<bool> written, sent;
    nlohmann::json steps = nlohmann::json::array();
    for (size_t k = 0; k < order.size(); ++k) {
      nlohmann::json ps = nlohmann::json::array();
      for (const ParamBuffer& p : params[k]) {
        auto [it, fresh] = number.try_emplace(p.host, bytes.size());
        if (fresh) bytes.push_back(0), written.push_back(false), sent.push_back(false);
        const size_t id = it->second;
        bytes[id] = std::max(bytes[id], p.bytes);
        if (!p.output && !written[id]) sent[id] = true;
        if (p.output) written[id] = true;
        ps.push_back({{"buffer", id}, {"bytes", p.bytes}, {"output", p.output}, {"download", p.download},
                      {"record", p.record}, {"value", p.value}});
      }
      steps.push_back({{"kernel", order[k]}, {"params", ps}});
    }
    Message request{{{"op", "run_whole"}, {"warmup", warmup}, {"reps", reps}, {"budget_ms", timeBudgetMs_}, {"steps", steps}}, {}};
    nlohmann::json buffers = nlohmann::json::array();
    std::vector<const void*> hosts(bytes.size());
    for (const auto& [host, id] : number) hosts[id] = host;
    for (size_t id = 0; id < bytes.size(); ++id) {
      buffers.push_back({{"bytes", bytes[id]}, {"sent", bool(sent[id])}});
      if (sent[id]) request.payload.append(static_cast<const char*>(hosts[id]), bytes[id]);
    }
    request.header["buffers"] = buffers;
    const uint64_t limit = linked().worker().maxRequestBytes;
    if (limit && request.payload.size() > limit)
      fail("the whole run's inputs are " + std::to_string(request.payload.size()) + " bytes, over the " +
           std::to_string(limit) + " bytes the worker at " + address_ + " takes in one request");
    Message reply = linked().request(request, cancel);
    size_t at = 0;
    for (const auto& ps : params)
      for (const ParamBuffer& p : ps) {
        if (!p.output || !p.download) continue;
        if (at + p.bytes > reply.payload.size()) fail("the worker sent fewer bytes of the whole run's outputs than asked");
        std::memcpy(p.host, reply.payload.data() + at, p.bytes);
        at += p.bytes;
      }
    return {reply.header.at("whole_ms").get<double>(), reply.header.at("graph_ms").get<double>(),
            reply.header.value("note", std::string())};
  }

 private:
  void connect(LinkOptions options) {
    link_ = std::make_unique<Link>(address_, std::move(options));
    owner_ = std::this_thread::get_id();
    if (link_->worker().kind != kind_)
      fail("the worker at " + address_ + " runs the " + (kind_ == execute::BackendKind::Cuda ? "cpu" : "cuda") +
           " backend, not the one these kernels were generated for");
    if (!link_->worker().cannotRun.empty()) fail(link_->worker().cannotRun + " (on the worker at " + address_ + ")");
  }

  // The connection, used only from the thread that made it (its socket belongs to that thread's event loop):
  // the executor and the measurements make, use and drop a backend in one thread.
  Link& linked() {
    if (owner_ != std::this_thread::get_id()) fail("the remote backend of " + address_ + " was used from another thread than its own");
    return *link_;
  }

  static void readOutputs(const std::vector<ParamBuffer>& params, const std::string& payload, const std::string& name) {
    size_t at = 0;
    for (const ParamBuffer& p : params) {
      if (!p.output) continue;
      if (at + p.bytes > payload.size())
        fail("kernel '" + name + "': the worker sent " + std::to_string(payload.size()) + " bytes of outputs, fewer than asked");
      std::memcpy(p.host, payload.data() + at, p.bytes);
      at += p.bytes;
    }
  }

  std::string address_;
  execute::BackendKind kind_;
  std::string where_;
  std::unique_ptr<Link> link_;
  std::thread::id owner_;
  std::string cannotRun_;
  std::vector<std::string> names_;
};

class Connector : public execute::RemoteConnector {
 public:
  explicit Connector(ConnectorOptions options) : options_(options) {}

  execute::WorkerInfo describe(const std::string& address) override { return Link(address).worker(); }
  std::unique_ptr<execute::detail::KernelBackend> backend(const std::string& address, execute::BackendKind kind) override {
    return std::make_unique<RemoteBackend>(address, kind);
  }

  // Without a GPU the in-process backend says why it cannot run; no worker is started for that.
  std::unique_ptr<execute::detail::KernelBackend> isolated(execute::BackendKind kind, const std::string& arch) override {
    if (kind != execute::BackendKind::Cuda || !options_.cudaInWorker || !cuda::cudaAvailability().available) return nullptr;
    const std::string where = ", in a worker process";
    OwnWorker& worker = ownWorker(kind, arch);
    std::string why;
    // A worker that cannot be reached may be ending (a lost device) or have crashed: a fresh one, once.
    for (bool fresh : {false, true}) {
      try {
        const OwnWorker::Endpoint e = worker.endpoint(fresh);
        LinkOptions link;
        link.token = e.token;
        link.plain = true;
        auto b = std::make_unique<RemoteBackend>(e.address, kind, link, where + " (pid " + std::to_string(e.pid) + ")");
        if (b->cannotRun().empty()) return b;
        why = b->cannotRun() + " (the worker's log: " + worker.logTail() + ")";
      } catch (const std::exception& error) {
        why = error.what();
      }
    }
    return std::make_unique<RemoteBackend>(kind, why, where);
  }

 private:
  OwnWorker& ownWorker(execute::BackendKind kind, const std::string& arch) {
    std::lock_guard lock(mutex_);
    std::unique_ptr<OwnWorker>& w = workers_[arch];
    if (!w) w = std::make_unique<OwnWorker>(kind, arch);
    return *w;
  }

  ConnectorOptions options_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<OwnWorker>> workers_;  // by architecture
};

}  // namespace

std::shared_ptr<execute::RemoteConnector> makeRemoteConnector(ConnectorOptions options) {
  return std::make_shared<Connector>(options);
}

void installRemoteConnector(ConnectorOptions options) { execute::setRemoteConnector(makeRemoteConnector(options)); }

}  // namespace tessera::remote
