// ONNX control flow: If, Loop and Scan imported with their bodies (outer values they read become captures),
// run by the reference interpreter, exported and imported again; malformed bodies and deep nesting refused
// with errors naming the node.
#include <QtTest>

#include "frontend/onnx/onnx_import.h"
#include "ir/error.h"
#include "ops/specialize.h"
#include "onnx_import_error.h"
#include "onnx_model_maker.h"
#include "ops/registry.h"
#include "runtime/reference/interpreter.h"

using namespace tessera;
using namespace tessera::testing;
using TP = onnx::TensorProto;

namespace {

// A graph attribute of `n`; the ModelMaker then writes into it until restored (see Body).
onnx::GraphProto* graphAttr(onnx::NodeProto* n, const std::string& name) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  return a->mutable_g();
}

// Points the maker at a body while alive, so that its node/input/output helpers fill the body.
class Body {
 public:
  Body(ModelMaker& m, onnx::GraphProto* g) : m_(m), saved_(m.graph) { m.graph = g; }
  ~Body() { m_.graph = saved_; }

 private:
  ModelMaker& m_;
  onnx::GraphProto* saved_;
};

void addConstant(ModelMaker& m, const std::string& name, int32_t type, const std::vector<int64_t>& dims,
                 const std::vector<int64_t>& ints) {
  auto* n = m.node("Constant", {}, {name});
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : ints) t->add_int64_data(v);
  if (type == TP::FLOAT) {
    t->clear_int64_data();
    for (int64_t v : ints) t->add_float_data(float(v));
  }
}

// y = If(cond) then x + w else x * w, where both branches read outer values x and w.
ModelMaker ifModel() {
  ModelMaker m;
  m.input("cond", TP::BOOL, {});
  m.floatInput("x", {3});
  m.floatInitializer("w", {3}, {1, 2, 3});
  auto* n = m.node("If", {"cond"}, {"y"}, "choose");
  {
    Body b(m, graphAttr(n, "then_branch"));
    m.node("Add", {"x", "w"}, {"sum"});
    m.output("sum");
  }
  {
    Body b(m, graphAttr(n, "else_branch"));
    m.node("Mul", {"x", "w"}, {"product"});
    m.output("product");
  }
  m.output("y");
  return m;
}

// acc, rows = Loop(M = 3, cond = true, acc0): acc += x * (i + 1) each iteration, rows stacks acc; x is outer.
ModelMaker loopModel() {
  ModelMaker m(16);
  m.floatInput("acc0", {2});
  m.floatInput("x", {2});
  m.initializer("M", TP::INT64, {})->add_int64_data(3);
  m.initializer("go", TP::BOOL, {})->add_int32_data(1);
  auto* n = m.node("Loop", {"M", "go", "acc0"}, {"acc", "rows"}, "loop");
  {
    Body b(m, graphAttr(n, "body"));
    m.input("i", TP::INT64, {});
    m.input("c", TP::BOOL, {});
    m.floatInput("a", {2});
    addConstant(m, "one", TP::INT64, {}, {1});
    m.node("Add", {"i", "one"}, {"i1"});
    auto* cast = m.node("Cast", {"i1"}, {"f"});
    setInt(cast, "to", TP::FLOAT);
    m.node("Mul", {"x", "f"}, {"step"});
    m.node("Add", {"a", "step"}, {"a_out"});
    m.node("Identity", {"c"}, {"c_out"});
    m.node("Identity", {"a_out"}, {"row"});
    m.output("c_out");
    m.output("a_out");
    m.output("row");
  }
  m.output("acc");
  m.output("rows");
  return m;
}

// The body both Scan models share: acc + row as the next state and as the scan output; the node's outputs s, sums.
void runningSumBody(ModelMaker& m, onnx::NodeProto* n) {
  {
    Body b(m, graphAttr(n, "body"));
    m.floatInput("acc", {2});
    m.floatInput("row", {2});
    m.node("Add", {"acc", "row"}, {"next"});
    m.node("Identity", {"next"}, {"out"});
    m.output("next");
    m.output("out");
  }
  m.output("s");
  m.output("sums");
}

// Running sums of the rows of x (a [3, 2] input), state s; scan output: the running sum after each row.
ModelMaker scanModel(int64_t direction) {
  ModelMaker m(16);
  m.floatInput("s0", {2});
  m.floatInput("x", {3, 2});
  auto* n = m.node("Scan", {"s0", "x"}, {"s", "sums"}, "scan");
  setInt(n, "num_scan_inputs", 1);
  setInts(n, "scan_input_directions", {direction});
  runningSumBody(m, n);
  return m;
}

// Scan of opset 8: running sums over a batch of 2 rows of x [2, 3, 2] (batch axis first), state s0 [2, 2];
// `lens` names a sequence_lens input ("" for none).
ModelMaker batchedScanModel(const std::string& lens) {
  ModelMaker m(8);
  m.floatInput("s0", {2, 2});
  m.floatInput("x", {2, 3, 2});
  if (!lens.empty()) m.input(lens, TP::INT32, {2});
  auto* n = m.node("Scan", {lens, "s0", "x"}, {"s", "sums"}, "scan");
  setInt(n, "num_scan_inputs", 1);
  setInts(n, "directions", {1});  // the opset-8 name of scan_input_directions
  runningSumBody(m, n);
  return m;
}

Tensor floats(Shape shape, std::vector<double> v) { return Tensor::fromDoubles(DType::F32, std::move(shape), v); }
Tensor boolean(bool b) { return Tensor::fromInts(DType::Bool, {}, std::vector<int64_t>{b}); }

}  // namespace

class TestOnnxControlFlow : public QObject {
  Q_OBJECT
 private slots:
  // If's branches read x and w from the outer graph: the node passes them as captures after cond.
  void ifCapturesOuterValuesAndRunsTheChosenBranch() {
    Graph g = importOnnxBytes(ifModel().bytes(), "if.onnx");
    Node* n = g.findNode("choose");
    QVERIFY(n);
    QCOMPARE(n->numInputs(), size_t(3));
    QCOMPARE(n->input(1)->name(), std::string("x"));
    QCOMPARE(n->input(2)->name(), std::string("w"));
    QCOMPARE(n->attr("then_branch")->g().numCaptures(), size_t(2));
    QCOMPARE(n->output(0)->type().toString(), std::string("f32[3]"));
    QVERIFY(opTraits("If").subgraphs);
    Tensor x = floats({3}, {10, 20, 30});
    QCOMPARE(runReference(g, {boolean(true), x}).outputs[0].toDoubles(), (std::vector<double>{11, 22, 33}));
    QCOMPARE(runReference(g, {boolean(false), x}).outputs[0].toDoubles(), (std::vector<double>{10, 40, 90}));
  }

  // Three iterations: acc = acc0 + x*1 + x*2 + x*3; the scan output holds acc after each iteration.
  void loopCarriesValuesAndStacksScanOutputs() {
    Graph g = importOnnxBytes(loopModel().bytes(), "loop.onnx");
    QCOMPARE(g.findValue("rows")->type().toString(), std::string("f32[3,2]"));
    auto r = runReference(g, {floats({2}, {0, 100}), floats({2}, {1, 2})});
    QCOMPARE(r.outputs[0].toDoubles(), (std::vector<double>{6, 112}));
    QCOMPARE(r.outputs[1].toDoubles(), (std::vector<double>{1, 102, 3, 106, 6, 112}));
  }

  // Forward and reverse directions over the rows of x.
  void scanRunsOverSlicesInEitherDirection() {
    Tensor x = floats({3, 2}, {1, 2, 3, 4, 5, 6});
    Graph forward = importOnnxBytes(scanModel(0).bytes(), "scan.onnx");
    auto f = runReference(forward, {floats({2}, {0, 0}), x});
    QCOMPARE(f.outputs[0].toDoubles(), (std::vector<double>{9, 12}));
    QCOMPARE(f.outputs[1].toDoubles(), (std::vector<double>{1, 2, 4, 6, 9, 12}));
    Graph reverse = importOnnxBytes(scanModel(1).bytes(), "scan.onnx");
    auto b = runReference(reverse, {floats({2}, {0, 0}), x});
    QCOMPARE(b.outputs[1].toDoubles(), (std::vector<double>{5, 6, 8, 10, 9, 12}));  // last row first
  }

  // Opset 8's batched Scan becomes a Scan of the later form per batch row, the rows taken and put back.
  void batchedScanOfOpset8RunsEachRow() {
    Graph g = importOnnxBytes(batchedScanModel("").bytes(), "scan8.onnx");
    int scans = 0;
    for (const Node* n : g.nodes()) scans += n->op() == "Scan";
    QCOMPARE(scans, 2);
    Tensor x = floats({2, 3, 2}, {1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 50, 60});
    auto r = runReference(g, {floats({2, 2}, {0, 0, 100, 100}), x});
    QCOMPARE(r.outputs[0].shape(), (Shape{2, 2}));
    QCOMPARE(r.outputs[0].toDoubles(), (std::vector<double>{9, 12, 190, 220}));
    QCOMPARE(r.outputs[1].shape(), (Shape{2, 3, 2}));  // reversed: the last row of each sequence first
    QCOMPARE(r.outputs[1].toDoubles(), (std::vector<double>{5, 6, 8, 10, 9, 12, 150, 160, 180, 200, 190, 220}));
    EXPECT_ERROR(batchedScanModel("lens").bytes(), "node 'scan' (Scan, opset 8): sequence_lens 'lens' is not supported");
  }

  // A Loop body holding an If that reads a value of the model's graph: the Loop captures it for the If.
  void nestedBodiesCaptureThroughEveryLevel() {
    ModelMaker m(16);
    m.floatInput("x", {2});
    m.initializer("M", TP::INT64, {})->add_int64_data(2);
    auto* loop = m.node("Loop", {"M", "", "x"}, {"y"}, "outer");
    {
      Body b(m, graphAttr(loop, "body"));
      m.input("i", TP::INT64, {});
      m.input("c", TP::BOOL, {});
      m.floatInput("a", {2});
      auto* inner = m.node("If", {"c"}, {"a2"}, "inner");
      {
        Body t(m, graphAttr(inner, "then_branch"));
        m.node("Add", {"a", "x"}, {"t"});
        m.output("t");
      }
      {
        Body e(m, graphAttr(inner, "else_branch"));
        m.node("Identity", {"a"}, {"e"});
        m.output("e");
      }
      m.node("Identity", {"c"}, {"c2"});
      m.output("c2");
      m.output("a2");
    }
    m.output("y");
    Graph g = importOnnxBytes(m.bytes(), "nested.onnx");
    Node* n = g.findNode("outer");
    QCOMPARE(n->numInputs(), size_t(4));  // M, cond (omitted), x as carried, x as capture
    QVERIFY(!n->input(1));
    QCOMPARE(n->input(3)->name(), std::string("x"));
    auto r = runReference(g, {floats({2}, {1, 2})});
    QCOMPARE(r.outputs[0].toDoubles(), (std::vector<double>{3, 6}));  // x + x + x
  }

  // Export writes the bodies with their outer names; the import reads the same captures and results.
  void controlFlowSurvivesExportAndImport() {
    for (ModelMaker m : {ifModel(), loopModel(), scanModel(1)}) {
      Graph g = importOnnxBytes(m.bytes(), "model.onnx");
      Graph back = importOnnxBytes(exportOnnxBytes(g), "exported.onnx");
      QCOMPARE(back.numNodes(), g.numNodes());
      std::vector<Tensor> inputs = randomInputs(g, 7);
      if (g.inputs()[0]->dtype() == DType::Bool) inputs[0] = boolean(true);
      auto a = runReference(g, inputs).outputs, b = runReference(back, inputs).outputs;
      for (size_t i = 0; i < a.size(); ++i) QVERIFY(a[i].identical(b[i]));
    }
  }

  // Branches of different shapes are refused unless cond is a constant.
  void ifBranchesMustAgreeOnTypes() {
    ModelMaker m = ifModel();
    auto* elseBranch = m.graph->mutable_node(0)->mutable_attribute(1)->mutable_g();
    elseBranch->mutable_node(0)->set_op_type("ReduceSum");  // f32[1] instead of f32[3]
    elseBranch->mutable_node(0)->mutable_input()->RemoveLast();
    EXPECT_ERROR(m.bytes(), "node 'choose' (If): output 0 is f32[3] in then_branch but f32[1] in else_branch");
  }

  void loopCarriedValueMustKeepItsType() {
    ModelMaker m = loopModel();
    auto* body = m.graph->mutable_node(0)->mutable_attribute(0)->mutable_g();
    auto* concat = body->add_node();  // a_out becomes Concat(a, step): f32[4]
    concat->set_op_type("Concat");
    concat->add_input("a");
    concat->add_input("step");
    concat->add_output("a_cat");
    setInt(concat, "axis", 0);
    body->mutable_output(1)->set_name("a_cat");
    EXPECT_ERROR(m.bytes(), "node 'loop' (Loop): carried value 0 enters as f32[2] and leaves the body as f32[4]");
  }

  // A trip count that is not a constant leaves the scan outputs without a length: the Loop is specialized to
  // the trip count of the sample inputs (ops/specialize.h), 3 here.
  void loopScanOutputsTakeTheSampleTripCount() {
    ModelMaker m = loopModel();
    m.graph->clear_initializer();
    m.input("M", TP::INT64, {});
    m.input("go", TP::BOOL, {});
    OnnxImportOptions o;
    o.sampleInputs["M"] = Tensor::fromInts(DType::I64, {}, std::vector<int64_t>{3});
    o.sampleInputs["go"] = Tensor::fromInts(DType::Bool, {}, std::vector<int64_t>{1});
    Graph g = importOnnxBytes(m.bytes(), "loop.onnx", o);
    const Node* loop = g.findNode("loop");
    QVERIFY(loop && isSpecialized(*loop));
    QCOMPARE(loop->output(1)->shape()[0], int64_t(3));
  }

  // The body stops the loop early: the scan outputs' static length is then wrong, and the run says so.
  void earlyExitWithScanOutputsIsAClearRunError() {
    ModelMaker m = loopModel();
    auto* body = m.graph->mutable_node(0)->mutable_attribute(0)->mutable_g();
    for (auto& node : *body->mutable_node())
      if (node.output(0) == "c_out") {  // c_out = i < 1
        node.set_op_type("Less");
        node.set_input(0, "i");
        node.add_input("one");
      }
    Graph g = importOnnxBytes(m.bytes(), "loop.onnx");
    try {
      runReference(g, {floats({2}, {0, 0}), floats({2}, {1, 1})});
      QFAIL("expected an error");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).contains("node 'loop' (Loop): ran 2 iterations, but its scan outputs were given a "
                                          "static length of 3"), e.what());
    }
  }

  void bodyReadingAnUndefinedNameNamesTheNode() {
    ModelMaker m = ifModel();
    m.graph->mutable_node(0)->mutable_attribute(0)->mutable_g()->mutable_node(0)->set_input(1, "nowhere");
    EXPECT_ERROR(m.bytes(), "node 'choose' (If): input 2 'nowhere' is not defined");
  }

  // 20 Ifs each inside the previous one's then_branch: refused at the 17th level, naming the limit (protobuf's
  // own recursion limit stops a file at about 32 levels).
  void deepNestingIsRefused() {
    ModelMaker m;
    m.input("c", TP::BOOL, {});
    onnx::GraphProto* g = m.graph;
    for (int level = 0; level < 20; ++level) {
      auto* n = g->add_node();
      n->set_op_type("If");
      n->add_input("c");
      n->add_output("y" + std::to_string(level));
      g->add_output()->set_name("y" + std::to_string(level));
      auto* e = graphAttr(n, "else_branch");
      e->add_output()->set_name("c");
      g = graphAttr(n, "then_branch");
    }
    g->add_output()->set_name("c");
    EXPECT_ERROR(m.bytes(), "levels deep (Tessera reads at most 16)");
  }

  // Loop runs M iterations whatever its operands: never evaluated at compile time; If and Scan are.
  void loopsAreNeverEvaluatedAtCompileTime() {
    Graph g = importOnnxBytes(loopModel().bytes(), "loop.onnx");
    QVERIFY(!evalCostBounded(*g.findNode("loop")));
    Graph s = importOnnxBytes(scanModel(0).bytes(), "scan.onnx");
    QVERIFY(evalCostBounded(*s.findNode("scan")));
  }
};

QTEST_MAIN(TestOnnxControlFlow)
#include "test_onnx_control_flow.moc"
