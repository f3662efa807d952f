// What the tuner's measurements are checked against (execute::measureVariants): the reference interpreter on a
// kernel's nodes alone, or, above MeasureOptions::referenceLimit, the model's own kernel on the backend. Either
// way a variant whose outputs differ is reported unverified and never chosen; the tuner says per kernel which
// check it ran ("verified_against").
#include <QtTest>

#include <nlohmann/json.hpp>

#include "kernel/visit.h"
#include "ops/builder.h"
#include "runtime/execute/measure.h"
#include "runtime/reference/compare.h"
#include "runtime/reference/interpreter.h"
#include "tune_fixtures.h"

using namespace tessera;
using execute::Expected;

namespace {

// x -> transpose (kernel 0) -> exp (kernel 1): kernel 1's inputs are what kernel 0 made of x.
execute::CompiledModel twoKernels() {
  GraphBuilder b("two");
  Value* x = b.input("x", {DType::F32, {24, 40}});
  Value* t = b.op("Transpose", {x}, {{"perm", std::vector<int64_t>{1, 0}}}, "t");
  b.output(b.op("Exp", {t}, {}, "e"));
  auto graph = std::make_shared<const Graph>(b.finish());
  return execute::compileKernels(graph, {{"g0", "data-movement", {"t"}}, {"g1", "pointwise", {"e"}}});
}

// The kernel with 1 added to every element it stores to an output: same buffers and launch, wrong values.
kernel::Kernel offByOne(const kernel::Kernel& k) {
  kernel::Kernel wrong = k.clone();
  kernel::walk(wrong.body, [&](kernel::StmtNode& s) {
    if (s.kind != kernel::StmtKind::Store) return;
    auto& store = static_cast<kernel::StoreStmt&>(s);
    const kernel::Buffer* b = wrong.findBuffer(store.buffer);
    if (b && b->role == kernel::BufferRole::Output)
      store.value = kernel::Binary::make(kernel::BinaryOp::Add, store.value, kernel::FloatImm::make(1.0, store.value->dtype));
  });
  return wrong;
}

// Each kernel's own schedule and its off-by-one copy, measured with the given reference limit.
execute::MeasureReport measureRightAndWrong(const execute::CompiledModel& m, double referenceLimit) {
  std::vector<execute::KernelVariant> variants;
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    variants.push_back({k, m.kernels[k].kernel.clone()});
    variants.push_back({k, offByOne(m.kernels[k].kernel)});
  }
  execute::MeasureOptions o;
  o.reps = 1;
  o.referenceLimit = referenceLimit;
  return execute::measureVariants(m, variants, execute::BackendKind::Cpu, o);
}

}  // namespace

class TestTuneVerify : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase();
  void referenceNodesMatchTheWholeGraph();
  void wrongVariantFailsAgainstTheReference();
  void wrongVariantFailsAgainstTheModel();
  void failedKernelLeavesItsValuesToTheReference();
  void tunerSaysWhatItCheckedAgainst();
  void statusNamesAreTheJsonStrings();
  void aPickIsTimedAgainBesideTheDefault();
};

void TestTuneVerify::initTestCase() {
  if (QStandardPaths::findExecutable("c++").isEmpty() && QStandardPaths::findExecutable("g++").isEmpty())
    QSKIP("no C++ compiler on PATH: the cpu backend cannot build kernels here");
}

// One group's nodes on the values before it give what the whole graph gives; a missing input is named.
void TestTuneVerify::referenceNodesMatchTheWholeGraph() {
  execute::CompiledModel m = twoKernels();
  ReferenceOptions ro;
  ro.keepAll = true;
  ReferenceResult whole = runReference(*m.graph, randomInputs(*m.graph, 3), ro);
  auto made = runReferenceNodes(*m.graph, {"e"}, {{"t", whole.values.at("t")}});
  QCOMPARE(made.size(), size_t(1));
  QVERIFY(compareTensors(made.at("e"), whole.values.at("e"), Tolerance{}).ok);
  try {
    runReferenceNodes(*m.graph, {"e"}, {});
    QFAIL("a missing input must be refused");
  } catch (const std::exception& e) {
    QVERIFY2(std::string(e.what()).find("'t'") != std::string::npos, e.what());
  }
}

void TestTuneVerify::wrongVariantFailsAgainstTheReference() {
  execute::MeasureReport r = measureRightAndWrong(twoKernels(), -1);
  QCOMPARE(r.timings.size(), size_t(4));
  QCOMPARE(r.expected, (std::vector<Expected>{Expected::Reference, Expected::Reference}));
  for (size_t k = 0; k < 2; ++k) {
    QVERIFY2(r.timings[2 * k].verified, r.timings[2 * k].message.c_str());
    QCOMPARE(r.timings[2 * k + 1].status, execute::KernelStatus::Mismatch);
    QVERIFY(!r.timings[2 * k + 1].verified);
  }
}

// Above the limit the model's own kernels are the expectation: the same schedule matches, the wrong one does not.
void TestTuneVerify::wrongVariantFailsAgainstTheModel() {
  execute::MeasureReport r = measureRightAndWrong(twoKernels(), 0);
  QCOMPARE(r.expected, (std::vector<Expected>{Expected::Model, Expected::Model}));
  for (size_t k = 0; k < 2; ++k) {
    QVERIFY2(r.timings[2 * k].verified, r.timings[2 * k].message.c_str());
    QCOMPARE(r.timings[2 * k].maxRelErr, 0.0);
    QCOMPARE(r.timings[2 * k + 1].status, execute::KernelStatus::Mismatch);
    QVERIFY(!r.timings[2 * k + 1].verified);
  }
}

// A kernel that cannot run (here: marked as a host group nothing can run, which stops the model's run) makes no
// values; the kernels after it get the reference's.
void TestTuneVerify::failedKernelLeavesItsValuesToTheReference() {
  execute::CompiledModel m = twoKernels();
  m.kernels[0].placement = {execute::HostRule::UnknownOp, "cannot run (test)"};
  execute::MeasureOptions o;
  o.reps = 1;
  execute::MeasureReport r = execute::measureVariants(m, {{1, m.kernels[1].kernel.clone()}}, execute::BackendKind::Cpu, o);
  QCOMPARE(r.expected[1], Expected::Reference);
  QVERIFY2(r.timings[0].verified, r.timings[0].message.c_str());
}

void TestTuneVerify::tunerSaysWhatItCheckedAgainst() {
  QTemporaryDir dir;
  auto [m, o] = tune::fixtures::transposeToTune(64, 96, 2, dir.path().toStdString());
  o.useCache = false;
  tune::TuneReport checked = tune::tuneModel(m, execute::BackendKind::Cpu, o);
  QCOMPARE(checked.kernels[0].status, tune::TuneStatus::Tuned);
  QCOMPARE(checked.kernels[0].verifiedAgainst, std::string("reference"));
  o.referenceLimit = 0;
  tune::TuneReport unchecked = tune::tuneModel(m, execute::BackendKind::Cpu, o);
  QCOMPARE(unchecked.kernels[0].status, tune::TuneStatus::Tuned);
  QCOMPARE(unchecked.kernels[0].verifiedAgainst, std::string("default"));
  QCOMPARE(unchecked.toJson()["kernels"][0]["verified_against"].get<std::string>(), std::string("default"));
  o.useCache = true;  // a hit says what the stored result was checked against
  QCOMPARE(tune::tuneModel(m, execute::BackendKind::Cpu, o).kernels[0].verifiedAgainst, std::string("default"));
}

// The tune's statuses print as they always did; a pruned measurement reports "pruned" whatever it verified as.
void TestTuneVerify::statusNamesAreTheJsonStrings() {
  QCOMPARE(tune::tuneStatusName(tune::TuneStatus::Tuned), std::string("tuned"));
  QCOMPARE(tune::tuneStatusName(tune::TuneStatus::Cached), std::string("cached"));
  QCOMPARE(tune::tuneStatusName(tune::TuneStatus::Untuned), std::string("untuned"));
  QCOMPARE(tune::tuneStatusName(tune::TuneStatus::Skipped), std::string("skipped"));
  tune::Measurement m;
  QCOMPARE(m.statusName(), std::string("not run"));
  m.status = execute::KernelStatus::Mismatch;
  QCOMPARE(m.statusName(), std::string("mismatch"));
  m.pruned = true;
  QCOMPARE(m.statusName(), std::string("pruned"));
  tune::TuneReport r;
  r.kernels.push_back({});
  r.kernels[0].status = tune::TuneStatus::Skipped;
  r.kernels[0].measurements = {m};
  const nlohmann::json j = r.toJson()["kernels"][0];
  QCOMPARE(j["status"].get<std::string>(), std::string("skipped"));
  QCOMPARE(j["measurements"][0]["status"].get<std::string>(), std::string("pruned"));
}

// A pick other than the default is timed a second time beside the default (a busy machine makes single batches
// lie): it stays when it is still the faster, else the default is kept at its new time, and the kernel says so.
// The measurements are a stand-in: the first batch has one candidate other than the default at 1 ms, the rest at 10.
void TestTuneVerify::aPickIsTimedAgainBesideTheDefault() {
  QTemporaryDir dir;
  auto [m, o] = tune::fixtures::transposeToTune(64, 96, 3, dir.path().toStdString());
  o.useCache = false;
  const kernel::Trace defaultTrace = kernel::traceWithParams(*m.graph, m.kernels[0].spec, {});
  for (bool pickHolds : {true, false}) {
    std::vector<std::vector<bool>> batches;  // which variants were the default, batch by batch
    o.measure = [&](const execute::CompiledModel&, const std::vector<execute::KernelVariant>& variants,
                    const std::vector<kernel::Trace>& traces, execute::BackendKind, const execute::MeasureOptions&) {
      execute::MeasureReport r;
      r.expected = {Expected::Reference};
      std::vector<bool> isDefault;
      for (size_t v = 0; v < variants.size(); ++v) isDefault.push_back(traces[v] == defaultTrace);
      size_t firstOther = size_t(std::find(isDefault.begin(), isDefault.end(), false) - isDefault.begin());
      for (size_t v = 0; v < variants.size(); ++v) {
        double ms = batches.empty() ? (v == firstOther ? 1.0 : 10.0) : (isDefault[v] == pickHolds ? 4.0 : 2.0);
        r.timings.push_back({ms, false, true, 0, execute::KernelStatus::Ok, ""});
      }
      batches.push_back(isDefault);
      return r;
    };
    tune::TuneReport t = tune::tuneModel(m, execute::BackendKind::Cpu, o);
    const tune::KernelTuning& k = t.kernels[0];
    QVERIFY(std::count(batches.front().begin(), batches.front().end(), true) == 1);  // the default measured once
    QCOMPARE(batches.size(), size_t(2));
    QCOMPARE(batches[1], (std::vector<bool>{false, true}));  // the pick, then the default
    QCOMPARE(k.status, tune::TuneStatus::Tuned);
    QCOMPARE(k.bestMs, pickHolds ? 1.0 : 2.0);
    QCOMPARE(k.trace == defaultTrace, !pickHolds);
    QCOMPARE(k.message.find("the default kept") != std::string::npos, !pickHolds);
  }
}

QTEST_GUILESS_MAIN(TestTuneVerify)
#include "test_tune_verify.moc"
