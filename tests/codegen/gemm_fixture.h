#pragma once
// The one-gemm model the code generator tests share, and its kernel scheduled by the gemm template with chosen
// parameters (as a saved schedule, a user's override, is).
#include <string>

#include "frontend/text/tsr.h"
#include "kernel/templates/templates.h"
#include "runtime/execute/executor.h"
#include "runtime/execute/from_fusion.h"

namespace tessera::testing {

// relu(a·b + c) in one gemm kernel, a: t[m, k], b: t[k, n].
inline CompileResult gemmModel(const std::string& t, int m, int k, int n) {
  std::string text = "graph g {\n  input %a: " + t + "[" + std::to_string(m) + "," + std::to_string(k) + "]\n  input %b: " + t +
                     "[" + std::to_string(k) + "," + std::to_string(n) + "]\n  input %c: " + t + "[" + std::to_string(n) +
                     "]\n  node mm = MatMul(%a, %b) -> %p\n  node add = Add(%p, %c) -> %q\n  node act = Relu(%q) -> %y\n"
                     "  output %y\n}\n";
  return compileGraph(parseTsr(text), CompileOptions{});
}

// The model's one kernel scheduled by the template with `params`.
inline execute::ScheduleSet scheduleWith(const CompileResult& cr, const kernel::TemplateParams& params) {
  execute::CompiledModel m = execute::compileKernels(cr, nullptr);
  execute::ScheduleSet set;
  set.traces[execute::ScheduleSet::keyOf(m.kernels[0].spec.nodeIds)] = kernel::traceWithParams(*m.graph, m.kernels[0].spec, params);
  return set;
}

// One timed repetition, no warm-up: a correctness run.
inline execute::RunOptions once() {
  execute::RunOptions o;
  o.reps = 1;
  o.warmup = 0;
  return o;
}

// A run's messages and each kernel's status, for a failed check's text.
inline std::string messages(const execute::RunReport& r) {
  std::string out;
  for (const auto& m : r.messages) out += m + "; ";
  for (const auto& k : r.kernels) out += execute::kernelStatusName(k.status) + " " + k.message + "; ";
  return out;
}

inline execute::CompiledModel withParams(const CompileResult& cr, const kernel::TemplateParams& params) {
  execute::ScheduleSet set = scheduleWith(cr, params);
  return execute::compileKernels(cr, &set);
}

}  // namespace tessera::testing
