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
