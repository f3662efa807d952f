// Indices read from tensors (Gather, GatherElements) are checked in generated code: the C++ and CUDA of one
// CheckedIndex, NVRTC compiles it for sm_90, and a run fed an index out of range fails that kernel with the
// reference interpreter's message (node, input, position, value) instead of reading outside the data, with or
// without the reference check; valid negative indices count from the end.
#include <QtTest>

#include "codegen/codegen.h"
#include "frontend/text/tsr.h"
#include "ir/error.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "runtime/execute/executor.h"
#include "runtime/execute/from_fusion.h"
#include "runtime/execute/measure.h"
#include "runtime/reference/interpreter.h"
#include "gemm_fixture.h"

using namespace tessera;
using testing::messages;
using testing::once;

namespace {

// y = Gather(data f32[4, 3], idx i64[shape]) along axis 0: the axis of 4 of the bug report.
execute::CompiledModel gatherModel(const std::string& idxShape = "3", const std::string& op = "Gather",
                                   const std::string& dataShape = "4,3") {
  std::string text = "graph g {\n  input %data: f32[" + dataShape + "]\n  input %idx: i64[" + idxShape + "]\n  node g = " +
                     op + "(%data, %idx) {axis=0} -> %y\n  output %y\n}\n";
  return execute::compileKernels(compileGraph(parseTsr(text), CompileOptions{}), nullptr);
}

std::vector<Tensor> gatherInputs(const Shape& idxShape, std::vector<double> idx, const Shape& dataShape = {4, 3}) {
  std::vector<double> data(size_t(numElements(dataShape)));
  for (size_t i = 0; i < data.size(); ++i) data[i] = double(i) + 0.5;
  return {Tensor::fromDoubles(DType::F32, dataShape, data), Tensor::fromDoubles(DType::I64, idxShape, idx)};
}

// What the reference interpreter says of these inputs ("" when it runs).
std::string referenceError(const Graph& g, const std::vector<Tensor>& inputs) {
  try {
    runReference(g, inputs);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Runs `m` on `inputs` without the reference: the kernel fails with the reference's words for a bad index.
void expectFailure(const execute::CompiledModel& m, execute::BackendKind backend, const std::vector<Tensor>& inputs,
                   const std::string& want) {
  execute::RunOptions o = once();
  o.inputs = inputs;
  o.verify = false;
  execute::RunReport r = execute::executeModel(m, backend, o);
  QVERIFY2(r.ran, messages(r).c_str());
  QCOMPARE(r.kernels.size(), size_t(1));
  QVERIFY2(r.kernels[0].status == execute::KernelStatus::Failed, messages(r).c_str());
  QCOMPARE(r.kernels[0].message, want);
  QCOMPARE(r.messages.size(), size_t(1));
  QCOMPARE(r.messages[0], "kernel " + r.kernels[0].group + ": " + want);
}

// A valid -1 (the last row) runs and matches the reference, checked and unchecked.
void expectLastRow(const execute::CompiledModel& m, execute::BackendKind backend) {
  execute::RunOptions o = once();
  o.inputs = gatherInputs({3}, {2, -1, 0});
  execute::RunReport r = execute::executeModel(m, backend, o);
  QVERIFY2(r.outputsVerified, messages(r).c_str());
  QCOMPARE(r.outputs[0].getDouble(3), 9.5);  // y[1, 0] = data[3, 0]
  o.verify = false;
  r = execute::executeModel(m, backend, o);
  QCOMPARE(r.kernels[0].status, execute::KernelStatus::Unchecked);
  QCOMPARE(r.outputs[0].getDouble(5), 11.5);
}

// The bug report's indices for an axis of 4, each the middle of three.
const std::vector<double> kBad = {1e9, 5, -5};

}  // namespace

class TestIndexChecks : public QObject {
  Q_OBJECT
 private slots:
  // One tsr_index call per index use, the error record a parameter after the outputs, on both targets; the
  // helper wraps negatives, compares once (unsigned) and keeps the first failure (atomicCAS on the GPU).
  void generatedTextOfTheCheck() {
    execute::CompiledModel m = gatherModel();
    QVERIFY2(!m.kernels[0].onHost(), m.kernels[0].placement.reason.c_str());
    codegen::GeneratedKernel cpp = codegen::generateCpp(m.kernels[0].kernel);
    codegen::GeneratedKernel cu = codegen::generateCuda(m.kernels[0].kernel);
    QCOMPARE(cpp.indexChecks.size(), size_t(1));
    QCOMPARE(cpp.indexChecks[0].node, std::string("g"));
    QCOMPARE(cpp.indexChecks[0].extent, int64_t(4));
    for (const auto* g : {&cpp, &cu}) {
      QCOMPARE(count(g->body, "tsr_index("), size_t(1));
      QVERIFY2(g->body.find("tsr_err") < g->body.find(") {"), g->body.c_str());  // a parameter
    }
    // Unscheduled: the index, its extent and its position in idx.
    kernel::Kernel plain = kernel::lowerToLoops(*m.graph, m.kernels[0].spec);
    for (auto target : {codegen::Target::Cpu, codegen::Target::Cuda}) {
      std::string body = codegen::generate(plain, target).body;
      QVERIFY2(body.find("= in0[(tsr_index(tsr_err, 0, in1[i0], 4, i0)) * 3 + i1];  // g") != std::string::npos, body.c_str());
    }
    QVERIFY2(cpp.body.find("int64_t* __restrict tsr_err) {  // error record of the index checks") != std::string::npos,
             cpp.body.c_str());
    QVERIFY2(cpp.body.find("(int64_t*)args[3]);") != std::string::npos, cpp.body.c_str());
    QVERIFY(cpp.prelude.find("if (__builtin_expect((uint64_t)w < (uint64_t)n, 1)) return w;") != std::string::npos);
    QVERIFY(cpp.prelude.find("__atomic_compare_exchange_n(err, &none, (int64_t)check + 1") != std::string::npos);
    QVERIFY2(cu.body.find("long long* __restrict__ tsr_err) {") != std::string::npos, cu.body.c_str());
    QVERIFY(cu.prelude.find("if ((unsigned long long)w < (unsigned long long)n) return w;") != std::string::npos);
    QVERIFY(cu.prelude.find("atomicCAS((unsigned long long*)err, 0ull, (unsigned long long)check + 1ull)") != std::string::npos);
    // A kernel without data-dependent indices keeps its signature.
    codegen::GeneratedKernel gemm = codegen::generateCpp(execute::compileKernels(testing::gemmModel("f32", 8, 8, 8)).kernels[0].kernel);
    QVERIFY(gemm.indexChecks.empty());
    QVERIFY(gemm.body.find("tsr_err") == std::string::npos);
  }

  void cudaCompilesForSm90() {
    for (const char* op : {"Gather", "GatherElements"}) {
      execute::CompiledModel m = std::string(op) == "Gather" ? gatherModel() : gatherModel("2,3", op);
      QVERIFY2(!m.kernels[0].onHost(), m.kernels[0].placement.reason.c_str());
      codegen::GeneratedKernel g = codegen::generateCuda(m.kernels[0].kernel);
      cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(g.source, "gather.cu", {}, "sm_90");
      QVERIFY2(r.ok, (std::string(op) + ": " + r.error + "\n" + g.source).c_str());
      QVERIFY(r.ptx.find("atom.global.cas.b64") != std::string::npos);
    }
  }

  // 1e9, 5 and -5 for an axis of 4: the kernel fails naming the node, the index's position and its value (the
  // reference's words), the other kernels' memory untouched; -1 reads the last row.
  void cpuRunsFailCleanly() {
    execute::CompiledModel m = gatherModel();
    for (double bad : kBad) {
      std::vector<Tensor> in = gatherInputs({3}, {0, bad, 2});
      std::string want = referenceError(*m.graph, in);
      QVERIFY2(want.find("node 'g' (Gather): input 1 ('idx') holds " + std::to_string(int64_t(bad)) +
                         " at [1], out of range for axis 0 of extent 4 (-4..3 are valid)") == 0,
               want.c_str());
      expectFailure(m, execute::BackendKind::Cpu, in, want);
    }
    expectLastRow(m, execute::BackendKind::Cpu);
  }

  // With the reference check the run stops at the reference, with the same message.
  void referenceSaysTheSame() {
    execute::CompiledModel m = gatherModel();
    execute::RunOptions o = once();
    o.inputs = gatherInputs({3}, {0, 5, 2});
    std::string want = referenceError(*m.graph, o.inputs);
    try {
      execute::executeModel(m, execute::BackendKind::Cpu, o);
      QFAIL("ran with an index out of range");
    } catch (const Error& e) {
      QCOMPARE(std::string(e.what()), want);
    }
  }

  // A position in a 2-D index tensor, and GatherElements through the same check.
  void positionsAndGatherElements() {
    execute::CompiledModel m = gatherModel("2,2");
    std::vector<Tensor> in = gatherInputs({2, 2}, {0, 1, -7, 3});
    std::string want = referenceError(*m.graph, in);
    QVERIFY2(want.find("holds -7 at [1, 0],") != std::string::npos, want.c_str());
    expectFailure(m, execute::BackendKind::Cpu, in, want);

    execute::CompiledModel e = gatherModel("2,3", "GatherElements");
    QVERIFY2(!e.kernels[0].onHost(), e.kernels[0].placement.reason.c_str());
    in = gatherInputs({2, 3}, {0, 3, 1, 2, 1, 4});
    want = referenceError(*e.graph, in);
    QVERIFY2(want.find("node 'g' (GatherElements): input 1 ('idx') holds 4 at [1, 2],") == 0, want.c_str());
    expectFailure(e, execute::BackendKind::Cpu, in, want);
    execute::RunOptions o = once();
    o.inputs = gatherInputs({2, 3}, {0, 3, -1, -4, 1, 2});
    execute::RunReport r = execute::executeModel(e, execute::BackendKind::Cpu, o);
    QVERIFY2(r.outputsVerified, messages(r).c_str());
    QCOMPARE(r.outputs[0].getDouble(2), 11.5);  // y[0, 2] = data[3, 2]
  }

  // The tuner's measurements run generated code without the whole-graph reference: on an axis of 2, random
  // indices (0..3) fail the variant with the same words, through the reference of its nodes or its own record.
  void tunerMeasurementsFailCleanly() {
    execute::CompiledModel m = gatherModel("8", "Gather", "2,3");
    std::string want = referenceError(*m.graph, randomInputs(*m.graph, 0));
    QVERIFY2(want.find("node 'g' (Gather): input 1 ('idx') holds ") == 0, want.c_str());
    execute::MeasureReport r = execute::measureVariants(m, {{0, m.kernels[0].kernel.clone()}}, execute::BackendKind::Cpu, {});
    QCOMPARE(r.timings.size(), size_t(1));
    QCOMPARE(r.timings[0].status, execute::KernelStatus::Failed);
    QVERIFY2(r.timings[0].message.find(want) != std::string::npos, r.timings[0].message.c_str());
    // Compared with the model's own kernel instead of the reference: the variant runs, and its record fails it.
    execute::MeasureOptions o;
    o.referenceLimit = 0;
    r = execute::measureVariants(m, {{0, m.kernels[0].kernel.clone()}}, execute::BackendKind::Cpu, o);
    QCOMPARE(r.expected[0], execute::Expected::Model);
    QCOMPARE(r.timings[0].status, execute::KernelStatus::Failed);
    QCOMPARE(r.timings[0].message, want);
  }

  // Movement ops fused in front of Slice, Concat and Gather (fusion's index chains, as in the expanded ONNX
  // Attention with past and present) were refused by the lowering ("computed inside the group"): now one
  // kernel, NVRTC compiles it and the cpu runs it verified.
  void indexChainsCompileAndRun() {
    std::string text =
        "graph rope {\n  input %x: f32[2,4,8]\n  input %pos: i64[2,2]\n  const %s0: i64[1] = [0]\n"
        "  const %s4: i64[1] = [4]\n  const %s8: i64[1] = [8]\n  const %ax: i64[1] = [2]\n  const %flat: i64[1] = [4]\n"
        "  node t = Transpose(%x) {perm=[1, 0, 2]} -> %xt\n  node lo = Slice(%xt, %s0, %s4, %ax) -> %a\n"
        "  node hi = Slice(%xt, %s4, %s8, %ax) -> %b\n  node cat = Concat(%b, %a) {axis=2} -> %c\n"
        "  node r = Reshape(%pos, %flat) -> %p\n  node g = Gather(%c, %p) {axis=0} -> %y\n  output %y\n}\n";
    execute::CompiledModel m = execute::compileKernels(compileGraph(parseTsr(text), CompileOptions{}), nullptr);
    QCOMPARE(m.kernels.size(), size_t(1));
    QVERIFY2(!m.kernels[0].onHost(), m.kernels[0].placement.reason.c_str());
    codegen::GeneratedKernel g = codegen::generateCuda(m.kernels[0].kernel);
    cuda::NvrtcResult r = cuda::NvrtcCompiler().compile(g.source, "rope.cu", {}, "sm_90");
    QVERIFY2(r.ok, r.error.c_str());
    execute::RunReport run = execute::executeModel(m, execute::BackendKind::Cpu, once());
    QVERIFY2(run.outputsVerified, messages(run).c_str());

    // A gather of a gather: one kernel, the inner index checked inside the outer one's index; a bad outer
    // index fails it with the reference's words.
    std::string twice = "graph gg {\n  input %d: f32[4,5]\n  input %i1: i64[3,2]\n  input %i2: i64[2]\n"
                        "  node a = Gather(%d, %i1) {axis=1} -> %x\n  node b = Gather(%x, %i2) {axis=1} -> %y\n"
                        "  output %y\n}\n";
    m = execute::compileKernels(compileGraph(parseTsr(twice), CompileOptions{}), nullptr);
    QCOMPARE(m.kernels.size(), size_t(1));
    QCOMPARE(m.kernels[0].kernel.indexChecks.size(), size_t(2));
    std::vector<Tensor> in = {Tensor::fromDoubles(DType::F32, {4, 5}, std::vector<double>(20, 1.0)),
                              Tensor::fromDoubles(DType::I64, {3, 2}, std::vector<double>{0, 1, 2, 3, 4, -5}),
                              Tensor::fromDoubles(DType::I64, {2}, std::vector<double>{-3, 3})};
    std::string want = referenceError(*m.graph, in);
    QVERIFY2(want.find("node 'b' (Gather): input 1 ('i2') holds 3 at [1], out of range for axis 1 of extent 3") == 0,
             want.c_str());
    expectFailure(m, execute::BackendKind::Cpu, in, want);
  }

  void cudaRunsFailCleanly() {
    cuda::Availability gpu = cuda::cudaAvailability();
    if (!gpu.available) QSKIP(("no GPU to run the checked gather on: " + gpu.reason).c_str());
    execute::CompiledModel m = gatherModel();
    for (double bad : kBad) {
      std::vector<Tensor> in = gatherInputs({3}, {0, bad, 2});
      expectFailure(m, execute::BackendKind::Cuda, in, referenceError(*m.graph, in));
    }
    expectLastRow(m, execute::BackendKind::Cuda);
    // The context survived: a second model still runs verified.
    execute::RunReport r = execute::executeModel(execute::compileKernels(testing::gemmModel("f32", 32, 32, 32)),
                                                 execute::BackendKind::Cuda, once());
    QVERIFY2(r.outputsVerified, messages(r).c_str());
  }
};

QTEST_GUILESS_MAIN(TestIndexChecks)
#include "test_index_checks.moc"
