// Host groups (core/runtime/execute/placement.h): a group no generated kernel can run (control flow, no
// template, float8 e8m0 values) runs on the host with the reference interpreter's semantics between the kernels, its
// inputs read from where the kernels left them and its outputs written back, timed and checked; an op Tessera does
// not know (a custom domain) still imports, compiles into a host group of its own, and a run stops before it
// naming it, after running every kernel before it.
#include <QtTest>

#include <cmath>

#include "driver/driver.h"
#include "frontend/onnx/onnx_import.h"
#include "frontend/text/tsr.h"
#include "ir/error.h"
#include "cpu_driver_helpers.h"
#include "onnx_model_maker.h"
#include "ops/registry.h"
#include "runtime/reference/compare.h"
#include "runtime/reference/interpreter.h"

using namespace tessera;
using namespace tessera::testing;
using TP = onnx::TensorProto;
using execute::HostRule;
using execute::KernelStatus;

namespace {

onnx::GraphProto* graphAttr(onnx::NodeProto* n, const std::string& name) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(name);
  return a->mutable_g();
}

// y = Relu(x), then If(cond) then y + w else y * w (the branches read y and w from outside), then Neg.
Graph ifModel() {
  ModelMaker m;
  m.input("cond", TP::BOOL, {});
  m.floatInput("x", {3});
  m.floatInitializer("w", {3}, {1, 2, 3});
  m.node("Relu", {"x"}, {"r"}, "relu");
  auto* n = m.node("If", {"cond"}, {"y"}, "choose");
  onnx::GraphProto* saved = m.graph;
  m.graph = graphAttr(n, "then_branch");
  m.node("Add", {"r", "w"}, {"sum"});
  m.output("sum");
  m.graph = graphAttr(n, "else_branch");
  m.node("Mul", {"r", "w"}, {"product"});
  m.output("product");
  m.graph = saved;
  m.node("Neg", {"y"}, {"out"}, "neg");
  m.output("out");
  return importOnnxBytes(m.bytes(), "if.onnx");
}

// r = Relu(x) (a graph output), f = com.acme::Frob(r) (declared f32[3]), out = Neg(f).
std::string customOpBytes(bool declareType) {
  ModelMaker m;
  auto* imp = m.model.add_opset_import();
  imp->set_domain("com.acme");
  imp->set_version(2);
  m.floatInput("x", {3});
  m.node("Relu", {"x"}, {"r"}, "relu");
  auto* frob = m.node("Frob", {"r"}, {"f"}, "frob");
  frob->set_domain("com.acme");
  setInt(frob, "strength", 7);
  m.node("Neg", {"f"}, {"out"}, "neg");
  declare(m.graph->add_output(), "r", {3});
  m.output("out");
  if (declareType) declare(m.graph->add_value_info(), "f", {3});
  return m.bytes();
}

Tensor floats(Shape shape, std::vector<double> v) { return Tensor::fromDoubles(DType::F32, std::move(shape), v); }
Tensor boolean(bool b) { return Tensor::fromInts(DType::Bool, {}, std::vector<int64_t>{b}); }

}  // namespace

class TestHostGroups : public QObject {
  Q_OBJECT
 private slots:
  void placementRulesHaveNames() {
    QCOMPARE(execute::hostRuleName(HostRule::None), std::string("kernel"));
    QCOMPARE(execute::hostRuleName(HostRule::ControlFlow), std::string("control-flow"));
    QCOMPARE(execute::hostRuleName(HostRule::UnknownOp), std::string("unknown-op"));
    QCOMPARE(execute::hostRuleName(HostRule::NoLowering), std::string("no-lowering"));
    QCOMPARE(execute::hostRuleName(HostRule::NoCodegen), std::string("dtype"));
    QCOMPARE(execute::hostRuleName(HostRule::Containers), std::string("container"));
    execute::Placement p{HostRule::NoLowering, "node 'p' (ReduceProd): not supported"};
    QVERIFY(p.onHost() && p.runs());
    QCOMPARE(p.describe(), std::string("runs on the host (no-lowering): node 'p' (ReduceProd): not supported"));
    QVERIFY(!(execute::Placement{HostRule::UnknownOp, "x"}.runs()));
    QVERIFY(!execute::Placement{}.onHost());
  }

  // The If's group runs on the host between the Relu's kernel and the Neg's, reading the Relu's output where the
  // kernel left it; both branches give the right values.
  void controlFlowRunsAsAHostGroup() {
    if (!hasCompiler()) QSKIP("no C++ compiler on PATH");
    driver::Driver d = cpuDriver(ifModel());
    const execute::CompiledKernel& choose = kernelOf(d, "choose");
    QCOMPARE(choose.placement.rule, HostRule::ControlFlow);
    QVERIFY2(choose.placement.reason.find("node 'choose' (If) is control flow") != std::string::npos,
             choose.placement.reason.c_str());
    QCOMPARE(choose.kernel.kind, std::string("host"));  // buffers only: what it reads and writes
    QVERIFY(!kernelOf(d, "relu").onHost() && !kernelOf(d, "neg").onHost());
    for (bool cond : {true, false}) {
      execute::RunReport r = runOnCpu(d, {boolean(cond), floats({3}, {-1, 2, 3})});
      QVERIFY2(r.ran && r.stopped.empty(), r.cannotRun.c_str());
      const execute::KernelReport& k = reportOf(r, "choose");
      QVERIFY2(k.onHost() && k.host.starts_with("control-flow: "), k.host.c_str());
      QCOMPARE(k.status, KernelStatus::Ok);
      QVERIFY(k.ms >= 0);
      QVERIFY(r.outputsVerified);
      QCOMPARE(r.wholeMs, -1.0);  // host code between kernels is no part of a whole run
      QVERIFY2(r.wholeNote.find("runs on the host between kernels") != std::string::npos, r.wholeNote.c_str());
      std::vector<double> want = cond ? std::vector<double>{-1, -4, -6} : std::vector<double>{-0.0, -4, -9};
      QCOMPARE(r.outputs[0].toDoubles(), want);
    }
  }

  // ReduceProd has no kernel nest: its group runs on the host. Without the reference interpreter checking the run,
  // its values can only come from the host group itself, and the Neg's kernel after it reads them.
  void groupWithoutLoweringRunsOnTheHost() {
    if (!hasCompiler()) QSKIP("no C++ compiler on PATH");
    Graph g = parseTsr("graph g {\n  input %x: f32[2,3]\n  const %axes: i64[1] = [1]\n"
                       "  node relu = Relu(%x) -> %r\n  node prod = ReduceProd(%r, %axes) {keepdims=0} -> %p\n"
                       "  node neg = Neg(%p) -> %y\n  output %y\n}\n", "prod.tsr");
    driver::Driver d = cpuDriver(std::move(g));
    const execute::CompiledKernel& prod = kernelOf(d, "prod");
    QCOMPARE(prod.placement.rule, HostRule::NoLowering);
    QVERIFY2(prod.placement.reason.find("node 'prod' (ReduceProd)") != std::string::npos, prod.placement.reason.c_str());
    Tensor x = floats({2, 3}, {1, 2, 3, -1, 4, 0.5});
    for (bool verify : {true, false}) {
      execute::RunReport r = runOnCpu(d, {x}, verify);
      QVERIFY(r.ran);
      const execute::KernelReport& k = reportOf(r, "prod");
      QVERIFY(k.onHost());
      QCOMPARE(k.status, verify ? KernelStatus::Ok : KernelStatus::Unchecked);
      QCOMPARE(reportOf(r, "neg").status, verify ? KernelStatus::Ok : KernelStatus::Unchecked);
      QCOMPARE(r.outputs[0].toDoubles(), (std::vector<double>{-6, -0.0}));
      QCOMPARE(r.outputsVerified, verify);
    }
  }

  // float8 values (e4m3fn here) are bytes in generated code: the casts run as a kernel, rounding to nearest even
  // and saturating (500 → 448) as the reference does; with saturate = 0 the cast stays on the host, naming why.
  void float8CastsRunAsKernels() {
    if (!hasCompiler()) QSKIP("no C++ compiler on PATH");
    Graph g = parseTsr("graph g {\n  input %x: f32[4]\n  node to8 = Cast(%x) {to=17} -> %q\n"
                       "  node back = Cast(%q) {to=1} -> %d\n  node relu = Relu(%d) -> %y\n  output %y\n}\n", "f8.tsr");
    driver::Driver d = cpuDriver(std::move(g));
    QCOMPARE(kernelOf(d, "to8").placement.rule, HostRule::None);
    execute::RunReport r = runOnCpu(d, {floats({4}, {0.3, -2, 1.0625, 500})});
    QVERIFY(r.ran);
    QVERIFY2(r.outputsVerified, r.messages.empty() ? "" : r.messages[0].c_str());
    QCOMPARE(r.outputs[0].toDoubles(), (std::vector<double>{0.3125, 0, 1.0, 448}));
    Graph raw = parseTsr("graph g {\n  input %x: f32[4]\n  node to8 = Cast(%x) {saturate=0, to=17} -> %q\n"
                         "  node back = Cast(%q) {to=1} -> %y\n  output %y\n}\n", "f8raw.tsr");
    driver::Driver dr = cpuDriver(std::move(raw));
    const execute::CompiledKernel& to8 = kernelOf(dr, "to8");
    QVERIFY(to8.placement.onHost());
    QVERIFY2(to8.placement.reason.find("saturate = 0") != std::string::npos, to8.placement.reason.c_str());
    execute::RunReport rr = runOnCpu(dr, {floats({4}, {0.3, -2, 1.0625, 500})});
    QVERIFY2(rr.outputsVerified, rr.messages.empty() ? "" : rr.messages[0].c_str());
    QVERIFY(std::isnan(rr.outputs[0].toDoubles()[3]));  // e4m3fn has no infinity: out of range is NaN
  }

  // f4e2m1 values have no form in generated code: its Casts' group is a host group naming the dtype; f8e8m0's
  // and i2's (a byte, wrapped to two bits) are kernels. The run gives the reference's values (f4e2m1 saturates at
  // 6, f8e8m0 rounds up to a power of two, i2 wraps).
  void float4RunsOnTheHostSubByteIntegersAsKernels() {
    if (!hasCompiler()) QSKIP("no C++ compiler on PATH");
    Graph g = parseTsr("graph g {\n  input %x: f32[4]\n"
                       "  node to4 = Cast(%x) {to=23} -> %a\n  node from4 = Cast(%a) {to=1} -> %y4\n"
                       "  node toE = Cast(%x) {to=24} -> %b\n  node fromE = Cast(%b) {to=1} -> %yE\n"
                       "  node to2 = Cast(%x) {to=26} -> %c\n  node from2 = Cast(%c) {to=1} -> %y2\n"
                       "  output %y4, %yE, %y2\n}\n", "small.tsr");
    driver::Driver d = cpuDriver(std::move(g));
    const execute::CompiledKernel& k = kernelOf(d, "to4");
    QCOMPARE(k.placement.rule, HostRule::NoCodegen);
    QVERIFY2(k.placement.reason.find("is f4e2m1") != std::string::npos, k.placement.reason.c_str());
    QCOMPARE(kernelOf(d, "toE").placement.rule, HostRule::None);  // f8e8m0 is a byte in generated code
    QCOMPARE(kernelOf(d, "to2").placement.rule, HostRule::None);  // so is i2
    execute::RunReport r = runOnCpu(d, {floats({4}, {0.3, -2.5, 3, 100})});
    QVERIFY(r.ran);
    QVERIFY2(r.outputsVerified, r.messages.empty() ? "" : r.messages[0].c_str());
    QCOMPARE(r.outputs[0].toDoubles(), (std::vector<double>{0.5, -2, 3, 6}));
    QCOMPARE(r.outputs[1].toDoubles(), (std::vector<double>{0.5, 4, 4, 128}));
    QCOMPARE(r.outputs[2].toDoubles(), (std::vector<double>{0, -2, -1, 0}));
  }

  // A custom-domain op imports as an opaque node with its attributes and declared type; compile places it in a
  // host group that cannot run; the run stops before it naming it, after the Relu's kernel ran and verified.
  void unknownOpStopsTheRunNamingIt() {
    Graph g = importOnnxBytes(customOpBytes(true), "custom.onnx");
    const Node* frob = g.findNode("frob");
    QVERIFY(frob);
    QCOMPARE(frob->op(), std::string("com.acme::Frob"));
    QCOMPARE(frob->attrInt("strength", 0), int64_t(7));
    QCOMPARE(frob->output(0)->type().toString(), std::string("f32[3]"));
    QVERIFY(!isKnownOp(frob->op()));
    QCOMPARE(g.findNode("neg")->output(0)->type().toString(), std::string("f32[3]"));  // inferred after it

    // The reference stops before it (or, asked to run everything, says why it cannot).
    ReferenceOptions ro;
    ro.stopWithoutSemantics = true;
    ro.keepAll = true;
    ReferenceResult ref = runReference(g, {floats({3}, {-1, 2, 3})}, ro);
    QCOMPARE(ref.stoppedAt, std::string("frob"));
    QVERIFY(ref.values.count("r") && !ref.values.count("out"));
    const std::string said = "node 'frob' (com.acme::Frob): unknown op 'Frob' (domain 'com.acme'): Tessera has no "
                             "reference semantics for it";
    QCOMPARE(ref.stopped, said);
    QVERIFY_THROWS_EXCEPTION(Error, runReference(g, {floats({3}, {-1, 2, 3})}));

    if (!hasCompiler()) QSKIP("no C++ compiler on PATH");
    driver::Driver d = cpuDriver(std::move(g));
    QVERIFY(d.compiled()->error.empty());
    const execute::CompiledKernel& k = kernelOf(d, "frob");
    QCOMPARE(k.placement.rule, HostRule::UnknownOp);
    QVERIFY(!k.placement.runs());
    execute::RunReport r = runOnCpu(d, {floats({3}, {-1, 2, 3})});
    QVERIFY(r.ran);
    QVERIFY2(r.stopped.find(said) != std::string::npos, r.stopped.c_str());
    QCOMPARE(reportOf(r, "relu").status, KernelStatus::Ok);
    QCOMPARE(reportOf(r, "frob").status, KernelStatus::Failed);
    QCOMPARE(reportOf(r, "neg").status, KernelStatus::NotRun);
    QVERIFY(!r.outputsVerified);
    QCOMPARE(r.outputs[0].toDoubles(), (std::vector<double>{0, 2, 3}));  // made before the stop
    // The same report through its JSON form (the window's saved runs).
    execute::RunReport back = execute::RunReport::fromJson(r.toJson());
    QCOMPARE(back.stopped, r.stopped);
    QCOMPARE(back.kernels[1].host, r.kernels[1].host);
  }

  // An unknown op's output types cannot be inferred: without a declared one the import names node and value.
  void unknownOpNeedsDeclaredTypes() {
    try {
      importOnnxBytes(customOpBytes(false), "custom.onnx");
      QFAIL("imported");
    } catch (const Error& e) {
      QCOMPARE(QString(e.what()), QString("custom.onnx: node 'frob' uses unsupported op 'Frob' (domain 'com.acme', "
                                          "opset 2) and the model declares no static type for its output 'f' "
                                          "(value_info): Tessera infers types only for the ops it knows"));
    }
  }

  // Sequences and optionals live on the host: their nodes are host groups (rule "container") between the kernels;
  // a kernel reads the length a host group computed, a sequence is a graph output, and the graph goes through
  // ONNX and .tsr with its container types (and Optional's type attribute) as they were.
  void containersRunOnTheHost() {
    const std::string text =
        "graph g {\n  input %x: f32[2,3]\n  node relu = Relu(%x) -> %r\n"
        "  node split = SplitToSequence(%r) {axis=1} -> %s\n  node insert = SequenceInsert(%s, %x) -> %s2\n"
        "  node len = SequenceLength(%s2) -> %n\n  node tof = Cast(%n) {to=1} -> %nf\n"
        "  node add = Add(%x, %nf) -> %y\n  node none = Optional() {type=\"seq<f32>\"} -> %o\n"
        "  node has = OptionalHasElement(%o) -> %h\n  output %s2\n  output %y\n  output %h\n}\n";
    Graph g = parseTsr(text, "seq.tsr");
    QCOMPARE(g.findValue("s2")->type().toString(), std::string("seq<f32>"));
    QCOMPARE(g.findValue("o")->type().toString(), std::string("opt<seq<f32>>"));
    QCOMPARE(printTsr(parseTsr(printTsr(g), "again.tsr")), printTsr(g));
    Graph viaOnnx = importOnnxBytes(exportOnnxBytes(g), "seq.onnx");
    QCOMPARE(viaOnnx.findValue("s2")->type(), g.findValue("s2")->type());
    QCOMPARE(viaOnnx.findValue("o")->type(), g.findValue("o")->type());
    if (!hasCompiler()) QSKIP("no C++ compiler on PATH");
    driver::Driver d = cpuDriver(std::move(g));
    for (const char* id : {"split", "insert", "len"}) {
      const execute::CompiledKernel& k = kernelOf(d, id);
      QCOMPARE(k.placement.rule, HostRule::Containers);
      QVERIFY2(k.placement.reason.find("seq<f32>") != std::string::npos, k.placement.reason.c_str());
    }
    QVERIFY(!kernelOf(d, "relu").onHost() && !kernelOf(d, "add").onHost());
    Tensor x = floats({2, 3}, {1, -2, 3, -4, 5, -6});
    execute::RunReport r = runOnCpu(d, {x});
    QVERIFY2(r.ran && r.stopped.empty(), r.cannotRun.c_str());
    QVERIFY(r.outputsVerified);
    QCOMPARE(reportOf(r, "len").host.substr(0, 10), std::string("container:"));
    const std::vector<Tensor>& parts = r.outputs[0].elements();
    QCOMPARE(parts.size(), size_t(4));
    QCOMPARE(parts[1].toDoubles(), (std::vector<double>{0, 5}));  // column 1 of relu(x)
    QVERIFY(parts[3].identical(x));
    QCOMPARE(r.outputs[1].toDoubles(), (std::vector<double>{5, 2, 7, 0, 9, -2}));
    QCOMPARE(r.outputs[2].getInt(0), int64_t(0));
  }

  // Export writes the node back in its domain, with its type, and imports again the same.
  void unknownOpRoundTripsThroughOnnxAndTsr() {
    Graph g = importOnnxBytes(customOpBytes(true), "custom.onnx");
    Graph again = importOnnxBytes(exportOnnxBytes(g), "again.onnx");
    QCOMPARE(again.findNode("frob")->op(), std::string("com.acme::Frob"));
    QCOMPARE(again.findNode("frob")->output(0)->type().toString(), std::string("f32[3]"));
    const std::string text = printTsr(g);
    QVERIFY2(text.find("node frob = \"com.acme::Frob\"(%r) {strength=7} -> %f: f32[3]") != std::string::npos, text.c_str());
    QCOMPARE(printTsr(parseTsr(text, "custom.tsr")), text);
    try {
      parseTsr("graph g {\n  input %x: f32[2]\n  node r = Frobnicate(%x) -> %y\n}", "t.tsr");
      QFAIL("parsed");
    } catch (const Error& e) {
      QVERIFY2(QString(e.what()).startsWith("t.tsr:3: node 'r': unknown op 'Frobnicate': write the type of each of its outputs ('%y' has none)"), e.what());
    }
  }
};

QTEST_MAIN(TestHostGroups)
#include "test_host_groups.moc"
