// libFuzzer target for saved schedules (kernel schedule traces, a ScheduleSet's JSON, and template parameters
// in set_param steps). Any text must either load or throw tessera::Error; each loaded trace is replayed on
// fresh kernels of every template kind, and what replays is printed and generated as C++ and CUDA: a hostile
// trace is refused with a ScheduleError or Error, never a crash, a hang or an unbounded allocation.
#include <cstdint>
#include <string>

#include "codegen/codegen.h"
#include "frontend/text/tsr.h"
#include "ir/error.h"
#include "kernel/lower/lower.h"
#include "kernel/printer.h"
#include "kernel/schedule/trace.h"
#include "runtime/execute/compiled_model.h"

namespace {
// One group of each template kind (pointwise, row reduction, gemm, conv, pool, transpose, data movement).
const char* kGraph = R"(graph g {
  input %x: f32[4,8]
  input %w: f32[8,8]
  input %img: f32[1,2,6,6]
  input %k: f32[3,2,3,3]
  const %idx: i64[2] = [1, -1]
  node pw = Add(%x, %x) -> %p: f32[4,8]
  node sm = Softmax(%x) {axis=-1} -> %s: f32[4,8]
  node mm = MatMul(%x, %w) -> %m: f32[4,8]
  node cv = Conv(%img, %k) {pads=[1, 1, 1, 1]} -> %c: f32[1,3,6,6]
  node mp = MaxPool(%img) {kernel_shape=[2, 2], strides=[2, 2]} -> %q: f32[1,2,3,3]
  node tr = Transpose(%x) {perm=[1, 0]} -> %t: f32[8,4]
  node ga = Gather(%x, %idx) {axis=1} -> %g: f32[4,2]
  output %p, %s, %m, %c, %q, %t, %g
})";

const tessera::Graph& graph() {
  static const tessera::Graph g = tessera::parseTsr(kGraph, "schedule-fuzz.tsr");
  return g;
}

void replayOnEveryKind(const tessera::kernel::Trace& trace) {
  for (const char* id : {"pw", "sm", "mm", "cv", "mp", "tr", "ga"}) {
    tessera::kernel::KernelSpec spec{id, "", {id}, {}};
    tessera::kernel::Kernel k = tessera::kernel::lowerToLoops(graph(), spec);
    try {
      tessera::kernel::replay(k, trace);
      tessera::kernel::printKernel(k);
      tessera::codegen::generateCpp(k);
      tessera::codegen::generateCuda(k);
    } catch (const tessera::Error&) {
      // refused with a message: fine
    }
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    tessera::execute::ScheduleSet set = tessera::execute::ScheduleSet::load(text);
    for (const auto& [key, trace] : set.traces) replayOnEveryKind(trace);
  } catch (const tessera::Error&) {
  }
  try {
    replayOnEveryKind(tessera::kernel::Trace::load(text));  // a single trace, as the Schedule panel saves one
  } catch (const tessera::Error&) {
  }
  return 0;
}
