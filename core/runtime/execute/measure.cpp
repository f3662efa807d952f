#include "runtime/execute/measure.h"

#include <cstring>
#include <map>
#include <unordered_map>

#include "ir/error.h"
#include "ops/stats.h"
#include "runtime/execute/backend.h"
#include "runtime/execute/index_record.h"
#include "runtime/execute/remote.h"
#include "runtime/reference/compare.h"
#include "runtime/reference/interpreter.h"

namespace tessera::execute {

std::string expectedName(Expected e) {
  return e == Expected::Reference ? "reference" : e == Expected::Model ? "model" : "";
}

namespace {

using kernel::BufferRole;

size_t bytesOf(const kernel::Buffer& b) { return size_t(numElements(b.shape)) * dtypeSize(b.dtype); }

// Generated source for each variant under its own entry name (the kernel id gets a _vN suffix).
std::vector<codegen::GeneratedKernel> generateAll(const std::vector<KernelVariant>& variants, codegen::Target target,
                                                  std::vector<VariantTiming>& out) {
  std::vector<codegen::GeneratedKernel> gen(variants.size());
  for (size_t i = 0; i < variants.size(); ++i) {
    kernel::Kernel k = variants[i].scheduled.clone();
    k.id += "_v" + std::to_string(i);
    try {
      gen[i] = codegen::generate(k, target);
    } catch (const std::exception& e) {
      out[i].status = KernelStatus::NotCompiled;
      out[i].message = std::string("codegen: ") + e.what();
    }
  }
  return gen;
}

using ValueMap = std::unordered_map<std::string, Tensor>;

// What one kernel's variants are compared with: the values its nodes produce, by name.
struct Expectation {
  Expected from = Expected::Nothing;
  ValueMap outputs;
  std::string error;  // why there are none
};

// Every value of one run of the model's own kernels on the backend: the inputs each variant runs on.
ValueMap modelValues(const CompiledModel& m, BackendKind backend, const MeasureOptions& o) {
  RunOptions ro;
  ro.reps = 1;
  ro.warmup = 0;
  ro.arch = o.arch;
  ro.remote = o.remote;
  ro.seed = o.seed;
  ro.verify = false;
  ro.keepValues = true;
  ro.timeWhole = false;
  ro.cancel = o.cancel;
  return executeModel(m, backend, ro).values;
}

// The reference interpreter's work for a kernel's nodes: FLOPs plus the elements they produce.
double referenceWork(const Graph& g, const kernel::KernelSpec& spec) {
  double work = 0;
  for (const std::string& id : spec.nodeIds)
    if (const Node* n = g.findNode(id)) {
      work += double(nodeFlops(*n));
      for (size_t i = 0; i < n->numOutputs(); ++i)
        if (n->output(i)) work += double(numElements(n->output(i)->shape()));
    }
  return work;
}

// Kernel k's expected outputs. The reference's also stand in for values the model's run lacks (fillMissing).
Expectation expectationFor(const CompiledModel& m, size_t k, ValueMap& values, const MeasureOptions& o) {
  const CompiledKernel& ck = m.kernels[k];
  Expectation e;
  try {
    if (o.referenceLimit < 0 || referenceWork(*m.graph, ck.spec) <= o.referenceLimit) {
      e.outputs = runReferenceNodes(*m.graph, ck.spec.nodeIds, values);
      for (const auto& [name, t] : e.outputs) values.emplace(name, t);
      e.from = Expected::Reference;
      return e;
    }
    for (const auto& b : ck.kernel.buffers)
      if (b.role == BufferRole::Output && values.count(b.value)) e.outputs[b.value] = values.at(b.value);
    e.from = Expected::Model;
  } catch (const std::exception& ex) {
    e.error = std::string("reference: ") + ex.what();
  }
  return e;
}

// A kernel the model's run could not run (not compiled, failed, after a stop) leaves its values unwritten: they
// come from the reference, as in a verified executeModel, so the kernels after it still have inputs (else their
// variants fail naming the value).
void fillMissing(const CompiledModel& m, size_t k, ValueMap& values) {
  bool missing = false;
  for (const std::string& id : m.kernels[k].spec.nodeIds)
    if (const Node* n = m.graph->findNode(id))
      for (size_t i = 0; i < n->numOutputs(); ++i) missing = missing || (n->output(i) && !values.count(n->output(i)->name()));
  if (!missing) return;
  try {
    for (auto& [name, t] : runReferenceNodes(*m.graph, m.kernels[k].spec.nodeIds, values)) values.emplace(name, t);
  } catch (const std::exception&) {
    // left missing: the variants that read them fail with a message naming the value
  }
}

// Runs variant i on its kernel's inputs from `values` and compares its outputs with `expected`.
void runVariant(detail::KernelBackend& be, size_t i, const kernel::Kernel& k, const codegen::GeneratedKernel& gen,
                const ValueMap& values, const Expectation& expected, const MeasureOptions& o, double cutoffMs,
                VariantTiming& t) {
  if (expected.from == Expected::Nothing) fail(expected.error.empty() ? "nothing to compare with" : expected.error);
  std::vector<std::vector<std::byte>> inputs;
  std::vector<std::pair<std::string, Tensor>> outputs;  // written in place by the backend (no copy to compare)
  std::vector<detail::ParamBuffer> params;
  for (const auto& b : k.buffers) {
    if (b.role == BufferRole::Temp) continue;
    if (b.role == BufferRole::Output) {
      outputs.emplace_back(b.value, Tensor(b.dtype, b.graphShape()));
      params.push_back({outputs.back().second.mutableBytes().data(), bytesOf(b), true, "", true});  // fresh: no value
      continue;
    }
    auto it = values.find(b.value);
    if (it == values.end()) fail("value '" + b.value + "' read by kernel " + k.id + " has no value (the model's run did not make it)");
    inputs.emplace_back(std::max<size_t>(bytesOf(b), 1));
    if (bytesOf(b) && b.packBlock) kernel::packBytes(b, it->second.bytes().data(), inputs.back().data(), dtypeSize(b.dtype));
    else if (bytesOf(b)) std::memcpy(inputs.back().data(), it->second.bytes().data(), bytesOf(b));
    params.push_back({inputs.back().data(), bytesOf(b), false, "", true});
  }
  detail::IndexRecord record(gen);
  record.appendTo(params);
  t.ms = be.run(i, params, 0, 1);
  record.throwIfSet();  // an index out of range: the variant failed
  t.pruned = cutoffMs > 0 && t.ms > cutoffMs;
  if (!t.pruned) t.ms = be.run(i, params, std::max(0, o.warmup - 1), o.reps);
  t.verified = true;
  for (const auto& [value, got] : outputs) {
    auto want = expected.outputs.find(value);
    if (want == expected.outputs.end()) {
      t.verified = false;
      t.message = "output '" + value + "': no expected value (the model's kernel did not run)";
      continue;
    }
    Comparison c = compareTensors(got, want->second);
    t.maxRelErr = std::max(t.maxRelErr, c.maxRelError);
    if (!c.ok) {
      t.verified = false;
      t.message = "output '" + value + "': " + c.message;
    }
  }
  t.status = t.verified ? KernelStatus::Ok : KernelStatus::Mismatch;
}

// Builds the generated variants; one whose build fails is NotCompiled with the builder's message.
void buildVariants(detail::KernelBackend& be, const std::vector<codegen::GeneratedKernel>& gen, MeasureReport& r) {
  std::vector<const codegen::GeneratedKernel*> ptrs(gen.size(), nullptr);
  for (size_t i = 0; i < gen.size(); ++i)
    if (r.timings[i].status != KernelStatus::NotCompiled) ptrs[i] = &gen[i];
  std::vector<detail::KernelBuild> builds = be.build(ptrs);
  for (size_t i = 0; i < ptrs.size(); ++i)
    if (ptrs[i] && !builds[i].error.empty()) {
      r.timings[i].status = KernelStatus::NotCompiled;
      r.timings[i].message = builds[i].error;
    }
}

// What each kernel with variants is compared with, found in model order (a kernel's inputs come first); the
// kernels between them only fill in the values they make.
std::map<size_t, Expectation> expectations(const CompiledModel& m, const std::vector<KernelVariant>& variants,
                                           ValueMap& values, const MeasureOptions& o, MeasureReport& r) {
  r.expected.assign(m.kernels.size(), Expected::Nothing);
  std::map<size_t, Expectation> expected;
  for (const auto& v : variants) expected[v.kernel];
  size_t last = expected.empty() ? 0 : expected.rbegin()->first;
  for (size_t k = 0; k <= last && !expected.empty(); ++k) {
    if (o.cancel.cancelled()) break;
    if (!expected.count(k)) {
      fillMissing(m, k, values);
      continue;
    }
    expected[k] = expectationFor(m, k, values, o);
    r.expected[k] = expected[k].from;
  }
  return expected;
}

// Times every built variant against its kernel's expectation; a variant slower than pruneFactor times its
// kernel's best verified one so far is timed once and marked pruned. Cancelled ones are marked so.
void timeVariants(detail::KernelBackend& be, const std::vector<KernelVariant>& variants,
                  const std::vector<codegen::GeneratedKernel>& gen, const ValueMap& values,
                  std::map<size_t, Expectation>& expected, const MeasureOptions& o, MeasureReport& r) {
  std::map<size_t, double> bestMs;  // per kernel, verified medians
  for (size_t i = 0; i < variants.size(); ++i) {
    VariantTiming& t = r.timings[i];
    auto best = bestMs.find(variants[i].kernel);
    double cutoff = o.pruneFactor > 0 && best != bestMs.end() ? o.pruneFactor * best->second : 0;
    if (o.cancel.cancelled()) {
      if (t.status == KernelStatus::NotRun) t.status = KernelStatus::Cancelled;
      continue;
    }
    if (t.status == KernelStatus::NotRun) {
      try {
        runVariant(be, i, variants[i].scheduled, gen[i], values, expected[variants[i].kernel], o, cutoff, t);
        if (t.verified && !t.pruned && (best == bestMs.end() || t.ms < best->second)) bestMs[variants[i].kernel] = t.ms;
      } catch (const Cancelled&) {
        t.status = KernelStatus::Cancelled;
      } catch (const std::exception& e) {
        t.status = KernelStatus::Failed;
        t.message = e.what();
      }
    }
    if (o.progress) o.progress(i + 1, variants.size());
  }
}

}  // namespace

MeasureReport measureVariants(const CompiledModel& m, const std::vector<KernelVariant>& variants, BackendKind backend,
                              const MeasureOptions& o) {
  if (backend == BackendKind::Reference) fail("measure: the reference backend runs no generated kernels (cpu, cuda)");
  MeasureReport r;
  r.timings.resize(variants.size());
  for (const auto& v : variants)
    if (v.kernel >= m.kernels.size()) fail("measure: kernel index " + std::to_string(v.kernel) + " is out of range");
  codegen::Target target = backend == BackendKind::Cuda ? codegen::Target::Cuda : codegen::Target::Cpu;
  auto be = detail::makeKernelBackend(backend, o.arch, o.remote, modcache::defaultModuleCache());
  r.device = be->device();
  std::vector<codegen::GeneratedKernel> gen = generateAll(variants, target, r.timings);
  be->cancel = o.cancel;
  buildVariants(*be, gen, r);
  r.cannotRun = be->cannotRun();
  if (!r.cannotRun.empty()) return r;
  ValueMap values;
  try {
    values = modelValues(m, backend, o);
  } catch (const Cancelled&) {
    for (VariantTiming& t : r.timings)
      if (t.status == KernelStatus::NotRun) t.status = KernelStatus::Cancelled;
    return r;
  }
  std::map<size_t, Expectation> expected = expectations(m, variants, values, o, r);
  timeVariants(*be, variants, gen, values, expected, o, r);
  return r;
}

}  // namespace tessera::execute
