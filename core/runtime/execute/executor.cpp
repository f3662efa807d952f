#include "runtime/execute/executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <future>
#include <set>

#include "ir/error.h"
#include "ir/fnv.h"
#include "ops/registry.h"
#include "ops/stats.h"
#include "runtime/execute/arena.h"
#include "runtime/execute/backend.h"
#include "runtime/execute/host_group.h"
#include "runtime/execute/index_record.h"
#include "runtime/execute/memory_limit.h"
#include "runtime/execute/remote.h"
#include "runtime/reference/compare.h"
#include "runtime/reference/interpreter.h"

namespace tessera::execute {

BackendKind parseBackend(const std::string& name) {
  if (name == "reference") return BackendKind::Reference;
  if (name == "cpu") return BackendKind::Cpu;
  if (name == "cuda") return BackendKind::Cuda;
  fail("unknown backend '" + name + "' (reference, cpu, cuda)");
}

namespace {

using kernel::BufferRole;
using detail::Arena;
using detail::bufferBytes;

bool isGraphOutput(const Graph& g, const std::string& value) {
  for (const Value* v : g.outputs())
    if (v->name() == value) return true;
  return false;
}

modcache::ModuleCache moduleCacheFor(const RunOptions& o) {
  if (!o.moduleCache) return modcache::ModuleCache();
  return o.moduleCacheDir.empty() ? modcache::defaultModuleCache() : modcache::ModuleCache(o.moduleCacheDir);
}

// Builds every generated kernel; what each build says goes into its report, and cache warnings into messages
// (a cache that cannot be written says so once, not once per kernel).
void buildKernels(detail::KernelBackend& be, const std::vector<const codegen::GeneratedKernel*>& gen, RunReport& r) {
  std::vector<detail::KernelBuild> builds = be.build(gen);
  bool toldNotStored = false;
  for (size_t i = 0; i < gen.size(); ++i) {
    if (!gen[i]) continue;
    KernelReport& kr = r.kernels[i];
    kr.cached = builds[i].cached;
    kr.compileMs = builds[i].compileMs;
    const std::string& w = builds[i].warning;
    bool notStored = w.rfind("module not cached", 0) == 0;
    if (!w.empty() && !(notStored && toldNotStored)) r.messages.push_back("kernel " + kr.group + ": " + w);
    toldNotStored = toldNotStored || notStored;
    if (!builds[i].error.empty()) kr.message = builds[i].error;
    else kr.status = KernelStatus::NotRun;
  }
}

int64_t groupFlops(const Graph& g, const kernel::KernelSpec& spec) {
  int64_t f = 0;
  for (const auto& id : spec.nodeIds)
    if (Node* n = g.findNode(id)) f += nodeFlops(*n);
  return f;
}

void runReferenceBackend(const CompiledModel& m, const std::vector<Tensor>& inputs, const RunOptions& o, RunReport& r) {
  ReferenceResult res;
  double ms = 0;
  for (int i = 0; i < std::max(1, o.reps); ++i) {
    auto start = std::chrono::steady_clock::now();
    ReferenceOptions ro;
    ro.cancel = o.cancel;
    res = runReference(*m.graph, inputs, ro);
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  r.ran = true;
  r.totalMs = ms;
  r.outputs = res.outputs;
  r.outputsVerified = true;
}

// Values made from tf32-rounded products: a kernel's rounding reaches the kernels after it, so a kernel that reads
// such a value (and every graph output made of one) is checked at tf32's tolerance too.
void noteRounded(const kernel::Kernel& k, const KernelReport& kr, std::set<std::string>& rounded) {
  bool reads = false;
  for (const auto& b : k.buffers) reads = reads || (b.role == BufferRole::Input && rounded.count(b.value));
  if (kr.precision != "tf32" && !reads) return;
  for (const auto& b : k.buffers)
    if (b.role == BufferRole::Output) rounded.insert(b.value);
}

// What every kernel's turn in a run shares.
struct RunState {
  const CompiledModel& m;
  const RunOptions& o;
  const ReferenceResult& ref;
  Arena& arena;
  std::set<std::string> rounded;     // noteRounded
  std::set<std::string> inherited;   // values a kernel made right from inputs that already differed (checkOutputs)
  std::set<std::string> readOnHost;  // by host groups: a device backend leaves them on the host too
};

// Kernel `ck`'s outputs against `expected` (by value): "" when they agree, else the first difference; the worst
// errors go into `kr`.
std::string compareOutputs(const CompiledKernel& ck, RunState& s, const std::unordered_map<std::string, Tensor>& expected,
                           KernelReport* kr) {
  std::string why;
  for (const auto& b : ck.kernel.buffers) {
    if (b.role != BufferRole::Output) continue;
    auto it = expected.find(b.value);
    if (it == expected.end()) continue;
    Comparison c = compareTensors(s.arena.view(b.value), it->second,
                                  toleranceFor(b.dtype, s.rounded.count(b.value) ? "tf32" : ""));
    if (kr) kr->maxRelErr = std::max(kr->maxRelErr, c.maxRelError), kr->maxAbsErr = std::max(kr->maxAbsErr, c.maxAbsError);
    if (!c.ok && why.empty()) why = "output '" + b.value + "': " + c.message;
  }
  return why;
}

// The reference's outputs of `ck`'s nodes on the inputs this run gave the kernel (what the kernels before it left).
std::unordered_map<std::string, Tensor> referenceOnOwnInputs(const CompiledKernel& ck, RunState& s) {
  std::unordered_map<std::string, Tensor> values;
  for (const auto& b : ck.kernel.buffers)
    if (b.role == BufferRole::Input && s.arena.find(b.value)) values[b.value] = s.arena.read(b.value);
  return runReferenceNodes(*s.m.graph, ck.spec.nodeIds, values, s.o.cancel);
}

// Checks a kernel's outputs against the reference run's (at tf32's tolerance for values in `rounded`): Ok or
// Mismatch, with the worst errors; Unchecked without a reference. A kernel that differs from the reference run
// is checked again on its own inputs: when it agrees there, its inputs already differed (rounding before it,
// which an ill-conditioned op amplifies: a softmax over logits near 5e9, one ulp apart, gives 1/750 for 1/1000),
// so it is Ok, saying how far the reference run is, and its outputs are `inherited`.
void checkOutputs(const CompiledKernel& ck, RunState& s, KernelReport& kr) {
  if (!s.o.verify) {
    kr.status = KernelStatus::Unchecked;
    return;
  }
  const std::string why = compareOutputs(ck, s, s.ref.values, &kr);
  kr.verified = why.empty();
  if (!kr.verified && compareOutputs(ck, s, referenceOnOwnInputs(ck, s), nullptr).empty()) {
    kr.verified = true;
    kr.message = "agrees with the reference on its own inputs, which already differed from the reference run's "
                 "(rounding before it, amplified here); against the reference run: " + why;
    for (const auto& b : ck.kernel.buffers)
      if (b.role == BufferRole::Output) s.inherited.insert(b.value);
  } else if (!kr.verified) {
    kr.message = why;
  }
  kr.status = kr.verified ? KernelStatus::Ok : KernelStatus::Mismatch;
}

// The rates of a kernel that ran: its buffers' bytes and its nodes' FLOPs over its time.
void fillRates(const CompiledModel& m, size_t i, KernelReport& kr) {
  size_t bytes = 0;
  for (const auto& b : m.kernels[i].kernel.buffers)
    if (b.role != BufferRole::Temp) bytes += bufferBytes(b);
  double s = std::max(kr.ms, 1e-6) / 1e3;
  kr.gbps = static_cast<double>(bytes) / s / 1e9;
  kr.gflops = static_cast<double>(groupFlops(*m.graph, m.kernels[i].spec)) / s / 1e9;
}

// Runs one kernel, times it and checks its outputs; on failure the reference's values stand in.
void runKernel(detail::KernelBackend& be, size_t i, RunState& s, const codegen::GeneratedKernel& gen, KernelReport& kr) {
  // Outputs nothing on the host reads (unchecked, not kept, not a graph output, no host group's input) may stay
  // on the device.
  auto hostReads = [&](const std::string& value) {
    return s.o.verify || s.o.keepValues || isGraphOutput(*s.m.graph, value) || s.readOnHost.count(value);
  };
  const kernel::Kernel& k = s.m.kernels[i].kernel;
  std::vector<detail::ParamBuffer> params;
  for (const auto& b : k.buffers) {
    if (b.role == BufferRole::Temp) continue;
    bool out = b.role == BufferRole::Output;
    void* p = out ? s.arena.place(b.value, bufferBytes(b), i) : s.arena.input(b);
    if (!p) fail("value '" + b.value + "' read by kernel " + k.id + " was never written");
    params.push_back({p, bufferBytes(b), out, detail::readName(b), out && hostReads(b.value)});
  }
  detail::IndexRecord record(gen);
  record.appendTo(params);
  kr.ms = be.run(i, params, s.o.warmup, s.o.reps);
  record.throwIfSet();  // an index out of range: the kernel failed (its accesses were kept inside the buffers)
  fillRates(s.m, i, kr);
  checkOutputs(s.m.kernels[i], s, kr);
}

// A host group's turn: the reference's semantics on what the kernels before it left, timed and checked as a
// kernel's outputs are.
void runHost(size_t i, RunState& s, KernelReport& kr) {
  kr.ms = detail::runHostGroup(s.m, i, s.arena, s.o.cancel);
  fillRates(s.m, i, kr);
  checkOutputs(s.m.kernels[i], s, kr);
}

// Every value the group's nodes produce, from the reference (by the group's node ids, internal values too): the
// stand-ins for a kernel that failed or was not compiled.
void fillFromReference(const Graph& g, const CompiledKernel& ck, size_t i, Arena& arena, const ReferenceResult& ref) {
  for (const std::string& id : ck.spec.nodeIds)
    if (const Node* n = g.findNode(id))
      for (size_t o = 0; o < n->numOutputs(); ++o)
        if (const Value* v = n->output(o); v && ref.values.count(v->name()))
          arena.set(v->name(), ref.values.at(v->name()), i);
}

// Copies what kernel i wrote (its outputs, or the reference's stand-ins) before a later kernel reuses the memory.
void keepOutputs(const CompiledKernel& ck, Arena& arena, RunReport& r) {
  for (const auto& b : ck.kernel.buffers)
    if (b.role == BufferRole::Output && arena.find(b.value)) r.values[b.value] = arena.read(b.value);
}

std::unique_ptr<detail::KernelBackend> makeBackend(BackendKind backend, const RunOptions& o) {
  std::unique_ptr<detail::KernelBackend> be = detail::makeKernelBackend(backend, o.arch, o.remote, moduleCacheFor(o));
  be->cancel = o.cancel;
  be->setTimeBudget(o.kernelBudgetMs);
  return be;
}

// A run's backend and, when the options name a RunSession, its slot there: the backend kept from the driver's
// last run of the same kind (or a new one), and whether that run left this model's constant zone in its memory.
// On leaving, the backend goes back to the slot if it can be kept; the zone counts as kept only if the run
// reached keepZone().
class SessionBackend {
 public:
  SessionBackend(BackendKind backend, const RunOptions& o) : o_(o) {
    key_ = std::to_string(int(backend)) + "|" + o.arch + "|" + o.remote + "|" + moduleCacheFor(o).dir() + "|" + o.sessionSlot;
    if (o.session) kept_ = o.session->take(key_);
    if (kept_ && kept_->backend) {
      be_ = std::move(kept_->backend);
      be_->cancel = o.cancel;
      be_->setTimeBudget(o.kernelBudgetMs);
    } else {
      be_ = makeBackend(backend, o);
    }
    if (!kept_) kept_ = std::make_unique<RunSession::Kept>();
  }
  ~SessionBackend() {
    if (!o_.session || !be_->keptBetweenRuns()) return;
    kept_->backend = std::move(be_);
    o_.session->put(key_, std::move(kept_));
  }
  detail::KernelBackend& operator*() { return *be_; }
  detail::KernelBackend* operator->() { return be_.get(); }

  // The arena's block for `zone` of `graph`: the backend's resident memory, keeping the zone where the last run
  // left this model's constants there (`kept`: the values it placed there, else null), else zeroed whole. Null
  // for a backend without one. Forgets the last run's zone either way: it counts again only once this run keeps it.
  std::byte* block(size_t bytes, const std::shared_ptr<const Graph>& graph, const detail::ConstantZone& zone,
                   const std::set<std::string>*& kept) {
    const bool same = be_->keptBetweenRuns() && kept_->graph && kept_->graph == graph && kept_->zoneSignature == zone.signature;
    const std::byte* last = kept_->block;
    kept_->graph = nullptr;
    std::byte* block = be_->residentMemory(bytes, same ? zone.bytes : 0);
    kept = same && block && block == last ? &kept_->zoneValues : nullptr;
    if (same && !kept && block) block = be_->residentMemory(bytes);  // moved: the zone is not there
    return block;
  }
  void keepZone(const std::shared_ptr<const Graph>& graph, const detail::ConstantZone& zone, const Arena& arena,
                const std::byte* block) {
    kept_->graph = graph;
    kept_->zoneSignature = zone.signature;
    kept_->zoneValues = arena.zoneValues();
    kept_->block = block;
  }

 private:
  const RunOptions& o_;
  std::string key_;
  std::unique_ptr<RunSession::Kept> kept_;
  std::unique_ptr<detail::KernelBackend> be_;
};

// What names a run's inputs for a kept reference: the seed they were drawn from, else a hash of the given ones;
// "" for inputs it cannot name.
std::string inputsKeyOf(const RunOptions& o, const std::vector<Tensor>& inputs) {
  if (o.inputs.empty()) return "seed " + std::to_string(o.seed);
  std::string all;
  for (const Tensor& t : inputs) {
    if (t.dtype() == DType::String) return "";  // its elements are not its bytes: never reused
    all += std::string(dtypeName(t.dtype())) + shapeToString(t.shape()) + ";";
    const auto b = t.bytes();
    all += fnv1a64Hex(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
  }
  return "inputs " + fnv1a64Hex(all);
}

// Generates every kernel's source. One that could not be generated stays NotCompiled with the reason in its
// message (and a null entry in what is returned); a host group has a null entry too, ready to run.
std::vector<const codegen::GeneratedKernel*> generateKernels(const CompiledModel& m, codegen::Target target,
                                                             const RunOptions& o, RunReport& r) {
  r.kernels.resize(m.kernels.size());
  r.generated.resize(m.kernels.size());
  std::vector<const codegen::GeneratedKernel*> gen(m.kernels.size(), nullptr);
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const CompiledKernel& ck = m.kernels[i];
    KernelReport& kr = r.kernels[i];
    kr.group = ck.spec.id;
    kr.nodes = ck.spec.nodeIds;
    kr.status = KernelStatus::NotCompiled;
    if (ck.onHost()) {  // nothing to generate: the reference's semantics run it (runHost)
      kr.host = hostRuleName(ck.placement.rule) + ": " + ck.placement.reason;
      kr.status = KernelStatus::NotRun;
      continue;
    }
    try {
      r.generated[i] = codegen::generate(ck.kernel, target);
      kr.entry = r.generated[i].entry;
      kr.precision = r.generated[i].precision;
      gen[i] = &r.generated[i];
    } catch (const std::exception& e) {
      kr.message = std::string("codegen: ") + e.what();
    }
  }
  if (o.predictMs) predictKernels(m, o.predictMs, r);
  return gen;
}

// A host group nothing can run (an op unknown to Tessera) ends the run there: it fails naming the node, and the
// kernels after it are not run.
void stopAt(size_t i, const CompiledModel& m, RunReport& r) {
  r.stopped = "the run stopped before kernel " + m.kernels[i].spec.id + ": " + m.kernels[i].placement.reason;
  r.kernels[i].status = KernelStatus::Failed;
  r.kernels[i].message = m.kernels[i].placement.reason;
  r.messages.push_back(r.stopped);
  for (size_t j = i + 1; j < r.kernels.size(); ++j) {
    r.kernels[j].status = KernelStatus::NotRun;
    r.kernels[j].message = "not run: the run stopped before kernel " + m.kernels[i].spec.id;
  }
}

// Why kernel i, built for the graph's extents, cannot run on this run's values: an input a data-dependent node
// upstream gave other extents than the sample the model was specialized on (Arena::otherType); "" when it can.
std::string otherExtents(const CompiledKernel& ck, const Arena& arena) {
  for (const auto& b : ck.kernel.buffers)
    if (b.role == BufferRole::Input)
      if (std::optional<TensorType> t = arena.otherType(b.value))
        return "input '" + b.value + "' is " + t->toString() + " on this run, not the " +
               TensorType{b.dtype, b.shape}.toString() + " the kernel was built for (an extent that follows the "
               "data of a node before it): its nodes ran on the host with this run's extents";
  return "";
}

// Runs the built kernels and the host groups in order. A kernel that failed or was never built gets the
// reference's values in its place, so the kernels after it can still run. A kernel of constants is timed, but
// its time goes to onceMs, not the total.
void runKernels(detail::KernelBackend& be, RunState& s, RunReport& r) {
  const CompiledModel& m = s.m;
  const std::vector<bool>& once = s.arena.constantKernels();
  std::string sentToHost;  // kernels built for other extents than this run's values gave
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    KernelReport& kr = r.kernels[i];
    kr.once = once[i];
    bool ran = false;
    s.o.cancel.check();
    if (m.kernels[i].onHost() && !m.kernels[i].placement.runs()) return stopAt(i, m, r);
    if (kr.status == KernelStatus::NotRun) {
      try {
        noteRounded(m.kernels[i].kernel, kr, s.rounded);
        if (std::string why = otherExtents(m.kernels[i], s.arena); !why.empty())
          kr.host = why, sentToHost += (sentToHost.empty() ? "" : ", ") + kr.group;
        if (m.kernels[i].onHost() || !kr.host.empty()) runHost(i, s, kr);
        else runKernel(be, i, s, r.generated[i], kr);
        (kr.once ? r.onceMs : r.totalMs) += kr.ms;
        ran = true;
      } catch (const Cancelled&) {
        throw;
      } catch (const std::exception& e) {
        kr.status = KernelStatus::Failed;
        kr.message = e.what();
        r.messages.push_back("kernel " + kr.group + ": " + kr.message);
      }
    }
    if (!ran) fillFromReference(*m.graph, m.kernels[i], i, s.arena, s.ref);
    if (s.o.keepValues && (ran || s.o.verify)) keepOutputs(m.kernels[i], s.arena, r);  // a failed kernel's are garbage
  }
  if (!sentToHost.empty())
    r.messages.push_back("data-dependent extents: this run's values gave other extents than the model was specialized "
                         "to, so kernels built for those ran on the host: " + sentToHost);
}

// Kernel i's parameters for a whole run: its named values where the arena holds them, and a zeroed error record.
// The graph's outputs come back, so what the run reports and verifies is the whole run's.
std::vector<detail::ParamBuffer> wholeRunParams(size_t i, RunState& s, const codegen::GeneratedKernel& gen,
                                                std::deque<detail::IndexRecord>& records) {
  std::vector<detail::ParamBuffer> params;
  for (const auto& b : s.m.kernels[i].kernel.buffers)
    if (b.role != BufferRole::Temp)
      params.push_back({s.arena.input(b), bufferBytes(b), b.role == BufferRole::Output, detail::readName(b),
                        b.role == BufferRole::Output && isGraphOutput(*s.m.graph, b.value)});
  records.emplace_back(gen).appendTo(params);
  return params;
}

// The whole run timed as one (KernelBackend::runWhole), once every kernel ran cleanly on its own. Host code
// between kernels is no part of a run on the device, so a run with a host group is not timed as a whole. The
// constant kernels are left out, as in the total: what they made stays where they left it (the arena gives
// their values memory of their own).
void timeWholeRun(detail::KernelBackend& be, RunState& s, RunReport& r) {
  std::vector<size_t> order;
  std::vector<std::vector<detail::ParamBuffer>> params;
  std::deque<detail::IndexRecord> records;
  for (size_t i = 0; i < r.kernels.size(); ++i) {
    const KernelReport& kr = r.kernels[i];
    if (kr.once) continue;
    if (kr.status != KernelStatus::Ok && kr.status != KernelStatus::Unchecked)
      return void(r.wholeNote = "not timed as a whole: kernel " + kr.group + " did not run cleanly");
    if (kr.onHost())
      return void(r.wholeNote = "not timed as a whole: host group " + kr.group + " runs on the host between kernels");
    order.push_back(i);
    params.push_back(wholeRunParams(i, s, r.generated[i], records));
  }
  if (order.empty()) return void(r.wholeNote = "not timed as a whole: no kernel runs on every call");
  detail::KernelBackend::WholeRunTimes t = be.runWhole(order, params, s.o.warmup, s.o.reps);
  r.wholeMs = t.launchedMs;
  r.graphMs = t.graphMs;
  r.wholeNote = t.note;
}

// The graph's outputs as the kernels left them, each checked against the reference's (at tf32's tolerance for
// one made of tf32-rounded values); the outputs are verified only when every kernel is Ok too.
void collectOutputs(RunState& s, RunReport& r) {
  const Graph& g = *s.m.graph;
  r.outputsVerified = s.o.verify && r.stopped.empty();
  for (const Value* out : g.outputs()) {
    if (!s.arena.find(out->name())) {  // unverified: a kernel before it failed and no reference stands in
      const std::string why = r.stopped.empty() ? "a kernel before it failed" : r.stopped;
      r.messages.push_back("graph output '" + out->name() + "': not made (" + why + "), zeros in its place");
      r.outputs.emplace_back(out->dtype(), out->shape());
      r.outputsVerified = false;
      continue;
    }
    Tensor t = s.arena.read(out->name());
    std::string precision = s.rounded.count(out->name()) ? "tf32" : "";
    auto expected = s.ref.values.find(out->name());
    bool checkable = s.o.verify && expected != s.ref.values.end();
    Comparison c = checkable ? compareTensors(t, expected->second, toleranceFor(t.dtype(), precision)) : Comparison{};
    if (!c.ok && s.inherited.count(out->name())) {  // every kernel agrees on its own inputs (checkOutputs)
      r.messages.push_back("graph output '" + out->name() + "' differs from the reference run (" + c.message +
                           "): rounding before, amplified by a kernel after it; each kernel agrees with the reference on its own inputs");
    } else if (!c.ok) {
      r.outputsVerified = false;
      r.messages.push_back("graph output '" + out->name() + "': " + c.message);
    }
    r.outputs.push_back(std::move(t));
  }
  for (const auto& k : r.kernels)
    if (k.status != KernelStatus::Ok) r.outputsVerified = false;
}

// A run whose device buffers would not fit in the device's free memory is refused before anything is built.
void checkDeviceMemory(const detail::KernelBackend& be, const CompiledModel& m,
                       const std::vector<const codegen::GeneratedKernel*>& gen, const RunOptions& o) {
  uint64_t free = be.freeDeviceBytes();
  if (!o.memoryLimit.checkDevice || free == 0) return;
  uint64_t need = deviceBytesNeeded(m, gen);
  if (need > free)
    fail("run needs " + formatBytes(need) + " of device memory (buffers and workspaces); " + be.device() + " has " +
         formatBytes(free) + " free");
}

}  // namespace

RunReport executeModel(const CompiledModel& m, BackendKind backend, const RunOptions& o) {
  RunReport r;
  const Graph& g = *m.graph;
  std::vector<Tensor> inputs = o.inputs.empty() ? randomInputs(g, o.seed) : o.inputs;
  r.backend = backend == BackendKind::Reference ? "reference" : backend == BackendKind::Cpu ? "cpu" : "cuda";
  if (backend == BackendKind::Reference) {
    r.device = "host (reference interpreter)";
    runReferenceBackend(m, inputs, o, r);
    return r;
  }
  checkHostMemory(m, backend, o, false);
  SessionBackend be(backend, o);
  r.device = be->device();
  r.worker = o.remote;
  auto buildStart = std::chrono::steady_clock::now();
  codegen::Target target = backend == BackendKind::Cuda ? codegen::Target::Cuda : codegen::Target::Cpu;
  std::vector<const codegen::GeneratedKernel*> gen = generateKernels(m, target, o, r);
  checkDeviceMemory(*be, m, gen, o);
  // The reference runs while the kernels build: on a GPU machine the compiles leave the host's cores idle, and
  // on the host the last compiles leave some. Its values are needed only once the kernels run. A session's last
  // run of the same graph on the same inputs left it: a repeat, or new schedules, need not run it again.
  const std::string inputsKey = inputsKeyOf(o, inputs);
  std::shared_ptr<const ReferenceResult> keptReference =
      o.verify && o.session ? o.session->reference(m.graph, inputsKey) : nullptr;
  std::future<ReferenceResult> reference;
  if (o.verify && !keptReference && be->cannotRun().empty()) reference = std::async(std::launch::async, [&g, &inputs, &o] {
      ReferenceOptions ro;
      ro.keepAll = true;
      ro.cancel = o.cancel;
      ro.stopWithoutSemantics = true;  // up to the node the run stops before (runKernels)
      return runReference(g, inputs, ro);
    });
  buildKernels(*be, gen, r);
  o.cancel.check();  // a killed compiler reports an error per kernel; the run is cancelled, not failed
  r.buildMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - buildStart).count();
  for (const auto& k : r.kernels)
    if (k.status == KernelStatus::NotCompiled) r.messages.push_back("kernel " + k.group + ": " + k.message);
  r.cannotRun = be->cannotRun();
  if (!r.cannotRun.empty()) {
    r.messages.push_back(r.cannotRun);
    return r;
  }
  if (keptReference) {
    r.messages.push_back(kKeptReferenceNote);
  } else if (reference.valid()) {
    keptReference = std::make_shared<const ReferenceResult>(reference.get());
    if (o.session) o.session->keepReference(m.graph, inputsKey, keptReference);
  }
  static const ReferenceResult kNoReference;
  const ReferenceResult& ref = keptReference ? *keptReference : kNoReference;
  const size_t arenaSize = detail::arenaBytes(g, m.kernels);
  const detail::ConstantZone zone = detail::constantZone(g, m.kernels);
  const std::set<std::string>* kept = nullptr;
  std::byte* block = be.block(arenaSize, m.graph, zone, kept);
  Arena arena(g, inputs, m.kernels, block, arenaSize, &zone, kept);
  if (o.keepValues) {
    for (size_t i = 0; i < g.inputs().size() && i < inputs.size(); ++i) r.values[g.inputs()[i]->name()] = inputs[i];
    for (Value* v : g.initializers()) r.values[v->name()] = *v->initializer();
  }
  RunState state{m, o, ref, arena, {}, {}, detail::valuesReadOnHost(m)};
  runKernels(*be, state, r);
  r.ran = true;
  if (r.stopped.empty() && o.timeWhole) {
    try {
      timeWholeRun(*be, state, r);
    } catch (const Cancelled&) {
      throw;
    } catch (const std::exception& e) {  // each kernel's time stands; only the whole run's is missing
      r.wholeNote = std::string("not timed as a whole: ") + e.what();
    }
  }
  collectOutputs(state, r);
  r.keptBytes = double(arena.keptBytes());
  // A kernel that failed or disagreed may have written anywhere in the block (a crash mid-store, an index out of
  // range): the next run copies the constants in again. Of a clean run, the next finds only what this one placed
  // (a packed copy is made when its kernel first runs).
  if (std::none_of(r.kernels.begin(), r.kernels.end(), [](const KernelReport& k) {
        return k.status == KernelStatus::Failed || k.status == KernelStatus::Mismatch;
      }))
    be.keepZone(m.graph, zone, arena, block);
  return r;
}

RunReport executeBaseline(const CompiledModel& m, BackendKind backend, const RunOptions& o) {
  kernel::KernelSpec first = m.kernels.empty() ? kernel::KernelSpec{} : m.kernels.front().spec;
  CompiledModel base = compileKernels(m.graph, unfusedGroups(*m.graph, first.tf32, first.machine));
  RunOptions baseOptions = o;
  baseOptions.sessionSlot = o.sessionSlot + " baseline";  // its own worker and constants, beside the model's
  return executeModel(base, backend, baseOptions);
}

void addBaseline(RunReport& r, const RunReport& b) {
  if (b.ran) r.baselineTotalMs = b.totalMs;
  for (const auto& msg : b.messages)
    if (msg != kKeptReferenceNote) r.messages.push_back("baseline: " + msg);
}

RunReport executeWithBaseline(const CompiledModel& m, BackendKind backend, const RunOptions& o) {
  if (backend != BackendKind::Reference) checkHostMemory(m, backend, o, true);
  RunReport r = executeModel(m, backend, o);
  if (backend == BackendKind::Reference || !r.ran || !r.stopped.empty()) return r;  // a stopped run has no total
  addBaseline(r, executeBaseline(m, backend, o));
  return r;
}

void predictKernels(const CompiledModel& m, const std::function<double(const Graph&, const kernel::Kernel&)>& predictMs,
                    RunReport& r) {
  for (size_t i = 0; i < m.kernels.size() && i < r.kernels.size(); ++i)
    if (!m.kernels[i].onHost()) r.kernels[i].predictedMs = predictMs(*m.graph, m.kernels[i].kernel);
}

}  // namespace tessera::execute
