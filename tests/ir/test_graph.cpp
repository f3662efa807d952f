#include <QtTest>

#include "ir/error.h"
#include "ir/graph.h"

using namespace tessera;

class TestGraph : public QObject {
  Q_OBJECT
 private slots:
  void uniqueIds() {
    Graph g;
    Value* x = g.addInput("x", {DType::F32, {2}});
    Node* a = g.addNode("Relu", {x}, {"y"}, {}, "relu");
    Node* b = g.addNode("Relu", {a->output(0)}, {"y"}, {}, "relu");
    QCOMPARE(QString::fromStdString(a->id()), QString("relu"));
    QCOMPARE(QString::fromStdString(b->id()), QString("relu_1"));
    QCOMPARE(QString::fromStdString(b->output(0)->name()), QString("y_1"));
    QCOMPARE(x->uses().size(), size_t(1));
  }
  void topoOrderDetectsCycle() {
    Graph g;
    Value* x = g.addInput("x", {DType::F32, {2}});
    Node* a = g.addNode("Add", {x, x}, {"a"}, {}, "first");
    Node* b = g.addNode("Relu", {a->output(0)}, {"b"}, {}, "second");
    g.setNodeInput(a, 1, b->output(0));
    try {
      g.topoOrder();
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY(QString(e.what()).contains("cycle through node 'first'"));
    }
  }
  void cloneKeepsStructure() {
    Graph g;
    Value* x = g.addInput("x", {DType::F32, {2}});
    Node* a = g.addNode("Relu", {x}, {"y"}, {}, "r");
    g.addOutput(a->output(0));
    Graph c = g.clone();
    QCOMPARE(c.numNodes(), size_t(1));
    QVERIFY(c.findNode("r")->input(0) == c.inputs()[0]);
    QVERIFY(c.outputs()[0] == c.findNode("r")->output(0));
    QVERIFY(c.outputs()[0] != g.outputs()[0]);
  }
  // Captures are the last inputs; clone keeps them, binding one to data turns it into an initializer.
  void capturesFollowInputsAndSurviveClone() {
    Graph body("body");
    Value* a = body.addInput("a", {DType::F32, {2}});
    Value* w = body.addCapture("w", {DType::F32, {2}});
    body.addCapture("v", {DType::F32, {2}});
    QVERIFY_THROWS_EXCEPTION(Error, body.addInput("late", {DType::F32, {}}));
    body.addOutput(body.addNode("Add", {a, w}, {"y"})->output(0));
    QCOMPARE(body.numCaptures(), size_t(2));
    Graph copy = body.clone();
    QCOMPARE(copy.numCaptures(), size_t(2));
    copy.bindInput(copy.findValue("w"), Tensor(DType::F32, {2}));
    QCOMPARE(copy.numCaptures(), size_t(1));
    QCOMPARE(copy.inputs().size(), size_t(2));
    QVERIFY(copy.findValue("w")->initializer());
    QVERIFY(!copy.findValue("w")->isGraphInput());
    copy.bindInput(copy.findValue("a"), Tensor(DType::F32, {2}));
    QCOMPARE(copy.numCaptures(), size_t(1));  // a formal input: the captures stay
    QVERIFY_THROWS_EXCEPTION(Error, copy.bindInput(copy.findValue("y"), Tensor(DType::F32, {2})));
  }
  // A graph attribute is shared by copies and compares by identity.
  void graphAttributesAreShared() {
    auto body = std::make_shared<const Graph>("body");
    Attribute a(body), b(body), c(std::make_shared<const Graph>("body"));
    QCOMPARE(a.kind(), AttrKind::Graph);
    QVERIFY(a == b);
    QVERIFY(!(a == c));
    QCOMPARE(&a.g(), body.get());
    QVERIFY_THROWS_EXCEPTION(Error, Attribute(std::shared_ptr<const Graph>()));
    QVERIFY_THROWS_EXCEPTION(Error, Attribute(int64_t(1)).g());
  }
  void rejectsUnknownDType() {
    QVERIFY(!parseDType("f8").has_value());
    QVERIFY(parseDType("bf16") == DType::BF16);
  }
  void halfConversions() {
    for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f})
      QCOMPARE(halfToFloat(floatToHalf(f)), f);
    QCOMPARE(bf16ToFloat(floatToBf16(1.0f)), 1.0f);
  }
};

QTEST_GUILESS_MAIN(TestGraph)
#include "test_graph.moc"
