// ScatterElements, Scatter and ScatterND whose indices are inputs (known only at run time) as generated kernels
// (kernel/lower/lower_scatter.cpp, the scatter template): every reduction, negative axes, ScatterND's tuples of
// whole elements and of slices, int32 indices, an int64 output. Random indices in 0..3 repeat, so the reductions'
// order matters. Each kernel runs in the kernel interpreter (as lowered and default-scheduled) against the
// reference, its CUDA compiles with NVRTC for sm_90, and the cpu backend runs it as a kernel, verified; an index
// out of range fails the run with the reference's message.
#include <QtTest>

#include "cpu_run.h"
#include "ir/error.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;

namespace {

Case scatterElements(const Shape& data, const Shape& indices, int64_t axis, const std::string& reduction,
                     DType t = DType::F32, DType it = DType::I64, const std::string& op = "ScatterElements") {
  GraphBuilder b("sc");
  Value* x = b.input("data", {t, data});
  Value* i = b.input("indices", {it, indices});
  Value* u = b.input("updates", {t, indices});
  Attributes a{{"axis", axis}};
  if (reduction != "none") a["reduction"] = Attribute(reduction);
  b.output(b.op(op, {x, i, u}, a, "scatter"));
  return {b.finish(), {"g0", "opaque", {"scatter"}}};
}

Case scatterNd(const Shape& data, const Shape& indices, const std::string& reduction) {
  GraphBuilder b("snd");
  Value* x = b.input("data", {DType::F32, data});
  Value* i = b.input("indices", {DType::I64, indices});
  Shape us(indices.begin(), indices.end() - 1);
  us.insert(us.end(), data.begin() + indices.back(), data.end());
  Value* u = b.input("updates", {DType::F32, us});
  Attributes a;
  if (reduction != "none") a["reduction"] = Attribute(reduction);
  b.output(b.op("ScatterND", {x, i, u}, a, "scatter"));
  return {b.finish(), {"g0", "opaque", {"scatter"}}};
}

}  // namespace

class TestScatter : public QObject {
  Q_OBJECT
 private slots:
  void scatterElementsEveryReduction() {
    uint64_t seed = 1;
    for (const char* r : {"none", "add", "mul", "max", "min"}) {
      QCOMPARE(agreesEverywhere(scatterElements({4, 6}, {3, 5}, 0, r), "scatter", seed++), std::string());
      QCOMPARE(agreesEverywhere(scatterElements({5, 4, 3}, {2, 7, 3}, -2, r), "scatter", seed++), std::string());
    }
  }
  void oneDimensionRunsInOrder() {  // no free loop: one thread, the updates in the reference's order
    QCOMPARE(agreesEverywhere(scatterElements({6}, {9}, 0, "add"), "scatter", 20), std::string());
    QCOMPARE(agreesEverywhere(scatterElements({6}, {9}, 0, "none"), "scatter", 21), std::string());
  }
  void otherTypesAndTheOpsetNineName() {
    QCOMPARE(agreesEverywhere(scatterElements({4, 5}, {4, 2}, 1, "add", DType::I64, DType::I32), "scatter", 30), std::string());
    QCOMPARE(agreesEverywhere(scatterElements({4, 5}, {3, 5}, 0, "none", DType::F32, DType::I64, "Scatter"), "scatter", 31),
             std::string());
  }
  void scatterNdTuplesAndSlices() {
    uint64_t seed = 40;
    for (const char* r : {"none", "add", "max"}) {
      QCOMPARE(agreesEverywhere(scatterNd({4, 4}, {5, 2}, r), "scatter", seed++), std::string());      // elements
      QCOMPARE(agreesEverywhere(scatterNd({4, 5, 6}, {3, 1}, r), "scatter", seed++), std::string());   // slices
      QCOMPARE(agreesEverywhere(scatterNd({4, 4, 8}, {2, 3, 2}, r), "scatter", seed++), std::string());
    }
  }
  // The phases: the copy and the updates' free loops spread over threads, the loops whose updates may meet
  // serial inside them.
  void updatesThatMayMeetStayInOrder() {
    Kernel k = lower(scatterElements({64, 32}, {64, 8}, 1, "add"));
    applyDefaultSchedule(k);
    const std::string t = printKernel(k);
    QVERIFY2(t.find("sync grid") != std::string::npos, t.c_str());
    QVERIFY2(t.find("for u1 in 0..8 reduce") != std::string::npos, t.c_str());
    QVERIFY2(t.find("bind(blockIdx.x)") != std::string::npos, t.c_str());
  }
  // Unchecked by the reference, the kernel's own check fails it naming the index; with the reference the run
  // stops at the reference's message first.
  void anIndexOutOfRangeFailsTheRun() {
    Case c = scatterElements({3, 4}, {2, 4}, 0, "none");  // random indices 0..3 reach past 3 rows
    auto graph = std::make_shared<const Graph>(c.graph.clone());
    execute::CompiledModel m = execute::compileKernels(graph, {c.spec});
    execute::RunOptions o;
    o.reps = 1, o.warmup = 0, o.verify = false;
    execute::RunReport run = execute::executeModel(m, execute::BackendKind::Cpu, o);
    QCOMPARE(run.kernels.size(), size_t(1));
    QCOMPARE(run.kernels[0].status, execute::KernelStatus::Failed);
    QVERIFY2(run.kernels[0].message.find("out of range for axis 0 of extent 3") != std::string::npos, run.kernels[0].message.c_str());
    o.verify = true;
    try {
      execute::executeModel(m, execute::BackendKind::Cpu, o);
      QFAIL("the reference ran an index out of range");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("node 'scatter' (ScatterElements): input 1 ('indices') holds 3 at ") != std::string::npos, e.what());
    }
  }
};

QTEST_APPLESS_MAIN(TestScatter)
#include "test_scatter.moc"
