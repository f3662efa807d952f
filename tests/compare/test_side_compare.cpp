// core/compare: line diffs, node and group matching, two branches of a session compared (and joined runs),
// tensor statistics, slices and errors, values kept within a budget, .npy files, and the CLI's compare and
// run --save-tensors.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <filesystem>

#include "compare/compare.h"
#include "compare/tensor_values.h"
#include "frontend/model_io.h"
#include "io/npy.h"
#include "runtime/reference/interpreter.h"
#include "ir/error.h"
#include "session/session.h"

using namespace tessera;
using namespace tessera::compare;
namespace fs = std::filesystem;

namespace {

std::string sample(const char* name) { return std::string(TESSERA_SOURCE_DIR) + "/samples/" + name; }

Override forbid(const std::string& producer, const std::string& consumer) {
  Override o;
  o.kind = OverrideKind::ForbidFuse;
  o.producer = producer;
  o.consumer = consumer;
  return o;
}

Side mlpSide(const std::string& label, std::vector<Override> overrides = {}) {
  Side s;
  s.label = label;
  s.model = std::make_shared<const Graph>(loadModel(sample("mlp.tsr")));
  s.options.overrides = std::move(overrides);
  return s;
}

execute::KernelReport kernelRun(const std::string& group, double ms, double err) {
  execute::KernelReport k;
  k.group = group;
  k.ms = ms;
  k.verified = true;
  k.maxAbsErr = err;
  return k;
}

// (exit code, stdout) of tessera-cli ARGS.
std::pair<int, QByteArray> cli(const QStringList& args) {
  QProcess p;
  p.start(TESSERA_CLI, args);
  if (!p.waitForFinished(120000)) return {-1, {}};
  return {p.exitCode(), p.readAllStandardOutput() + p.readAllStandardError()};
}

}  // namespace

class TestSideCompare : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string path(const std::string& name) const { return tmp_.path().toStdString() + "/" + name; }

 private slots:
  void lineDiffKeepsOrderAndContext() {
    auto d = diffLines({"a", "b", "c", "d"}, {"a", "x", "c", "d", "e"});
    QCOMPARE(diffText(d), std::string("  a\n- b\n+ x\n  c\n  d\n+ e\n"));
    std::vector<std::string> before, after;
    for (int i = 0; i < 20; ++i) before.push_back(std::to_string(i));
    after = before;
    after[10] = "ten";
    QCOMPARE(diffText(diffLines(before, after), 1), std::string("@@ 9 lines @@\n  9\n- 10\n+ ten\n  11\n@@ 8 lines @@\n"));
    QCOMPARE(splitLines("x\ny\n"), (std::vector<std::string>{"x", "y"}));
  }

  // Forbidding fc2 -> bias2 splits the second kernel: every node matches by id, one group change is a split.
  void forcedSplitIsOneSplitGroup() {
    Comparison c = compareSides(mlpSide("main"), mlpSide("split", {forbid("fc2", "bias2")}));
    QCOMPARE(c.kernelsA, size_t(2));
    QCOMPARE(c.kernelsB, size_t(3));
    QVERIFY(c.nodes.added.empty() && c.nodes.removed.empty());
    for (const NodeMatch& m : c.nodes.matched) QCOMPARE(m.by, MatchBy::Id);
    QCOMPARE(c.groups.size(), size_t(2));
    QCOMPARE(c.groups[0].kind, GroupChange::Same);
    QCOMPARE(c.groups[1].kind, GroupChange::Split);
    QCOMPARE(c.groups[1].a, std::vector<std::string>{"k1"});
    QCOMPARE(c.groups[1].b, (std::vector<std::string>{"k1", "k2"}));
    QVERIFY(c.levels.size() == 2 && c.levels[1].added > 0);  // the fused text differs; the graph's does not
    QCOMPARE(c.levels[0].added + c.levels[0].removed, 0);
    QVERIFY2(c.summary.starts_with("split vs main: 1 kernel more, not run on both"), c.summary.c_str());
  }

  // With decompose off, Gelu stays one node; A's decomposed nodes have no id in B. Ids that a pass renamed
  // are matched by provenance; the user's mapping wins over every rule.
  void passTogglesMatchByProvenanceAndMapping() {
    Side b = mlpSide("no decompose");
    b.options.disabled = {"decompose"};
    Comparison c = compareSides(mlpSide("main"), b);
    QVERIFY(!c.nodes.removed.empty());  // the Erf arithmetic
    bool gelu = false;
    for (const NodeMatch& m : c.nodes.matched) gelu |= m.b == "act";
    QVERIFY(!gelu || c.nodes.added.empty());
    CompareOptions o;
    o.mapping = {{"fc1", "fc2"}};
    Comparison mapped = compareSides(mlpSide("a"), mlpSide("b"), o);
    auto m = std::find_if(mapped.nodes.matched.begin(), mapped.nodes.matched.end(), [](auto& m) { return m.a == "fc1"; });
    QVERIFY(m != mapped.nodes.matched.end());
    QCOMPARE(m->b, std::string("fc2"));
    QCOMPARE(m->by, MatchBy::Mapping);
    QVERIFY(m->changed);  // other inputs and output type
  }

  // The run tables joined over the group changes: a split kernel's time is the sum of its parts.
  void runsJoinPerGroupChange() {
    std::vector<GroupChange> groups{{GroupChange::Same, {"k0"}, {"k0"}}, {GroupChange::Split, {"k1"}, {"k1", "k2"}}};
    execute::RunReport a, b;
    a.ran = b.ran = true;
    a.kernels = {kernelRun("k0", 1.0, 1e-7), kernelRun("k1", 2.0, 1e-7)};
    b.kernels = {kernelRun("k0", 1.0, 2e-7), kernelRun("k1", 1.5, 3e-6), kernelRun("k2", 1.0, 1e-7)};
    const auto j = joinRuns(groups, &a, &b);
    QCOMPARE(j.size(), size_t(2));
    QCOMPARE(j[1].msA, 2.0);
    QCOMPARE(j[1].msB, 2.5);
    QCOMPARE(j[1].deltaMs(), 0.5);
    QCOMPARE(j[1].maxAbsErrB, 3e-6);
    Comparison c;
    c.labelA = "main", c.labelB = "split";
    c.kernelsA = 2, c.kernelsB = 3, c.totalMsA = 3.0, c.totalMsB = 3.5, c.maxAbsErrB = 3e-6;
    QCOMPARE(summaryLine(c), std::string("split vs main: 1 kernel more, 1.17x slower, max abs error 3.0e-06 (nodes +0 -0 ~0)"));
  }

  void tensorStatsCountEverything() {
    Tensor t = Tensor::fromDoubles(DType::F32, {2, 3}, std::vector<double>{1, 2, 3, NAN, INFINITY, -1});
    TensorStats s = tensorStats(t, 4);
    QCOMPARE(s.count, int64_t(6));
    QCOMPARE(s.nans, int64_t(1));
    QCOMPARE(s.infs, int64_t(1));
    QCOMPARE(s.min, -1.0);
    QCOMPARE(s.max, 3.0);
    QCOMPARE(s.mean, 1.25);
    QVERIFY(std::fabs(s.std - std::sqrt(2.1875)) < 1e-12);
    QCOMPARE(s.histogram, (std::vector<int64_t>{1, 0, 1, 2}));  // [-1,0) [0,1) [1,2) [2,3]
  }

  void sliceTakesTheLastTwoDimensions() {
    std::vector<double> v(24);
    for (size_t i = 0; i < v.size(); ++i) v[i] = double(i);
    Tensor t = Tensor::fromDoubles(DType::F32, {2, 3, 4}, v);
    Slice2D s = slice2D(t, {1}, 2, 3);
    QCOMPARE(s.totalRows, int64_t(3));
    QCOMPARE(s.totalCols, int64_t(4));
    QCOMPARE(s.values, (std::vector<double>{12, 13, 14, 16, 17, 18}));
    QCOMPARE(slice2D(t, {9}).fixed, std::vector<int64_t>{1});  // clamped into range
    QCOMPARE(slice2D(Tensor::scalar(DType::F32, 5), {}).values, std::vector<double>{5});
    Tensor words = Tensor::strings({2, 2}, {"a", "b", "c", "d"});  // strings are shown as they are
    Slice2D w = slice2D(words, {}, 2, 1);
    QCOMPARE(w.texts, (std::vector<std::string>{"a", "c"}));
    QVERIFY(w.values.empty());
    QCOMPARE(tensorStats(words).count, int64_t(4));
    QVERIFY(!tensorError(words, words).comparable);
  }

  void errorAgainstTheReferenceSaysWhere() {
    Tensor ref = Tensor::fromDoubles(DType::F32, {2, 2}, std::vector<double>{1, 2, 3, 4});
    Tensor got = Tensor::fromDoubles(DType::F32, {2, 2}, std::vector<double>{1, 2.5, 3, 3.5});
    TensorError e = tensorError(got, ref);
    QCOMPARE(e.maxAbs, 0.5);
    QCOMPARE(e.whereAbs, (std::vector<int64_t>{0, 1}));  // the first of the two worst
    QCOMPARE(e.maxRel, 0.25);
    QCOMPARE(e.whereRel, (std::vector<int64_t>{0, 1}));
    TensorError bad = tensorError(Tensor(DType::F32, {3}), ref);
    QVERIFY(!bad.comparable);
    QCOMPARE(bad.message, std::string("shape [3] against the reference's [2,2]"));
  }

  // The reference from a run's kept inputs gives every value; a run's own values compare per node.
  void referenceValuesAndNodeErrors() {
    Graph g = loadModel(sample("mlp.tsr"));
    Values run;
    run["x"] = randomTensor(g.inputs()[0]->type(), 3);
    Values ref = referenceValues(g, run);
    QVERIFY(ref.count("h1") && ref.count("y"));
    run["h1"] = ref["h1"];
    std::vector<double> y = ref["y"].toDoubles();
    y[5] *= 1.5;
    run["y"] = Tensor::fromDoubles(DType::F32, ref["y"].shape(), y);
    auto errors = nodeErrors(g, run, ref);
    QCOMPARE(errors.at("fc1"), 0.0);
    QVERIFY(errors.at("bias2") > 0.01);
    QVERIFY(!errors.count("act"));  // the run kept no value of its own
    std::string e;
    try {
      referenceValues(g, {});
    } catch (const Error& err) {
      e = err.what();
    }
    QCOMPARE(e, std::string("the run did not keep graph input 'x' (run with values kept)"));
  }

  void budgetKeepsWhatFits() {
    Values v{{"a", Tensor(DType::F32, {4})}, {"b", Tensor(DType::F32, {4})}, {"c", Tensor(DType::F32, {1})}};
    KeptValues k = keepWithinBudget(v, {}, 20);
    QCOMPARE(k.bytes, int64_t(20));
    QCOMPARE(k.values.size(), size_t(2));
    QCOMPARE(k.dropped, std::vector<std::string>{"b"});  // in name order: a fits, b does not, c still does
    k = keepWithinBudget(v, {"c", "zz"}, 1 << 20);
    QCOMPARE(k.values.size(), size_t(1));
    QCOMPARE(k.missing, std::vector<std::string>{"zz"});
  }

  // The header is NumPy's: magic, version 1.0, a dict padded so the data starts at a multiple of 64.
  void npyHeaderAndRoundTrip() {
    Tensor t = Tensor::fromDoubles(DType::F32, {2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6});
    const std::string bytes = npyBytes(t);
    QCOMPARE(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    const size_t headerLen = uint8_t(bytes[8]) | size_t(uint8_t(bytes[9])) << 8;
    QCOMPARE((10 + headerLen) % 64, size_t(0));
    QVERIFY(bytes.substr(10, headerLen).starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
    QCOMPARE(bytes.size(), 10 + headerLen + 24);
    writeNpy(t, path("t.npy"));
    QVERIFY(readNpy(path("t.npy")).identical(t));
    Tensor v = Tensor::fromInts(DType::I64, {5}, std::vector<int64_t>{1, 2, 3, 4, 5});
    QVERIFY(npyBytes(v).find("'shape': (5,)") != std::string::npos);
    writeNpy(v, path("v.npy"));
    QVERIFY(readNpy(path("v.npy")).identical(v));
    QCOMPARE(npyDescr(DType::BF16), std::string("<f4"));  // NumPy has no bf16: widened
  }

  // Two branches of a saved session: compare --json joins their stored runs, as the window does.
  void cliComparesSessionBranches() {
    Session s = sessionForModel(sample("mlp.tsr"));
    SessionBranch split = activeBranch(s);
    split.name = "split";
    split.overrides = {forbid("fc2", "bias2")};
    execute::RunReport ra, rb;
    ra.ran = rb.ran = true;
    ra.backend = rb.backend = "cpu";
    ra.kernels = {kernelRun("k0", 1.0, 1e-7), kernelRun("k1", 2.0, 1e-7)};
    rb.kernels = {kernelRun("k0", 1.0, 1e-7), kernelRun("k1", 0.5, 1e-7), kernelRun("k2", 0.5, 4e-7)};
    ra.totalMs = 3, rb.totalMs = 2;
    s.lastRun = ra.toJson();
    split.lastRun = rb.toJson();
    setBranches(s, {activeBranch(s), split}, "main");
    saveSession(s, path("two.tessera"));
    auto [rc, out] = cli({"compare", QString::fromStdString(path("two.tessera") + "#main"),
                          QString::fromStdString(path("two.tessera") + "#split"), "--json"});
    QVERIFY2(rc == 0, out.constData());
    nlohmann::json j = nlohmann::json::parse(out.toStdString());
    QCOMPARE(j["summary"].get<std::string>(), std::string("split vs main: 1 kernel more, 1.50x faster, max abs error 4.0e-07 (nodes +0 -0 ~0)"));
    QCOMPARE(j["kernels"][1]["kind"].get<std::string>(), std::string("split"));
    QCOMPARE(j["kernels"][1]["delta_ms"].get<double>(), -1.0);
    auto [rc2, text] = cli({"compare", QString::fromStdString(path("two.tessera")), QString::fromStdString(path("two.tessera") + "#nope")});
    QCOMPARE(rc2, 2);
    QVERIFY2(text.contains("no branch 'nope' in the session (branches: main, split)"), text.constData());
  }

  // run --save-tensors on cpu: the named values as .npy, equal to the reference's within the tolerance.
  void cliSavesTensors() {
    const QString dir = QString::fromStdString(path("tensors"));
    auto [rc, out] = cli({"run", QString::fromStdString(sample("mlp.tsr")), "--backend", "cpu", "--reps", "1",
                          "--no-baseline", "--save-tensors", "x,y", dir});
    QVERIFY2(rc == 0 && out.contains("saved 2 tensors"), out.constData());
    Tensor x = readNpy(path("tensors/x.npy")), y = readNpy(path("tensors/y.npy"));
    QCOMPARE(y.shape(), (Shape{64, 256}));
    Values ref = referenceValues(loadModel(sample("mlp.tsr")), {{"x", x}});
    QVERIFY(tensorError(y, ref.at("y")).maxRel < 1e-3);
    auto [rc2, bad] = cli({"run", QString::fromStdString(sample("mlp.tsr")), "--backend", "reference",
                           "--save-tensors", "nope", dir});
    QCOMPARE(rc2, 2);
    QVERIFY2(bad.contains("the run holds no value 'nope'"), bad.constData());
  }

  void initTestCase() { QVERIFY(tmp_.isValid()); }
};

QTEST_GUILESS_MAIN(TestSideCompare)
#include "test_side_compare.moc"
