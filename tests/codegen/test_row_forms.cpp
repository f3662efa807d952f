// The row-reduction template's forms beyond the plain passes: online softmax (online = 1: the max and the sum
// of exp(x - max) in one pass over a (max, sum) pair) and the row kept in each thread's registers
// (cache_row = 2). Each form of softmax, log-softmax and layernorm generates CUDA that NVRTC compiles for sm_90
// (the register copy staying in registers: no local memory in the PTX), and runs verified on the cpu backend
// (and on the GPU when there is one).
#include <QtTest>

#include "codegen/codegen.h"
#include "frontend/text/tsr.h"
#include "kernel/printer.h"
#include "kernel/templates/templates.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "runtime/execute/executor.h"
#include "runtime/execute/from_fusion.h"

using namespace tessera;
using namespace tessera::kernel;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string rowModel(const std::string& op, int64_t rows, int64_t cols) {
  std::string shape = "f32[" + std::to_string(rows) + "," + std::to_string(cols) + "]";
  std::string c = std::to_string(cols);
  if (op == "LayerNormalization")
    return "graph g {\n  input %x: " + shape + "\n  input %s: f32[" + c + "]\n  input %b: f32[" + c +
           "]\n  node n = LayerNormalization(%x, %s, %b) {axis=-1, epsilon=1e-05} -> %y\n  output %y\n}\n";
  return "graph g {\n  input %x: " + shape + "\n  node n = " + op + "(%x) {axis=-1} -> %y\n  output %y\n}\n";
}

// The model's one kernel scheduled with `params` (a saved schedule, as an override or the tuner gives it).
execute::CompiledModel withParams(const std::string& tsr, const TemplateParams& params) {
  CompileResult compiled = compileGraph(parseTsr(tsr), CompileOptions{});
  execute::CompiledModel plain = execute::compileKernels(compiled, nullptr);
  execute::ScheduleSet set;
  for (const auto& ck : plain.kernels)
    set.traces[execute::ScheduleSet::keyOf(ck.spec.nodeIds)] = traceWithParams(*plain.graph, ck.spec, params);
  execute::CompiledModel m = execute::compileKernels(compiled, &set);
  for (const auto& ck : m.kernels) {
    if (ck.onHost()) qInfo("%s", ck.placement.reason.c_str());
    if (!ck.replayed) QTest::qFail("the schedule did not replay", __FILE__, __LINE__);
  }
  return m;
}

const Kernel& rowKernel(const execute::CompiledModel& m) {
  for (const auto& ck : m.kernels)
    if (ck.kernel.kind == "reduction") return ck.kernel;
  return m.kernels.front().kernel;
}

// NVRTC compiles the kernel for sm_90; returns the PTX.
std::string ptxOf(const Kernel& k) {
  codegen::GeneratedKernel g = codegen::generateCuda(k);
  cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(g.source, g.entry + ".cu", {}, "sm_90");
  if (!r.ok) qInfo("%s\n%s", r.error.c_str(), g.source.c_str());
  return r.ok ? r.ptx : "";
}

bool runsVerified(const execute::CompiledModel& m) {
  execute::RunOptions o;
  o.reps = 1;
  o.warmup = 0;
  execute::RunReport cpu = execute::executeModel(m, execute::BackendKind::Cpu, o);
  for (const auto& msg : cpu.messages) qInfo("cpu: %s", msg.c_str());
  if (!cpu.outputsVerified) return false;
  cuda::Availability gpu = cuda::cudaAvailability();
  if (!gpu.available) return true;
  execute::RunReport r = execute::executeModel(m, execute::BackendKind::Cuda, o);
  for (const auto& msg : r.messages) qInfo("cuda: %s", msg.c_str());
  return r.outputsVerified;
}

}  // namespace

class TestRowForms : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    cuda::Availability gpu = cuda::cudaAvailability();
    if (!gpu.available) qInfo("GPU runs skipped: no GPU here (%s); NVRTC still compiles for sm_90", gpu.reason.c_str());
  }
  void onlineSoftmaxIsOnePassOverThePair() {
    for (const char* op : {"Softmax", "LogSoftmax"}) {
      execute::CompiledModel m = withParams(rowModel(op, 6, 2048), {{"online", 1}, {"threads", 256}, {"cache_row", 0}});
      const Kernel& k = rowKernel(m);
      std::string text = printKernel(k);
      QVERIFY2(has(text, "maxsumexp= in0[i0, "), text.c_str());
      QVERIFY(!has(text, " sum= "));  // the sum-of-exponentials pass is gone: two passes over the row, not three
      codegen::GeneratedKernel g = codegen::generateCuda(k);
      QVERIFY(has(g.source, "tsr_maxsumexp(acc0_pair[0], acc0_pair[0 + 1], "));
      QVERIFY(has(g.source, "tsr_maxsumexp_merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));"));
      QVERIFY(!ptxOf(k).empty());
      QVERIFY(runsVerified(m));
    }
  }
  // Rows of all -inf but one, and a row of -inf: the pair's update keeps s finite where the max has not moved.
  void onlineSoftmaxOnInfinities() {
    execute::CompiledModel m = withParams(rowModel("Softmax", 3, 64), {{"online", 1}, {"threads", 32}});
    Tensor x(DType::F32, {3, 64});
    for (int64_t i = 0; i < 192; ++i) x.setDouble(i, i < 64 ? double(i % 7) : i == 100 ? 2.0 : -INFINITY);
    execute::RunOptions o;
    o.reps = 1;
    o.warmup = 0;
    o.inputs = {x};
    execute::RunReport r = execute::executeModel(m, execute::BackendKind::Cpu, o);
    QVERIFY(r.ran);
    const Tensor& y = r.outputs.at(0);
    QCOMPARE(y.getDouble(100), 1.0);  // the one finite value of row 1 takes all
    QCOMPARE(y.getDouble(101), 0.0);
    QVERIFY(std::isnan(y.getDouble(150)));  // a row of -inf: 0 / 0, as the two-pass form and the reference give
  }
  void onlineIsRefusedWithoutAMaxPass() {
    execute::CompiledModel m = execute::compileKernels(compileGraph(parseTsr(rowModel("LayerNormalization", 4, 64)), CompileOptions{}));
    try {
      traceWithParams(*m.graph, m.kernels.front().spec, {{"online", 1}});
      QFAIL("online = 1 on a layernorm was accepted");
    } catch (const ScheduleError& e) {
      QCOMPARE(e.loop(), std::string("online"));
      QVERIFY(has(e.what(), "no max pass"));
    }
  }
  void rowInRegisters() {
    for (const char* op : {"Softmax", "LogSoftmax", "LayerNormalization"})
      for (int64_t online : {0, 1}) {
        if (online && std::string(op) == "LayerNormalization") continue;
        execute::CompiledModel m =
            withParams(rowModel(op, 5, 4096), {{"cache_row", 2}, {"threads", 256}, {"vector_width", 4}, {"online", online}});
        const Kernel& k = rowKernel(m);
        std::string text = printKernel(k);
        QVERIFY2(has(text, "tmp in0_regs: register f32[4, 256, 4]  # read cache of in0, by iteration"), text.c_str());
        QVERIFY(has(text, "for k0_o_o in 0..4 unrolled reduce {"));
        codegen::GeneratedKernel g = codegen::generateCuda(k);
        QVERIFY2(has(g.source, "float in0_regs[16];"), g.source.c_str());  // 4 runs x 4 lanes a thread, not the row
        std::string ptx = ptxOf(k);
        QVERIFY(!ptx.empty());
        QVERIFY2(!has(ptx, "ld.local") && !has(ptx, "st.local"), (std::string(op) + ": the row spilled to local memory").c_str());
        QVERIFY(has(ptx, "ld.global.nc.v4.f32"));  // the fill reads float4
        QVERIFY2(runsVerified(m), op);
      }
  }
  void rowInRegistersWithGuards() {
    // 1000 columns over 128 threads: the last run is guarded; the fill keeps the guard.
    execute::CompiledModel m = withParams(rowModel("Softmax", 3, 1000), {{"cache_row", 2}, {"threads", 128}, {"vector_width", 1}});
    std::string text = printKernel(rowKernel(m));
    QVERIFY2(has(text, "if in0_regs_ax0 * 128 + in0_regs_ax1 < 1000 {"), text.c_str());
    QVERIFY(!ptxOf(rowKernel(m)).empty());
    QVERIFY(runsVerified(m));
  }
  void rowInRegistersRefusesLongRows() {
    execute::CompiledModel m = execute::compileKernels(compileGraph(parseTsr(rowModel("Softmax", 2, 8192)), CompileOptions{}));
    try {
      traceWithParams(*m.graph, m.kernels.front().spec, {{"cache_row", 2}, {"threads", 128}});
      QFAIL("64 elements a thread were accepted");
    } catch (const ScheduleError& e) {
      QCOMPARE(e.loop(), std::string("cache_row"));
      QVERIFY(has(e.what(), "keeps 64 elements a thread in registers (limit 32)"));
    }
  }
  // blocks_per_row: a phase per pass, each a launch of rows x parts blocks; the partials go through a global
  // workspace the CUDA form takes as a parameter after the outputs, the phase its last parameter.
  void rowSplitOverBlocks() {
    struct Form {
      const char* op;
      int64_t online, blocks, phases;
    };
    for (Form f : {Form{"Softmax", 1, 4, 2}, Form{"Softmax", 0, 8, 3}, Form{"LogSoftmax", 1, 2, 2},
                   Form{"LayerNormalization", 0, 4, 3}, Form{"ReduceSum", 0, 16, 2}}) {
      std::string model = std::string(f.op) == "ReduceSum"
                              ? "graph g {\n  input %x: f32[3,16384]\n  const %a: i64[1] = [1]\n"
                                "  node n = ReduceSum(%x, %a) {keepdims=0} -> %y\n  output %y\n}\n"
                              : rowModel(f.op, 3, 16384);
      execute::CompiledModel m = withParams(model, {{"blocks_per_row", f.blocks}, {"online", f.online}, {"cache_row", 0}, {"threads", 256}});
      const Kernel& k = rowKernel(m);
      codegen::GeneratedKernel g = codegen::generateCuda(k);
      QCOMPARE(g.phases, int(f.phases));
      QVERIFY(!g.scratch.empty());
      QCOMPARE(g.scratch[0].name, std::string("ws0"));
      QCOMPARE(g.launch.grid[0], unsigned(3 * f.blocks));
      QVERIFY2(has(g.source, "float* __restrict__ ws0,  // f32[3," + std::to_string(f.blocks)) && has(g.source, "const int tsr_phase) {"),
               g.source.c_str());
      QVERIFY(has(g.source, "if (tsr_phase == " + std::to_string(f.phases - 1) + ") {"));
      QVERIFY(!ptxOf(k).empty());
      codegen::GeneratedKernel cpp = codegen::generateCpp(k);
      QVERIFY(has(cpp.source, "tsr_workspace<float> ws0_owner("));
      QVERIFY(!has(cpp.source, "#pragma omp for\n"));  // a workspace at its top: its loops open their own regions
      QVERIFY2(runsVerified(m), f.op);
    }
  }
  // A reduction over every axis is one row: split over 32 blocks it no longer runs on one SM.
  void wholeTensorSumOverBlocks() {
    const char* model = "graph g {\n  input %x: f32[64,4096]\n  node n = ReduceSum(%x) {keepdims=0} -> %y\n  output %y\n}\n";
    execute::CompiledModel def = execute::compileKernels(compileGraph(parseTsr(model), CompileOptions{}));
    QCOMPARE(rowKernel(def).params.at("blocks_per_row"), int64_t(32));
    QCOMPARE(codegen::generateCuda(rowKernel(def)).launch.grid[0], 32u);
    QVERIFY(runsVerified(def));
  }
};

QTEST_APPLESS_MAIN(TestRowForms)
#include "test_row_forms.moc"
