#include "evaluate.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <random>

#include "driver/driver.h"
#include "frontend/text/tsr.h"
#include "ir/error.h"
#include "runtime/reference/interpreter.h"

namespace tessera::fuzz {
namespace {

using execute::KernelStatus;

Verdict verdict(Outcome o, std::string detail) {
  Verdict v;
  v.outcome = o;
  v.detail = std::move(detail);
  return v;
}

// "k1 [n3 Add, n4 Relu]": a kernel and the ops it holds, for a verdict's detail.
std::string describe(const Graph& g, const std::string& group, const std::vector<std::string>& nodeIds) {
  std::string s = group + " [";
  for (size_t i = 0; i < nodeIds.size(); ++i) {
    const Node* n = g.findNode(nodeIds[i]);
    s += (i ? ", " : "") + nodeIds[i] + " " + (n ? n->op() : "?");
  }
  return s + "]";
}

// The parameters a kernel takes: those of its first node with an entry, keeping the names of its template's
// space and values among their candidates; with drawParams, a random draw when no node has an entry.
kernel::TemplateParams paramsFor(const FuzzCase& c, const execute::CompiledKernel& k) {
  std::vector<kernel::TemplateParam> space = kernel::parameterSpace(k.kernel);
  for (const std::string& id : k.spec.nodeIds) {
    auto it = c.params.find(id);
    if (it == c.params.end()) continue;
    kernel::TemplateParams kept;
    for (const auto& p : space) {
      auto v = it->second.find(p.name);
      if (v != it->second.end() && std::find(p.candidates.begin(), p.candidates.end(), v->second) != p.candidates.end())
        kept[p.name] = v->second;
    }
    return kept;
  }
  kernel::TemplateParams drawn;
  if (!c.drawParams) return drawn;
  std::mt19937_64 rng(c.paramSeed ^ std::hash<std::string>{}(k.spec.nodeIds.front()));
  for (const auto& p : space)
    if (!p.candidates.empty() && std::bernoulli_distribution(0.6)(rng))
      drawn[p.name] = p.candidates[std::uniform_int_distribution<size_t>(0, p.candidates.size() - 1)(rng)];
  return drawn;
}

// Traces for every kernel from its parameters; a combination the template refuses keeps the defaults.
execute::ScheduleSet schedulesFor(const FuzzCase& c, const driver::KernelStage& stage, Verdict& v) {
  execute::ScheduleSet set;
  for (const auto& k : stage.model.kernels) {
    if (k.onHost()) continue;
    kernel::TemplateParams params = paramsFor(c, k);
    if (params.empty()) continue;
    try {
      set.traces[execute::ScheduleSet::keyOf(k.spec.nodeIds)] = kernel::traceWithParams(*stage.model.graph, k.spec, params);
      v.params[k.spec.nodeIds.front()] = params;
    } catch (const Error&) {
      ++v.refusedParams;
    }
  }
  return set;
}

// A kernel that could not be made: a gap in the lowering when it holds one node, a disagreement between fusion
// and lowering when fusion put several together.
Verdict notCompiled(const Graph& g, const std::string& group, const std::vector<std::string>& nodes, const std::string& why) {
  return verdict(nodes.size() > 1 ? Outcome::Refused : Outcome::Unsupported, describe(g, group, nodes) + ": " + why);
}

Verdict classify(const Graph& g, const execute::RunReport& r) {
  Verdict v;
  if (!r.ran) return verdict(Outcome::Error, "did not run: " + r.cannotRun);
  for (const auto& k : r.kernels) {
    std::string where = describe(g, k.group, k.nodes) + ": ";
    switch (k.status) {
      case KernelStatus::Ok: break;
      case KernelStatus::Mismatch: return verdict(Outcome::Mismatch, where + k.message);
      case KernelStatus::NotCompiled: return notCompiled(g, k.group, k.nodes, k.message);
      case KernelStatus::Failed: return verdict(Outcome::Failed, where + k.message);
      default: return verdict(Outcome::Error, where + "status " + execute::kernelStatusName(k.status) + " " + k.message);
    }
  }
  if (!r.outputsVerified) {
    std::string why;
    for (const auto& m : r.messages) why += (why.empty() ? "" : "; ") + m;
    return verdict(Outcome::Mismatch, "graph outputs not verified: " + why);
  }
  return v;
}

Verdict evaluateOrThrow(const FuzzCase& c, execute::BackendKind backend) {
  auto graph = std::make_shared<const Graph>(parseTsr(c.tsr, "case.tsr"));
  std::vector<Tensor> inputs = randomInputs(*graph, c.inputSeed);
  try {
    runReference(*graph, inputs);
  } catch (const Error& e) {
    return verdict(Outcome::Invalid, std::string("reference: ") + e.what());
  }
  driver::DriverOptions options;
  options.compile.overrides = c.overrides;
  options.useTuned = false;
  options.backend = backend;
  driver::Driver d(graph, options);
  std::shared_ptr<const CompileResult> compiled = d.compiled();
  if (!compiled->error.empty()) return verdict(Outcome::Error, "compile: " + compiled->error);
  std::shared_ptr<const driver::KernelStage> stage = d.kernels();
  Verdict drawn;
  for (const auto& k : stage->model.kernels)
    if (k.onHost()) return notCompiled(*stage->model.graph, k.spec.id, k.spec.nodeIds, k.placement.reason);
  d.setSchedules(schedulesFor(c, *stage, drawn));
  driver::RunRequest request;
  request.reps = 1;
  request.warmup = 0;
  request.inputs = inputs;
  request.baseline = false;
  std::shared_ptr<const driver::RunStage> run = d.run(request);
  if (!run->kernels->model.staleSchedules.empty())
    return verdict(Outcome::Error, "a trace from traceWithParams did not replay: " + run->kernels->model.staleSchedules.front());
  Verdict v = classify(*run->kernels->model.graph, run->report);
  v.params = drawn.params;
  v.refusedParams = drawn.refusedParams;
  v.kernels = int(run->kernels->model.kernels.size());
  for (const auto& k : run->kernels->model.kernels) v.fusedKernels += k.spec.nodeIds.size() > 1;
  return v;
}

// Reads the child's verdict until it closes the pipe or the time is up; false on time-out.
bool readUntil(int fd, std::string& out, std::chrono::steady_clock::time_point deadline) {
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, int(left.count())) <= 0) continue;
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return true;
    out.append(buf, size_t(n));
  }
}

}  // namespace

Verdict evaluateCase(const FuzzCase& c, execute::BackendKind backend) {
  try {
    return evaluateOrThrow(c, backend);
  } catch (const std::exception& e) {
    return verdict(Outcome::Error, e.what());
  }
}

Verdict evaluateIsolated(const FuzzCase& c, execute::BackendKind backend, double timeoutSeconds) {
  int fds[2];
  if (pipe(fds) != 0) fail(std::string("diff_fuzz: pipe: ") + std::strerror(errno));
  pid_t pid = fork();
  if (pid < 0) fail(std::string("diff_fuzz: fork: ") + std::strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);  // its compilers too are killed on a time-out
    close(fds[0]);
    std::string out = evaluateCase(c, backend).toJson().dump();
    for (size_t done = 0; done < out.size();) {
      ssize_t n = write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) break;
      done += size_t(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
  bool finished = readUntil(fds[0], out, std::chrono::time_point_cast<std::chrono::steady_clock::duration>(deadline));
  close(fds[0]);
  if (!finished) kill(-pid, SIGKILL), kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!finished) return verdict(Outcome::Timeout, "no verdict after " + std::to_string(int(timeoutSeconds)) + " s");
  if (WIFSIGNALED(status))
    return verdict(Outcome::Crash, std::string("killed by signal ") + strsignal(WTERMSIG(status)));
  nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  if (j.is_discarded()) return verdict(Outcome::Crash, "exited with status " + std::to_string(WEXITSTATUS(status)) + " and no verdict");
  return Verdict::fromJson(j);
}

}  // namespace tessera::fuzz
