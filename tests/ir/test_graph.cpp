#include <QtTest>

#include <cmath>

#include "ir/error.h"
#include "ir/graph.h"
#include "ir/tensor.h"

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
  // Removing nodes and values empties their slots (compacted once half are empty): what is left keeps its
  // insertion order in nodes(), values(), topoOrder() and a clone, and new nodes go after it.
  void removalKeepsOrder() {
    Graph g;
    Value* x = g.addInput("x", {DType::F32, {2}});
    std::vector<Node*> chain;
    Value* v = x;
    for (int i = 0; i < 4; ++i) {
      chain.push_back(g.addNode("Relu", {v}, {"v" + std::to_string(i)}, {}, "n" + std::to_string(i)));
      v = chain.back()->output(0);
    }
    std::vector<Node*> side;  // readers of x, removed again
    for (int i = 0; i < 12; ++i) side.push_back(g.addNode("Neg", {x}, {"s" + std::to_string(i)}, {}, "s" + std::to_string(i)));
    g.addOutput(v);
    Value* unused = g.addInitializer("w", Tensor::scalar(DType::F32, 1));
    // 16 nodes: the 8th removal empties half the slots (a compaction); the last two find theirs after it.
    for (int i : {1, 4, 6, 0, 3, 7, 8, 9, 11, 10}) g.removeNode(side[size_t(i)]);
    g.removeValue(unused);
    auto ids = [](const std::vector<Node*>& nodes) {
      QStringList out;
      for (const Node* n : nodes) out << QString::fromStdString(n->id());
      return out.join(" ");
    };
    QString expected = "n0 n1 n2 n3 s2 s5";
    QCOMPARE(ids(g.nodes()), expected);
    QCOMPARE(ids(g.topoOrder()), expected);  // ready nodes by insertion index
    QCOMPARE(g.numNodes(), size_t(6));
    QVERIFY(!g.findValue("w") && !g.findNode("s0") && g.findValue("s5"));
    QCOMPARE(g.values().size(), size_t(7));  // x and the 6 outputs
    Graph c = g.clone();
    QCOMPARE(ids(c.nodes()), expected);
    g.addNode("Relu", {x}, {"late"}, {}, "late");
    QCOMPARE(ids(g.nodes()), expected + " late");
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
  // Every float8 code decodes and encodes back to itself (NaNs to the one NaN of their format); the largest
  // finite values, the smallest subnormal, ties to even, saturation and the FNUZ zero follow ONNX.
  void float8Conversions() {
    for (DType t : {DType::F8E4M3FN, DType::F8E4M3FNUZ, DType::F8E5M2, DType::F8E5M2FNUZ}) {
      QVERIFY(isFloat(t) && isFloat8(t) && !isInteger(t));
      QCOMPARE(dtypeSize(t), size_t(1));
      for (int b = 0; b < 256; ++b) {
        double v = float8ToDouble(uint8_t(b), t);
        if (std::isnan(v)) QVERIFY(std::isnan(float8ToDouble(toFloat8(v, t), t)));
        else QCOMPARE(int(toFloat8(v, t, false)), b);
      }
    }
    QCOMPARE(float8ToDouble(0x7E, DType::F8E4M3FN), 448.0);
    QVERIFY(std::isnan(float8ToDouble(0x7F, DType::F8E4M3FN)));
    QCOMPARE(float8ToDouble(0x7F, DType::F8E4M3FNUZ), 240.0);
    QVERIFY(std::isnan(float8ToDouble(0x80, DType::F8E4M3FNUZ)));
    QCOMPARE(float8ToDouble(0x7B, DType::F8E5M2), 57344.0);
    QVERIFY(std::isinf(float8ToDouble(0x7C, DType::F8E5M2)));
    QCOMPARE(float8ToDouble(0x01, DType::F8E4M3FN), std::ldexp(1.0, -9));  // smallest subnormal
    QCOMPARE(int(toFloat8(464, DType::F8E4M3FN, false)), 0x7E);  // the tie between 448 and 480 goes to even
    QVERIFY(std::isnan(float8ToDouble(toFloat8(465, DType::F8E4M3FN, false), DType::F8E4M3FN)));
    QCOMPARE(int(toFloat8(1e6, DType::F8E4M3FN)), 0x7E);   // saturates
    QCOMPARE(int(toFloat8(-INFINITY, DType::F8E5M2)), 0xFB);  // -57344
    QCOMPARE(int(toFloat8(-INFINITY, DType::F8E5M2, false)), 0xFC);  // -inf
    QCOMPARE(int(toFloat8(-0.0, DType::F8E5M2FNUZ)), 0x00);  // no negative zero
    QCOMPARE(int(toFloat8(1.0 + 1.0 / 16, DType::F8E4M3FN)), 0x38);  // 1 + 1/16: a tie, down to 1.0 (even)
    Tensor x(DType::F8E5M2, {2});
    x.setDouble(0, 3.0);
    x.setDouble(1, -0.75);
    QCOMPARE(x.toDoubles(), (std::vector<double>{3.0, -0.75}));
    QCOMPARE(parseDType("f8e4m3fnuz"), std::optional<DType>(DType::F8E4M3FNUZ));
  }
  // 4-bit integers wrap when stored, as ONNX's Cast to them does (-9 is 7, 15 is -1 for i4; 16 is 0 for u4).
  void int4ValuesWrap() {
    Tensor i4 = Tensor::fromDoubles(DType::I4, {4}, std::vector<double>{-9, -8, 7.9, 15});
    QCOMPARE(i4.toInts(), (std::vector<int64_t>{7, -8, 7, -1}));
    Tensor u4 = Tensor::fromInts(DType::U4, {3}, std::vector<int64_t>{-1, 15, 16});
    QCOMPARE(u4.toInts(), (std::vector<int64_t>{15, 15, 0}));
    QVERIFY(isInteger(DType::I4) && isSigned(DType::I4) && !isSigned(DType::U4) && isInt4(DType::U4));
  }
  void halfConversions() {
    for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f})
      QCOMPARE(halfToFloat(floatToHalf(f)), f);
    QCOMPARE(bf16ToFloat(floatToBf16(1.0f)), 1.0f);
  }
};

QTEST_GUILESS_MAIN(TestGraph)
#include "test_graph.moc"
