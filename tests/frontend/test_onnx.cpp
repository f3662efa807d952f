// ONNX import/export: hostile and malformed files, old operator forms, typed initializers, round trips.
#include <QtTest>

#include <cmath>
#include <filesystem>

#include <onnx/onnx-data_pb.h>

#include "frontend/onnx/onnx_import.h"
#include "ir/error.h"
#include "ir/random.h"
#include "layers/layer_tree.h"
#include "onnx_import_error.h"
#include "onnx_model_maker.h"
#include "ops/infer.h"
#include "ops/verify.h"
#include "runtime/reference/interpreter.h"

using namespace tessera;
using namespace tessera::testing;
using TP = onnx::TensorProto;

namespace {

std::vector<double> values(const Tensor& t) { return t.toDoubles(); }

Tensor floats(Shape shape, std::vector<double> v) { return Tensor::fromDoubles(DType::F32, std::move(shape), v); }

// A description of a graph precise enough to compare two imports: nodes, attributes, types, initializers.
std::string describe(const Graph& g) {
  std::string out;
  for (const Value* v : g.inputs()) out += "input " + v->name() + " " + v->type().toString() + "\n";
  for (const Value* v : g.initializers())
    out += "init " + v->name() + " " + v->type().toString() + " #" + std::to_string(v->initializer()->hash()) + "\n";
  for (const Node* n : g.nodes()) {
    out += n->id() + " = " + n->op() + "(";
    for (const Value* in : n->inputs()) out += (in ? in->name() : "-") + ",";
    out += ") ->";
    for (const Value* o : n->outputs()) out += " " + o->name() + ":" + o->type().toString();
    for (const auto& [name, a] : n->attrs()) {
      out += " " + name + "=";
      if (a.kind() == AttrKind::Tensor) out += "tensor#" + std::to_string(a.t().hash());
      else if (a.kind() == AttrKind::Int) out += std::to_string(a.i());
      else if (a.kind() == AttrKind::Float) out += std::to_string(a.f());
      else if (a.kind() == AttrKind::Ints) for (int64_t i : a.ints()) out += std::to_string(i) + ",";
      else out += std::string(attrKindName(a.kind()));
    }
    out += "\n";
  }
  for (const Value* v : g.outputs()) out += "output " + v->name() + "\n";
  return out;
}

ModelMaker reluModel() {
  ModelMaker m;
  m.floatInput("x", {2, 3});
  m.node("Relu", {"x"}, {"y"}, "relu1");
  m.output("y");
  return m;
}

// A model-local function of domain "local", `name`(x) -> y, importing opset 18; its nodes are added after.
onnx::FunctionProto* addFunction(ModelMaker& m, const std::string& name, const std::vector<std::string>& attrs) {
  onnx::FunctionProto* f = m.model.add_functions();
  f->set_name(name);
  f->set_domain("local");
  f->add_input("x");
  f->add_output("y");
  for (const std::string& a : attrs) f->add_attribute(a);
  auto* imp = f->add_opset_import();
  imp->set_domain("");
  imp->set_version(18);
  return f;
}

onnx::NodeProto* addFunctionNode(onnx::FunctionProto* f, const std::string& op, const std::string& domain,
                                 const std::vector<std::string>& ins, const std::string& out, const std::string& name) {
  onnx::NodeProto* n = f->add_node();
  n->set_op_type(op);
  n->set_domain(domain);
  n->set_name(name);
  for (const std::string& i : ins) n->add_input(i);
  n->add_output(out);
  return n;
}

onnx::AttributeProto* refAttribute(onnx::NodeProto* n, const std::string& name, const std::string& ref) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_ref_attr_name(ref);
  a->set_type(onnx::AttributeProto::FLOAT);
  return a;
}

// Block(x, alpha) = Act(x, alpha) + x, Act(x, alpha) = -LeakyRelu(x, alpha), called with alpha 0.25 and without.
ModelMaker blocksModel() {
  ModelMaker m(18);
  auto* local = m.model.add_opset_import();
  local->set_domain("local");
  local->set_version(1);
  onnx::FunctionProto* act = addFunction(m, "Act", {"alpha"});
  refAttribute(addFunctionNode(act, "LeakyRelu", "", {"x"}, "t", "leaky"), "alpha", "alpha");
  addFunctionNode(act, "Neg", "", {"t"}, "y", "neg");
  onnx::FunctionProto* block = addFunction(m, "Block", {"alpha"});
  refAttribute(addFunctionNode(block, "Act", "local", {"x"}, "a", "act"), "alpha", "alpha");
  addFunctionNode(block, "Add", "", {"a", "x"}, "y", "add");
  m.floatInput("x", {4});
  onnx::NodeProto* b0 = m.node("Block", {"x"}, {"h0"}, "/blocks/b.0");
  b0->set_domain("local");
  setFloat(b0, "alpha", 0.25f);
  m.node("Block", {"h0"}, {"h1"}, "/blocks/b.1")->set_domain("local");
  m.output("h1");
  return m;
}

}  // namespace

class TestOnnx : public QObject {
  Q_OBJECT
 private slots:
  // Model-local functions are inlined: each call's nodes are named under the call (so the calls become layers),
  // attributes bound from the call (left out when the call has none), a nested call expanded, the values right.
  void localFunctionsAreInlined() {
    ModelMaker m = blocksModel();
    Graph g = importOnnxBytes(m.bytes(), "model.onnx");
    QCOMPARE(g.numNodes(), size_t(6));
    QVERIFY(g.findNode("/blocks/b.0/act/neg") && g.findNode("/blocks/b.1/add"));
    QCOMPARE(g.findNode("/blocks/b.0/act/leaky")->attr("alpha")->f(), 0.25);  // the call's value
    QVERIFY(!g.findNode("/blocks/b.1/act/leaky")->attr("alpha"));  // LeakyRelu's own default, 0.01
    // b.0: -leaky(x, .25) + x = [-1.5, -0.75, 0, 0]; b.1: -leaky(h0, .01) + h0 = [-1.485, -0.7425, 0, 0]
    const std::vector<double> out = values(runReference(g, {floats({4}, {-2, -1, 1, 2})}).outputs[0]);
    const std::vector<double> expected{-1.485, -0.7425, 0, 0};
    for (size_t i = 0; i < expected.size(); ++i) QVERIFY2(std::abs(out[i] - expected[i]) < 1e-6, qPrintable(QString::number(out[i])));
    const LayerTree t = LayerTree::build(g);
    QVERIFY(t.find("b.0/act") > 0);
    QCOMPARE(t.layer(t.find("b.1")).repeatCount, 2);
  }

  // A torch.export-based PyTorch export names nodes `node_Relu_3` and keeps the module path in the node's
  // metadata (`pkg.torch.onnx.name_scopes`, field 9 of NodeProto, unknown to the ONNX library here): the nodes
  // are named under it, TorchScript style, so the layers come back; a list index joins its list ("layer1.0"),
  // a TorchScript-scoped name is kept, and metadata that is not a list of strings is ignored.
  void torchExportScopesNameTheNodes() {
    ModelMaker m;
    m.floatInput("x", {4});
    auto scoped = [](onnx::NodeProto* n, const std::string& scopes) {
      onnx::StringStringEntryProto e;
      e.set_key("pkg.torch.onnx.name_scopes");
      e.set_value(scopes);
      n->GetReflection()->MutableUnknownFields(n)->AddLengthDelimited(9, e.SerializeAsString());
    };
    scoped(m.node("Relu", {"x"}, {"a"}, "node_Relu_0"), "['', 'layer1', 'layer1.0', 'layer1.0.act', 'relu']");
    scoped(m.node("Neg", {"a"}, {"b"}, "node_Neg_1"), "['', 'layer1', 'layer1.1', 'layer1.1.act', 'neg']");
    scoped(m.node("Relu", {"b"}, {"c"}, "/head/Relu"), "['', 'other', 'relu']");
    scoped(m.node("Neg", {"c"}, {"d"}, "node_Neg_2"), "not a list");
    m.output("d");
    Graph g = importOnnxBytes(m.bytes(), "torch_export.onnx");
    QVERIFY(g.findNode("/layer1/layer1.0/act/node_Relu_0"));
    QVERIFY(g.findNode("/layer1/layer1.1/act/node_Neg_1"));
    QVERIFY(g.findNode("/head/Relu"));
    QVERIFY(g.findNode("node_Neg_2"));
    const LayerTree t = LayerTree::build(g);
    QVERIFY(t.find("layer1") > 0);
    QCOMPARE(t.layer(t.find("layer1")).nodeCount, 2);
  }

  void badFunctionCallsAreRefused() {
    ModelMaker self = blocksModel();
    onnx::FunctionProto* act = self.model.mutable_functions(0);
    addFunctionNode(act, "Act", "local", {"y"}, "z", "again");  // Act calls itself
    EXPECT_ERROR(self.bytes(), "function 'Act': calls nested more than 16 deep");
    ModelMaker wide = blocksModel();
    wide.graph->mutable_node(1)->add_input("x");
    EXPECT_ERROR(wide.bytes(), "node '/blocks/b.1' calls function 'Block' with 2 inputs and 1 outputs; it takes 1 and gives 1");
  }

  void importsSmallModel() {
    Graph g = importOnnxBytes(reluModel().bytes(), "model.onnx");
    QCOMPARE(g.numNodes(), size_t(1));
    QCOMPARE(QString::fromStdString(g.nodes()[0]->id()), QString("relu1"));
    QCOMPARE(g.outputs()[0]->type(), (TensorType{DType::F32, {2, 3}}));
  }

  void manyUnnamedNodesGetIdsInLinearTime() {
    ModelMaker m;
    auto name = [](int i) { return QString("v%1").arg(i).toStdString(); };
    m.floatInput(name(0), {1});
    const int n = 20000;
    for (int i = 0; i < n; ++i) m.node("Relu", {name(i)}, {name(i + 1)});
    m.output(name(n));
    QElapsedTimer timer;
    timer.start();
    Graph g = importOnnxBytes(m.bytes(), "model.onnx");
    QVERIFY2(timer.elapsed() < 10000, "quadratic id assignment?");
    QVERIFY(g.findNode("relu") && g.findNode("relu_1") && g.findNode("relu_19999"));
    QCOMPARE(g.outputs()[0]->producer()->id(), std::string("relu_19999"));
  }

  // A few hundred bytes per node of foldable 64 Ki-element constants must not make inference hold them all.
  void constantFoldingIsBounded() {
    ModelMaker m;
    m.floatInput("x", {1});
    auto* shape = m.initializer("s", TP::INT64, {2});
    shape->add_int64_data(256);
    shape->add_int64_data(256);
    m.node("ConstantOfShape", {"s"}, {"c0"});
    auto name = [](int i) { return QString("c%1").arg(i).toStdString(); };
    const int n = 400;
    for (int i = 0; i < n; ++i) m.node("Relu", {name(i)}, {name(i + 1)});
    m.node("Add", {"x", name(n)}, {"y"});
    m.output("y");
    Graph g = importOnnxBytes(m.bytes(), "model.onnx");
    QCOMPARE(g.outputs()[0]->shape(), (Shape{256, 256}));
    ConstantTable constants = inferTypes(g);
    QVERIFY(constants.foldedElements() <= kMaxFoldTotalElements);
    QVERIFY(constants.find(g.findValue(name(10))));   // folded while within the budget
    QVERIFY(!constants.find(g.findValue(name(n))));   // not once the budget is spent
  }

  void truncatedFile() {
    std::string bytes = reluModel().bytes();
    for (size_t cut : {bytes.size() / 2, bytes.size() - 3, size_t(1)}) {
      QString message = importError(bytes.substr(0, cut));
      QVERIFY2(message.startsWith("model.onnx: "), qPrintable(message));
    }
    QVERIFY(importError(bytes.substr(0, bytes.size() - 3)).contains("not a valid ONNX model"));
  }

  void randomBytesNeverCrash() {
    int errors = 0;
    for (uint64_t seed = 0; seed < 300; ++seed) {
      Tensor noise = randomUniform({DType::U8, {int64_t(16 + seed * 7)}}, seed, 0, 256);
      std::string bytes(reinterpret_cast<const char*>(noise.bytes().data()), noise.byteSize());
      errors += !importError(bytes).isEmpty();
    }
    QCOMPARE(errors, 300);  // random bytes never make a model with a graph and an opset
  }

  void unknownOpNamesOpDomainOpsetNode() {
    ModelMaker m(13);
    m.floatInput("x", {2});
    m.node("FooBar", {"x"}, {"y"}, "mynode");
    m.output("y");
    EXPECT_ERROR(m.bytes(), "node 'mynode' uses unsupported op 'FooBar' (domain 'ai.onnx', opset 13)");

    ModelMaker c(13);
    auto* imp = c.model.add_opset_import();
    imp->set_domain("com.acme");
    imp->set_version(2);
    c.floatInput("x", {2});
    c.node("Relu", {"x"}, {"y"})->set_domain("com.acme");
    c.output("y");
    EXPECT_ERROR(c.bytes(), "node 'relu' uses unsupported op 'Relu' (domain 'com.acme', opset 2)");
  }

  void opsetOutOfRange() {
    ModelMaker m(28);
    m.floatInput("x", {2});
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    EXPECT_ERROR(m.bytes(), "opset 28 of the default domain is not supported (Tessera reads 1 to 27)");
  }

  // Opset 1: consumed_inputs dropped, suffix broadcasting read as numpy's, Cast's type name read as its code,
  // Concat's axis defaulting to 1; broadcasting at an axis refused naming the node.
  void opset1FormsAreUpgraded() {
    ModelMaker m(1);
    m.floatInput("a", {2, 3});
    m.floatInput("b", {3});
    auto* add = m.node("Add", {"a", "b"}, {"s"}, "add");
    setInts(add, "consumed_inputs", {0, 0});
    setInt(add, "broadcast", 1);
    auto* cast = m.node("Cast", {"s"}, {"c"}, "cast");
    auto* to = cast->add_attribute();
    to->set_name("to");
    to->set_type(onnx::AttributeProto::STRING);
    to->set_s("INT32");
    m.node("Concat", {"a", "a"}, {"cat"}, "concat");
    m.output("c");
    m.output("cat");
    Graph g = importOnnxBytes(m.bytes(), "old.onnx");
    QVERIFY(!g.findNode("add")->hasAttr("consumed_inputs") && !g.findNode("add")->hasAttr("broadcast"));
    QCOMPARE(g.findValue("c")->type().toString(), std::string("i32[2,3]"));
    QCOMPARE(g.findValue("cat")->type().toString(), std::string("f32[2,6]"));
    auto r = runReference(g, {floats({2, 3}, {1, 2, 3, 4, 5, 6}), floats({3}, {10, 20, 30})});
    QCOMPARE(values(r.outputs[0]), (std::vector<double>{11, 22, 33, 14, 25, 36}));
    setInt(add, "axis", 0);
    EXPECT_ERROR(m.bytes(), "node 'add' (Add): broadcasting input 1 at axis 0 (opset 1) is not supported");
  }

  void negativeAndSymbolicDims() {
    ModelMaker m;
    m.floatInput("x", {-2, 3});
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    EXPECT_ERROR(m.bytes(), "graph input 'x': dim 0 is negative (-2)");

    ModelMaker s;
    auto* vi = s.floatInput("x", {2, 3});
    vi->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_param("N");
    s.node("Relu", {"x"}, {"y"});
    s.output("y");
    EXPECT_ERROR(s.bytes(), "graph input 'x': dim 1 is symbolic ('N')");

    ModelMaker w;
    w.floatInput("x", {2});
    w.initializer("w", TP::FLOAT, {2, -1});
    w.node("Relu", {"x"}, {"y"});
    w.output("y");
    EXPECT_ERROR(w.bytes(), "initializer 'w': dim 1 is negative (-1)");
  }

  void hugeDimsDoNotAllocate() {
    ModelMaker m;
    m.floatInput("x", {int64_t(1) << 40, int64_t(1) << 40});
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    EXPECT_ERROR(m.bytes(), "graph input 'x': shape [1099511627776,1099511627776] is larger than the 16 GiB limit");

    // 4 GiB of floats declared, 4 bytes present: refused on the length check, before any allocation.
    ModelMaker w;
    w.floatInput("x", {1});
    w.floatInitializer("w", {int64_t(1) << 30}, {1.0f});
    w.node("Add", {"x", "w"}, {"y"});
    w.output("y");
    EXPECT_ERROR(w.bytes(), "initializer 'w': raw_data holds 4 bytes but f32[1073741824] needs 4294967296");

    ModelMaker o;
    o.floatInput("x", {1});
    o.initializer("w", TP::FLOAT, {INT64_MAX, INT64_MAX});
    o.node("Relu", {"x"}, {"y"});
    o.output("y");
    EXPECT_ERROR(o.bytes(), "initializer 'w': shape");
  }

  void dataLengthMustMatchShape() {
    ModelMaker m;
    m.floatInput("x", {2, 3});
    m.floatInitializer("w", {2, 3}, {1, 2, 3, 4, 5});
    m.node("Add", {"x", "w"}, {"y"});
    m.output("y");
    EXPECT_ERROR(m.bytes(), "initializer 'w': raw_data holds 20 bytes but f32[2,3] needs 24");

    ModelMaker l;
    l.floatInput("x", {2});
    l.floatInitializer("w", {2}, {1, 2, 3});
    l.node("Add", {"x", "w"}, {"y"});
    l.output("y");
    EXPECT_ERROR(l.bytes(), "initializer 'w': raw_data holds 12 bytes but f32[2] needs 8");

    ModelMaker t;
    t.floatInput("x", {2});
    auto* w = t.initializer("w", TP::FLOAT, {2});
    w->add_float_data(1);
    t.node("Add", {"x", "w"}, {"y"});
    t.output("y");
    EXPECT_ERROR(t.bytes(), "initializer 'w': float_data holds 1 values but f32[2] needs 2");
  }

  void missingInputNamesNodeAndValue() {
    ModelMaker m;
    m.floatInput("x", {2});
    m.node("Add", {"x", "nope"}, {"y"}, "adder");
    m.output("y");
    EXPECT_ERROR(m.bytes(), "node 'adder' (Add): input 1 'nope' is not defined");

    ModelMaker o;
    o.floatInput("x", {2});
    o.node("Relu", {"x"}, {"y"});
    o.output("z");
    EXPECT_ERROR(o.bytes(), "graph output 'z' is not defined");
  }

  void duplicateValueNames() {
    ModelMaker m;
    m.floatInput("x", {2});
    m.node("Relu", {"x"}, {"y"}, "a");
    m.node("Relu", {"x"}, {"y"}, "b");
    m.output("y");
    EXPECT_ERROR(m.bytes(), "value 'y' is defined twice (again as an output of node 'b')");
  }

  void cycle() {
    ModelMaker m;
    m.floatInput("x", {2});
    m.node("Add", {"x", "b"}, {"a"}, "first");
    m.node("Relu", {"a"}, {"b"}, "second");
    m.output("b");
    EXPECT_ERROR(m.bytes(), "cycle through node");
  }

  void unsupportedElementTypes() {
    ModelMaker m;  // strings import (docs/operators.md, Strings); a numeric op refuses them by name
    m.input("s", TP::STRING, {2});
    m.node("Relu", {"s"}, {"y"}, "r");
    m.output("y");
    EXPECT_ERROR(m.bytes(), "node 'r' (Relu): input 0 is a str[2]; Relu takes numbers, not strings");

    ModelMaker f;
    f.floatInput("x", {1});
    f.initializer("q", TP::COMPLEX128, {1})->set_raw_data(std::string(16, '\0'));
    f.node("Relu", {"x"}, {"y"});
    f.output("y");
    EXPECT_ERROR(f.bytes(), "initializer 'q': element type COMPLEX128 (15) is not supported");

    ModelMaker u;
    u.input("x", TP::COMPLEX64, {1});
    u.node("Relu", {"x"}, {"y"});
    u.output("y");
    EXPECT_ERROR(u.bytes(), "graph input 'x': element type COMPLEX64 (14) is not supported");
  }

  // 4-bit integers: two a byte in files, low nibble first, one a byte in Tensors; an odd count's last byte is
  // half used; a byte count that does not match is refused naming the initializer.
  void int4InitializersArePackedInFiles() {
    ModelMaker m;
    m.initializer("q", 22, {3})->set_raw_data(std::string("\x8f\x07", 2));  // -1, -8, 7
    m.initializer("u", 21, {2})->set_raw_data(std::string(1, '\xf1'));       // 1, 15
    m.node("Identity", {"q"}, {"y"});
    m.node("Identity", {"u"}, {"z"});
    m.output("y");
    m.output("z");
    Graph g = importOnnxBytes(m.bytes(), "int4.onnx");
    QCOMPARE(values(*g.findValue("q")->initializer()), (std::vector<double>{-1, -8, 7}));
    QCOMPARE(values(*g.findValue("u")->initializer()), (std::vector<double>{1, 15}));
    Graph back = importOnnxBytes(exportOnnxBytes(g), "exported.onnx");
    QVERIFY(back.findValue("q")->initializer()->identical(*g.findValue("q")->initializer()));
    auto* typed = m.initializer("t", 22, {3});  // int32_data: one packed byte an entry
    typed->add_int32_data(0x8f);
    typed->add_int32_data(0x07);
    m.node("Identity", {"t"}, {"w"});
    m.output("w");
    QCOMPARE(values(*importOnnxBytes(m.bytes(), "int4.onnx").findValue("t")->initializer()),
             (std::vector<double>{-1, -8, 7}));
    m.graph->mutable_initializer(0)->set_raw_data(std::string(3, '\0'));
    EXPECT_ERROR(m.bytes(), "initializer 'q': raw_data holds 3 bytes but i4[3] needs 2 (two 4-bit values a byte)");
  }

  // 2-bit integers: four a byte in files, element 4k in the lowest two bits of byte k; a count that is not a
  // multiple of four leaves the last byte partly used; int32_data holds one packed byte an entry.
  void int2InitializersArePackedInFiles() {
    ModelMaker m;
    m.initializer("q", 26, {5})->set_raw_data(std::string("\x39\x02", 2));  // 1, -2, -1, 0 | -2
    m.initializer("u", 25, {3})->set_raw_data(std::string(1, '\x39'));      // 1, 2, 3
    auto* typed = m.initializer("t", 26, {2});
    typed->add_int32_data(0x0E);  // -2, -1
    for (const char* name : {"q", "u", "t"}) {
      m.node("Identity", {name}, {std::string(name) + "_out"});
      m.output(std::string(name) + "_out");
    }
    Graph g = importOnnxBytes(m.bytes(), "int2.onnx");
    QCOMPARE(values(*g.findValue("q")->initializer()), (std::vector<double>{1, -2, -1, 0, -2}));
    QCOMPARE(values(*g.findValue("u")->initializer()), (std::vector<double>{1, 2, 3}));
    QCOMPARE(values(*g.findValue("t")->initializer()), (std::vector<double>{-2, -1}));
    Graph back = importOnnxBytes(exportOnnxBytes(g), "exported.onnx");
    for (const char* name : {"q", "u", "t"})
      QVERIFY(back.findValue(name)->initializer()->identical(*g.findValue(name)->initializer()));
    m.graph->mutable_initializer(0)->set_raw_data(std::string(1, '\0'));
    EXPECT_ERROR(m.bytes(), "initializer 'q': raw_data holds 1 bytes but i2[5] needs 2 (four 2-bit values a byte)");
    m.graph->mutable_initializer(0)->set_raw_data(std::string(2, '\0'));
    typed->add_int32_data(0);
    EXPECT_ERROR(m.bytes(),
                 "initializer 't': int32_data holds 2 values but i2[2] needs 1 (four 2-bit values an entry)");
  }

  // f4e2m1 packs as i4 does (codes, low nibble first); f8e8m0 is one code a byte, in raw_data or int32_data.
  void smallFloatInitializers() {
    ModelMaker m;
    m.initializer("f", 23, {3})->set_raw_data(std::string("\xe2\x0f", 2));  // 1, -4 | -6
    m.initializer("e", 24, {3})->set_raw_data(std::string("\x7f\x00\xff", 3));  // 1, 2^-127, NaN
    auto* typed = m.initializer("t", 24, {2});
    typed->add_int32_data(0x80);
    typed->add_int32_data(0x7C);
    for (const char* name : {"f", "e", "t"}) {
      m.node("Identity", {name}, {std::string(name) + "_out"});
      m.output(std::string(name) + "_out");
    }
    Graph g = importOnnxBytes(m.bytes(), "small.onnx");
    QCOMPARE(values(*g.findValue("f")->initializer()), (std::vector<double>{1, -4, -6}));
    std::vector<double> e = values(*g.findValue("e")->initializer());
    QVERIFY(e[0] == 1 && e[1] == std::ldexp(1.0, -127) && std::isnan(e[2]));
    QCOMPARE(values(*g.findValue("t")->initializer()), (std::vector<double>{2, 0.125}));
    Graph back = importOnnxBytes(exportOnnxBytes(g), "exported.onnx");
    for (const char* name : {"f", "e", "t"})
      QVERIFY(back.findValue(name)->initializer()->identical(*g.findValue(name)->initializer()));
    typed->set_int32_data(0, 256);
    EXPECT_ERROR(m.bytes(), "initializer 't': int32_data[0] = 256 does not fit f8e8m0");
  }

  void ir3InitializersListedAsInputs() {
    ModelMaker m(9, 3);
    m.floatInput("x", {2});
    m.floatInput("w", {2});
    m.floatInitializer("w", {2}, {10, 20});
    m.node("Add", {"x", "w"}, {"y"});
    m.output("y");
    Graph g = importOnnxBytes(m.bytes(), "model.onnx");
    QCOMPARE(g.inputs().size(), size_t(1));
    QCOMPARE(QString::fromStdString(g.inputs()[0]->name()), QString("x"));
    QVERIFY(g.findValue("w")->initializer());
    QCOMPARE(QString::fromStdString(g.nodes()[0]->id()), QString("add"));  // unnamed: op type lowercased
    auto out = runReference(g, {floats({2}, {1, 2})}).outputs;
    QCOMPARE(values(out[0]), (std::vector<double>{11, 22}));
  }

  void typedFieldInitializers() {
    ModelMaker m;
    m.floatInput("x", {2});
    auto* f = m.initializer("f", TP::FLOAT, {2});
    f->add_float_data(1.5f);
    f->add_float_data(-2.0f);
    auto* i8 = m.initializer("i8", TP::INT8, {2});
    i8->add_int32_data(-3);
    i8->add_int32_data(7);
    auto* h = m.initializer("h", TP::FLOAT16, {1});
    h->add_int32_data(0x3C00);  // 1.0 in half precision
    auto* l = m.initializer("l", TP::INT64, {3});
    for (int64_t v : {int64_t(1) << 40, int64_t(-5), int64_t(0)}) l->add_int64_data(v);
    auto* d = m.initializer("d", TP::DOUBLE, {1});
    d->add_double_data(0.1);
    auto* b = m.initializer("b", TP::BOOL, {2});
    b->add_int32_data(1);
    b->add_int32_data(0);
    m.node("Add", {"x", "f"}, {"y"});
    m.output("y");
    Graph g = importOnnxBytes(m.bytes(), "model.onnx");
    QCOMPARE(values(*g.findValue("f")->initializer()), (std::vector<double>{1.5, -2.0}));
    QCOMPARE(values(*g.findValue("i8")->initializer()), (std::vector<double>{-3, 7}));
    QCOMPARE(values(*g.findValue("h")->initializer()), (std::vector<double>{1.0}));
    QCOMPARE(g.findValue("l")->initializer()->toInts(), (std::vector<int64_t>{int64_t(1) << 40, -5, 0}));
    QCOMPARE(values(*g.findValue("d")->initializer()), (std::vector<double>{0.1}));
    QCOMPARE(g.findValue("b")->initializer()->toInts(), (std::vector<int64_t>{1, 0}));

    ModelMaker bad;
    bad.floatInput("x", {1});
    bad.initializer("q", TP::INT8, {1})->add_int32_data(300);
    bad.node("Relu", {"x"}, {"y"});
    bad.output("y");
    EXPECT_ERROR(bad.bytes(), "initializer 'q': int32_data[0] = 300 does not fit i8");

    ModelMaker wrong;
    wrong.floatInput("x", {1});
    wrong.initializer("q", TP::FLOAT, {1})->add_int64_data(3);
    wrong.node("Relu", {"x"}, {"y"});
    wrong.output("y");
    EXPECT_ERROR(wrong.bytes(), "initializer 'q': data stored in int64_data, which does not hold f32");
  }

  void clip6BoundsBecomeInputs() {
    ModelMaker m(10);
    m.floatInput("x", {4});
    auto* n = m.node("Clip", {"x"}, {"y"}, "clip");
    setFloat(n, "min", -1.0f);
    setFloat(n, "max", 1.5f);
    m.output("y");
    Graph g = importOnnxBytes(m.bytes(), "model.onnx");
    Node* clip = g.findNode("clip");
    QCOMPARE(clip->numInputs(), size_t(3));
    QVERIFY(clip->attrs().empty());
    QCOMPARE(clip->input(1)->type(), (TensorType{DType::F32, {}}));
    auto out = runReference(g, {floats({4}, {-3, 0.5, 1, 7})}).outputs;
    QCOMPARE(values(out[0]), (std::vector<double>{-1, 0.5, 1, 1.5}));
  }

  void split11SizesBecomeInput() {
    ModelMaker m(11);
    m.floatInput("x", {3});
    auto* n = m.node("Split", {"x"}, {"a", "b"}, "split");
    setInts(n, "split", {1, 2});
    m.output("a");
    m.output("b");
    Graph g = importOnnxBytes(m.bytes(), "model.onnx");
    QCOMPARE(g.findNode("split")->input(1)->initializer()->toInts(), (std::vector<int64_t>{1, 2}));
    auto out = runReference(g, {floats({3}, {4, 5, 6})}).outputs;
    QCOMPARE(values(out[0]), (std::vector<double>{4}));
    QCOMPARE(values(out[1]), (std::vector<double>{5, 6}));
  }

  void slice9BoundsBecomeInputs() {
    ModelMaker m(9);
    m.floatInput("x", {2, 4});
    auto* n = m.node("Slice", {"x"}, {"y"}, "slice");
    setInts(n, "starts", {1});
    setInts(n, "ends", {3});
    setInts(n, "axes", {1});
    m.output("y");
    Graph g = importOnnxBytes(m.bytes(), "model.onnx");
    QCOMPARE(g.findNode("slice")->numInputs(), size_t(4));
    auto out = runReference(g, {floats({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7})}).outputs;
    QCOMPARE(out[0].shape(), (Shape{2, 2}));
    QCOMPARE(values(out[0]), (std::vector<double>{1, 2, 5, 6}));
  }

  void squeeze11AxesBecomeInput() {
    ModelMaker m(11);
    m.floatInput("x", {1, 3, 1});
    setInts(m.node("Squeeze", {"x"}, {"y"}, "sq"), "axes", {0});
    m.output("y");
    Graph g = importOnnxBytes(m.bytes(), "model.onnx");
    QCOMPARE(g.outputs()[0]->shape(), (Shape{3, 1}));
    QVERIFY(!g.findNode("sq")->hasAttr("axes"));
  }

  void reduceMean13AxesBecomeInput() {
    ModelMaker m(13);
    m.floatInput("x", {2, 2});
    auto* n = m.node("ReduceMean", {"x"}, {"y"}, "mean");
    setInts(n, "axes", {1});
    setInt(n, "keepdims", 0);
    m.output("y");
    Graph g = importOnnxBytes(m.bytes(), "model.onnx");
    QCOMPARE(g.findNode("mean")->input(1)->initializer()->toInts(), (std::vector<int64_t>{1}));
    auto out = runReference(g, {floats({2, 2}, {1, 3, 10, 20})}).outputs;
    QCOMPARE(values(out[0]), (std::vector<double>{2, 15}));
  }

  void softmax11Coerces3DInputTo2D() {
    // Softmax-11 on [2,2,2] with the default axis 1 normalizes each batch row over its 4 elements.
    ModelMaker m(11);
    m.floatInput("x", {2, 2, 2});
    m.node("Softmax", {"x"}, {"y"}, "sm");
    m.output("y");
    Graph g = importOnnxBytes(m.bytes(), "model.onnx");
    QCOMPARE(g.findNode("sm")->attrInt("axis", 0), int64_t(-1));
    QCOMPARE(QString::fromStdString(g.outputs()[0]->name()), QString("y"));
    QCOMPARE(g.outputs()[0]->shape(), (Shape{2, 2, 2}));
    auto out = runReference(g, {floats({2, 2, 2}, {0, 1, 2, 3, 0, 0, 0, 0})}).outputs;
    double z = 1 + std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
    std::vector<double> expect = {1 / z, std::exp(1.0) / z, std::exp(2.0) / z, std::exp(3.0) / z,
                                  0.25, 0.25, 0.25, 0.25};
    std::vector<double> got = values(out[0]);
    for (size_t i = 0; i < expect.size(); ++i) QVERIFY2(std::abs(got[i] - expect[i]) < 1e-6, qPrintable(QString::number(i)));

    // On a 2-D input the old and new semantics agree: no rewrite.
    ModelMaker two(11);
    two.floatInput("x", {2, 3});
    two.node("Softmax", {"x"}, {"y"}, "sm");
    two.output("y");
    QCOMPARE(importOnnxBytes(two.bytes(), "model.onnx").numNodes(), size_t(1));
  }

  void olderFormsRoundTripThroughOpset18() {
    ModelMaker m(10);
    m.floatInput("x", {2, 3});
    for (const char* name : {"scale", "bias", "mean", "var"}) m.floatInitializer(name, {3}, {1, 0.5f, 2});
    auto* bn = m.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"n"}, "bn");
    setInt(bn, "spatial", 1);
    auto* drop = m.node("Dropout", {"n"}, {"d"}, "drop");
    setFloat(drop, "ratio", 0.25f);
    setInts(m.node("Unsqueeze", {"d"}, {"u"}, "unsq"), "axes", {0});
    setInts(m.node("ReduceMax", {"u"}, {"r"}, "rmax"), "axes", {2});
    m.node("LogSoftmax", {"r"}, {"y"}, "lsm");  // [1,2,1]: flattens at axis 1 → over the last two axes
    m.output("y");
    Graph g = importOnnxBytes(m.bytes(), "model.onnx");
    QVERIFY(!g.findNode("bn")->hasAttr("spatial"));
    QCOMPARE(g.findNode("drop")->input(1)->initializer()->toDoubles(), (std::vector<double>{0.25}));
    QCOMPARE(g.findNode("unsq")->input(1)->initializer()->toInts(), (std::vector<int64_t>{0}));
    QCOMPARE(g.findNode("rmax")->input(1)->initializer()->toInts(), (std::vector<int64_t>{2}));
    QVERIFY(g.findNode("lsm_flatten"));
    QCOMPARE(g.outputs()[0]->type(), (TensorType{DType::F32, {1, 2, 1}}));
    Graph back = importOnnxBytes(exportOnnxBytes(g), "exported.onnx");
    if (describe(back) != describe(g)) qDebug("%s\n----\n%s", describe(g).c_str(), describe(back).c_str());
    QCOMPARE(QString::fromStdString(describe(back)), QString::fromStdString(describe(g)));
    // Each row max is the largest (x - mean)/sqrt(var + eps)*scale + bias; the log-softmax runs over both rows.
    auto x = floats({2, 3}, {1, 1, 1, 2, 2, 2});
    auto out = runReference(back, {x}).outputs[0].toDoubles();
    QCOMPARE(out.size(), size_t(2));
    QVERIFY(std::abs(std::exp(out[0]) + std::exp(out[1]) - 1.0) < 1e-6);
    QVERIFY(out[1] > out[0]);
  }

  void constantFormsBecomeTensors() {
    ModelMaker m(13);
    m.floatInput("x", {2});
    setInts(m.node("Constant", {}, {"c"}, "k"), "value_ints", {2});
    m.node("Reshape", {"x", "c"}, {"y"});
    m.output("y");
    Graph g = importOnnxBytes(m.bytes(), "model.onnx");
    QCOMPARE(g.findNode("k")->attr("value")->t().toInts(), (std::vector<int64_t>{2}));
    QCOMPARE(g.outputs()[0]->shape(), (Shape{2}));
  }

  void inputDataTurnsShapeOperandsIntoConstants() {
    ModelMaker m(14);
    m.floatInput("x", {2, 3});
    m.input("shape", TP::INT64, {2});
    m.node("Reshape", {"x", "shape"}, {"y"});
    m.output("y");
    OnnxImportOptions options;
    options.inputData["shape"] = Tensor::fromInts(DType::I64, {2}, std::vector<int64_t>{3, 2});
    options.inputData["x"] = floats({2, 3}, {0, 1, 2, 3, 4, 5});
    Graph g = importOnnxBytes(m.bytes(), "model.onnx", options);
    QCOMPARE(g.inputs().size(), size_t(1));  // x stays an input: it decides no shape
    QVERIFY(g.findValue("shape")->initializer());
    QCOMPARE(g.outputs()[0]->shape(), (Shape{3, 2}));

    options.inputData["shape"] = Tensor::fromInts(DType::I64, {3}, std::vector<int64_t>{3, 2, 1});
    QString message = importError(m.bytes(), options);
    QVERIFY2(message.contains("input data for 'shape' is i64[3] but the model declares i64[2]"), qPrintable(message));
  }

  void exportRoundTrip() {
    ModelMaker m(13);
    m.floatInput("x", {2, 4});
    m.floatInitializer("w", {4, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    m.node("MatMul", {"x", "w"}, {"h"}, "mm");
    auto* c = m.node("Constant", {}, {"lo"}, "lo_const");
    auto* a = c->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(TP::FLOAT);
    a->mutable_t()->add_float_data(-0.5f);
    m.node("Clip", {"h", "lo", ""}, {"clipped"}, "clip");
    setInt(m.node("Softmax", {"clipped"}, {"y"}, "sm"), "axis", 1);
    setFloat(m.node("LeakyRelu", {"y"}, {"z"}, "leaky"), "alpha", 0.25f);
    m.output("z");
    Graph g = importOnnxBytes(m.bytes(), "model.onnx");
    std::string bytes = exportOnnxBytes(g);
    Graph back = importOnnxBytes(bytes, "exported.onnx");
    QCOMPARE(QString::fromStdString(describe(back)), QString::fromStdString(describe(g)));

    onnx::ModelProto proto;
    QVERIFY(proto.ParseFromString(bytes));
    QCOMPARE(proto.ir_version(), int64_t(8));
    QCOMPARE(proto.opset_import(0).version(), int64_t(18));
    QVERIFY(proto.graph().initializer(0).has_raw_data());
    auto x = floats({2, 4}, {1, 0, 0, 0, 0, 1, 0, -1});
    QVERIFY(runReference(g, {x}).outputs[0].identical(runReference(back, {x}).outputs[0]));
  }

  void exportRaisesOpsetForGelu() {
    ModelMaker m(20);
    m.floatInput("x", {3});
    m.node("Gelu", {"x"}, {"y"});
    m.output("y");
    Graph g = importOnnxBytes(m.bytes(), "model.onnx");
    onnx::ModelProto proto;
    QVERIFY(proto.ParseFromString(exportOnnxBytes(g)));
    QCOMPARE(proto.opset_import(0).version(), int64_t(20));
  }

  void tensorProtoFiles() {
    QTemporaryDir dir;
    std::string path = dir.filePath("t.pb").toStdString();
    Tensor t = Tensor::fromInts(DType::I32, {2, 2}, std::vector<int64_t>{1, -2, 3, 1 << 20});
    writeTensorProtoFile(t, "t", path);
    QVERIFY(readTensorProtoFile(path).identical(t));

    onnx::TensorProto p;
    p.set_data_type(TP::INT64);
    p.add_dims(3);
    p.add_int64_data(5);
    try {
      parseTensorProto(p.SerializeAsString(), "in.pb");
      QFAIL("no error");
    } catch (const Error& e) {
      QCOMPARE(QString(e.what()), QString("in.pb: tensor: int64_data holds 1 values but i64[3] needs 3"));
    }
    try {
      readTensorProtoFile(dir.filePath("absent.pb").toStdString());
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY(QString(e.what()).contains("cannot open"));
    }
  }

  // The backend tests' sequence and optional data files (SequenceProto, OptionalProto), read as the type the model
  // declares says; a file that holds something else is refused naming it.
  void containerProtoFiles() {
    auto floats = [](std::vector<float> v) {
      onnx::TensorProto t;
      t.set_data_type(TP::FLOAT);
      t.add_dims(int64_t(v.size()));
      for (float f : v) t.add_float_data(f);
      return t;
    };
    const TensorType seqF32 = TensorType::container(ValueKind::Sequence, DType::F32);
    onnx::SequenceProto seq;
    seq.set_elem_type(onnx::SequenceProto::TENSOR);
    *seq.add_tensor_values() = floats({1, 2});
    *seq.add_tensor_values() = floats({3});
    Tensor s = parseValueProto(seq.SerializeAsString(), "s.pb", seqF32);
    QVERIFY(s.identical(Tensor::sequence(DType::F32, {Tensor::fromDoubles(DType::F32, {2}, std::vector<double>{1, 2}),
                                                      Tensor::fromDoubles(DType::F32, {1}, std::vector<double>{3})})));
    const TensorType optI32 = TensorType::container(ValueKind::Optional, DType::I32);
    Tensor none = parseValueProto(onnx::OptionalProto().SerializeAsString(), "o.pb", optI32);  // UNDEFINED: empty
    QCOMPARE(none.type(), optI32);
    QVERIFY(none.elements().empty());
    onnx::OptionalProto held;
    held.set_elem_type(onnx::OptionalProto::TENSOR);
    *held.mutable_tensor_value() = floats({4});
    const TensorType optSeq = TensorType::container(ValueKind::OptionalSequence, DType::F32);
    auto errorOf = [](const std::function<void()>& f) -> std::string {
      try {
        f();
      } catch (const Error& e) {
        return e.what();
      }
      return "";
    };
    QCOMPARE(errorOf([&] { parseValueProto(held.SerializeAsString(), "o.pb", optSeq); }),
             std::string("o.pb: the optional holds a tensor but the model declares opt<seq<f32>>"));
    QCOMPARE(errorOf([&] { parseValueProto(seq.SerializeAsString(), "s.pb", TensorType::container(ValueKind::Sequence, DType::I64)); }),
             std::string("s.pb: element 0 is f32[2] but the model declares seq<i64>"));
    QVERIFY(errorOf([&] { parseValueProto("\xff\xff", "bad.pb", seqF32); }).starts_with("bad.pb: not a valid ONNX SequenceProto"));
    // What `run --save-data` writes reads back the same: a sequence, an optional sequence, an empty optional.
    QTemporaryDir dir;
    const std::string path = dir.filePath("v.pb").toStdString();
    for (const Tensor& v : {s, Tensor::optional(optSeq, s), none}) {
      writeValueFile(v, "v", path);
      QVERIFY2(readValueFile(path, v.type()).identical(v), v.type().toString().c_str());
    }
    QVERIFY(errorOf([&] { writeTensorProtoFile(s, "s", path); }).ends_with("a seq<f32> is not a TensorProto (writeValueFile)"));
  }

  // Inputs the fuzzer once crashed on (tests/fuzz/fuzz_onnx.cpp): each must now import or fail with an Error.
  void fuzzRegressions() {
    std::filesystem::path dir = std::filesystem::path(TESSERA_SOURCE_DIR) / "tests/frontend/onnx_regressions";
    if (!std::filesystem::exists(dir)) QSKIP("no regression inputs yet");
    int count = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() == ".md") continue;
      try {
        Graph g = importOnnxFile(entry.path().string());
        importOnnxBytes(exportOnnxBytes(g), "exported.onnx");
      } catch (const Error&) {
      }
      try {
        readTensorProtoFile(entry.path().string());
      } catch (const Error&) {
      }
      ++count;
    }
    if (count == 0) QSKIP("no regression inputs yet");
  }

  void lightModelsImportAndVerify() {
    std::filesystem::path dir = std::filesystem::path(TESSERA_DATA_DIR) / "onnx-light" / "light";
    if (!std::filesystem::exists(dir)) QSKIP(qPrintable("no light models at " + QString::fromStdString(dir.string())));
    int count = 0;
    QStringList failures;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() != ".onnx") continue;
      Graph g;
      try {
        g = importOnnxFile(entry.path().string());
      } catch (const Error& e) {
        failures << e.what();
        continue;
      }
      QVERIFY2(verifyGraph(g).empty(), qPrintable(QString::fromStdString(entry.path().string())));
      QCOMPARE(g.inputs().size(), size_t(1));  // IR 3: every weight is also listed as an input
      QCOMPARE(g.outputs()[0]->type().numElements(), int64_t(1000));  // [1,1000] or [1,1000,1,1]
      ++count;
    }
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join("\n")));
    QCOMPARE(count, 9);
  }
};

QTEST_MAIN(TestOnnx)
#include "test_onnx.moc"
