// Each graph pass on small graphs built with ops/builder.h, checking the rewritten structure, the statistics
// and (with the reference interpreter) that the outputs did not change.
#include <QtTest>

#include "ops/builder.h"
#include "passes/fold_constants.h"
#include "passes/pipelines.h"
#include "passes/plan_memory.h"
#include "passes/step_recorder.h"
#include "runtime/reference/compare.h"
#include "runtime/reference/interpreter.h"

using namespace tessera;

namespace {

const TensorType kVec{DType::F32, {4}};

Tensor filled(TensorType t, double v) {
  std::vector<double> data(size_t(t.numElements()), v);
  return Tensor::fromDoubles(t.dtype, t.shape, data);
}

QStringList opsOf(const Graph& g) {
  QStringList out;
  for (Node* n : g.topoOrder()) out << QString::fromStdString(n->op());
  return out;
}

struct Run {
  std::shared_ptr<StepRecorder> recorder = std::make_shared<StepRecorder>();
  int64_t stat(const std::string& pass, const std::string& name) const {
    for (const Step& s : recorder->steps())
      if (s.pass == pass)
        for (const auto& [n, v] : s.statistics)
          if (n == name) return v;
    return -1;
  }
};

// Runs `spec` on g and checks that the outputs still match the reference outputs from before.
Run runAndCompare(Graph& g, const std::string& spec, PipelineOptions options = {}) {
  std::vector<Tensor> inputs = randomInputs(g, 7);
  std::vector<Tensor> before = runReference(g, inputs).outputs;
  PassManager pm = buildPipeline(spec, std::move(options));
  Run run;
  pm.addInstrumentation(run.recorder);
  pm.run(g);
  std::vector<Tensor> after = runReference(g, inputs).outputs;
  if (after.size() != before.size()) qFatal("output count changed");
  for (size_t i = 0; i < after.size(); ++i) {
    Comparison c = compareTensors(after[i], before[i]);
    if (!c.ok) qFatal("%s changed output %zu: %s", spec.c_str(), i, c.message.c_str());
  }
  return run;
}

}  // namespace

class TestPasses : public QObject {
  Q_OBJECT
 private slots:
  void canonicalizeRemovesNeutralOperands() {
    GraphBuilder b;
    Value* x = b.input("x", kVec);
    Value* zero = b.constant("zero", filled(kVec, 0));
    Value* one = b.constant("one", Tensor::scalar(DType::F32, 1));
    Value* s = b.op("Add", {zero, x});
    Value* m = b.op("Mul", {s, one});
    Value* d = b.op("Div", {m, one});
    b.output(b.op("Relu", {b.op("Identity", {d})}));
    Graph g = b.finish();
    Run r = runAndCompare(g, "canonicalize,dce");
    QCOMPARE(opsOf(g), QStringList{"Relu"});
    QCOMPARE(r.stat("canonicalize", "neutral-operands"), int64_t(3));
    QCOMPARE(r.stat("canonicalize", "identity-ops"), int64_t(1));
    QCOMPARE(r.stat("dce", "removed-initializers"), int64_t(2));
    QCOMPARE(g.findNode("Relu")->input(0), g.findValue("x"));
  }

  void canonicalizeKeepsABroadcastingNeutralOperand() {
    GraphBuilder b;
    Value* x = b.input("x", kVec);
    Value* ones = b.constant("ones", filled({DType::F32, {2, 4}}, 1));
    b.output(b.op("Mul", {x, ones}));  // x*1 here makes a [2,4] result: not a no-op
    Graph g = b.finish();
    Run r = runAndCompare(g, "canonicalize");
    QCOMPARE(opsOf(g), QStringList{"Mul"});
    QVERIFY(!r.recorder->steps()[0].changed);
  }

  void canonicalizeKeepsGraphOutputNames() {
    GraphBuilder b;
    Value* x = b.input("x", kVec);
    b.output(b.op("Identity", {b.op("Relu", {x}, {}, "r")}, {}, "y"));
    Graph g = b.finish();
    runAndCompare(g, "canonicalize");
    QCOMPARE(opsOf(g), QStringList{"Relu"});
    QCOMPARE(QString::fromStdString(g.outputs()[0]->name()), QString("y"));
    // Identity of a graph input that is an output: nothing may take the name over, so it stays.
    GraphBuilder c;
    c.output(c.op("Identity", {c.input("x", kVec)}, {}, "y"));
    Graph h = c.finish();
    runAndCompare(h, "canonicalize");
    QCOMPARE(opsOf(h), QStringList{"Identity"});
  }

  void canonicalizeDropsInferenceDropout() {
    GraphBuilder b;
    Value* x = b.input("x", kVec);
    b.output(b.op("Exp", {b.op("Dropout", {x, b.constant("ratio", Tensor::scalar(DType::F32, 0.5))})}));
    Graph g = b.finish();
    runAndCompare(g, "canonicalize,dce");
    QCOMPARE(opsOf(g), QStringList{"Exp"});
  }

  void fuelStopsRewritesInOrder() {
    GraphBuilder b;
    Value* x = b.input("x", kVec);
    b.output(b.op("Identity", {b.op("Identity", {b.op("Identity", {x}, {}, "i1")}, {}, "i2")}, {}, "i3"));
    Graph g = b.finish();
    PipelineOptions o;
    o.fuel = 1;
    Run r = runAndCompare(g, "canonicalize", o);
    QCOMPARE(g.numNodes(), size_t(2));
    QVERIFY(!g.findNode("i1"));  // the first in topological order went
    QCOMPARE(r.stat("canonicalize", "identity-ops"), int64_t(1));
  }

  void foldConstantsEvaluatesSmallNodes() {
    GraphBuilder b;
    Value* x = b.input("x", kVec);
    Value* c1 = b.constant("c1", Tensor::fromDoubles(DType::F32, {4}, std::vector<double>{1, 2, 3, 4}));
    Value* c2 = b.constant("c2", filled(kVec, 10));
    Value* sum = b.op("Add", {c1, c2}, {}, "sum");
    b.output(b.op("Mul", {x, b.op("Neg", {sum}, {}, "neg")}));
    Graph g = b.finish();
    Run r = runAndCompare(g, "fold-constants,dce");
    QCOMPARE(opsOf(g), QStringList{"Mul"});
    QCOMPARE(r.stat("fold-constants", "folded-nodes"), int64_t(2));
    const Tensor* folded = g.findValue("neg")->initializer();
    QVERIFY(folded);
    QCOMPARE(folded->toDoubles(), (std::vector<double>{-11, -12, -13, -14}));
    QCOMPARE(g.initializers().size(), size_t(1));
  }

  void foldConstantsLeavesLargeResults() {
    GraphBuilder b;
    Value* x = b.input("x", kVec);
    Value* w = b.constant("w", filled(kVec, 2));
    b.output(b.op("Add", {x, b.op("Exp", {w}, {}, "e")}));
    Graph g = b.finish();
    PassManager pm;
    pm.addPass(createPass("fold-constants"));  // default limit: folds
    Graph copy = g.clone();
    pm.run(copy);
    QVERIFY(!copy.findNode("e"));
    PassManager small;
    small.addPass(createFoldConstantsPass(3));
    auto rec = std::make_shared<StepRecorder>();
    small.addInstrumentation(rec);
    small.run(g);
    QVERIFY(g.findNode("e"));
    QCOMPARE(rec->steps()[0].statistics[2].second, int64_t(1));  // too-large
  }

  void cseMergesNodesAndInitializers() {
    GraphBuilder b;
    Value* x = b.input("x", kVec);
    Value* a1 = b.op("Mul", {x, b.constant("k1", filled(kVec, 3))}, {}, "a1");
    Value* a2 = b.op("Mul", {x, b.constant("k2", filled(kVec, 3))}, {}, "a2");
    Value* r1 = b.op("Relu", {a1}, {}, "r1");
    Value* r2 = b.op("Relu", {a2}, {}, "r2");
    b.output(b.op("Add", {r1, r2}));
    Graph g = b.finish();
    Run r = runAndCompare(g, "cse,dce");
    QCOMPARE(opsOf(g), (QStringList{"Mul", "Relu", "Add"}));
    QCOMPARE(r.stat("cse", "merged-initializers"), int64_t(1));
    QCOMPARE(r.stat("cse", "merged-nodes"), int64_t(2));
    Node* add = g.findNode("Add");
    QCOMPARE(add->input(0), add->input(1));
  }

  void dceRemovesDeadBranchesAndInitializers() {
    GraphBuilder b;
    Value* x = b.input("x", kVec);
    Value* unused = b.constant("unused", filled(kVec, 1));
    b.op("Exp", {b.op("Add", {x, unused}, {}, "dead1")}, {}, "dead2");
    b.output(b.op("Relu", {x}, {}, "live"));
    Graph g = b.finish();
    Run r = runAndCompare(g, "dce");
    QCOMPARE(opsOf(g), QStringList{"Relu"});
    QCOMPARE(r.stat("dce", "removed-nodes"), int64_t(2));
    QCOMPARE(r.stat("dce", "removed-initializers"), int64_t(1));
    QCOMPARE(toStrings(r.recorder->steps()[0].removed), (QStringList{"dead1", "dead2"}));
  }

  void planMemoryReusesAndUpdatesInPlace() {
    // a=Relu(x); b=Exp(a); c=Neg(a); y=Add(b,c). 16 bytes each.
    GraphBuilder g0;
    Value* x = g0.input("x", kVec);
    Value* a = g0.op("Relu", {x}, {}, "a");
    Value* b = g0.op("Exp", {a}, {}, "b");
    Value* c = g0.op("Neg", {a}, {}, "c");
    g0.output(g0.op("Add", {b, c}, {}, "y"));
    Graph g = g0.finish();
    MemoryPlan plan = planMemory(g);
    QCOMPARE(plan.naiveBytes, int64_t(64));
    QCOMPARE(plan.plannedBytes, int64_t(32));  // a's buffer goes to c, b's to y
    QCOMPARE(plan.peakLiveBytes, int64_t(32));
    QCOMPARE(plan.bufferOf.at("c"), plan.bufferOf.at("a"));
    QCOMPARE(plan.bufferOf.at("y"), plan.bufferOf.at("b"));
    QVERIFY(plan.bufferOf.at("a") != plan.bufferOf.at("b"));
    QCOMPARE(plan.inPlace, (std::vector<std::string>{"c", "y"}));
    QCOMPARE(plan.liveness.at("a").lastUse, size_t(2));
    QCOMPARE(plan.liveness.at("y").lastUse, size_t(4));  // graph outputs live to the end
    auto sink = std::make_shared<MemoryPlan>();
    PassManager pm;
    pm.addPass(createPlanMemoryPass(sink));
    pm.run(g);
    QCOMPARE(sink->plannedBytes, int64_t(32));
  }

  void planMemoryReusesFreedBuffersBySize() {
    // a=Exp(x)[4]; s=ReduceSum-free: use Mul(x, big) to make a [2,4] value, then a smaller one reuses it.
    GraphBuilder g0;
    Value* x = g0.input("x", kVec);
    Value* big = g0.op("Mul", {x, g0.constant("k", filled({DType::F32, {2, 4}}, 2))}, {}, "big");  // 32 bytes
    Value* m = g0.op("Max", {big, x}, {}, "m");         // 32 bytes, in place over big
    Value* n = g0.op("Neg", {x}, {}, "n");              // 16 bytes: nothing free yet
    g0.output(g0.op("Add", {m, n}, {}, "y"));           // 32 bytes: in place over m
    Graph g = g0.finish();
    MemoryPlan plan = planMemory(g);
    QCOMPARE(plan.naiveBytes, int64_t(112));
    QCOMPARE(plan.plannedBytes, int64_t(48));
    QCOMPARE(plan.bufferOf.at("m"), plan.bufferOf.at("big"));
    QCOMPARE(plan.bufferOf.at("y"), plan.bufferOf.at("m"));
  }

 private:
  static QStringList toStrings(const std::vector<std::string>& v) {
    QStringList out;
    for (const auto& s : v) out << QString::fromStdString(s);
    return out;
  }
};

QTEST_APPLESS_MAIN(TestPasses)
#include "test_passes.moc"
