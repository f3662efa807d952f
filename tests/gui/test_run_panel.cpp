// The Run panel: a cpu run of a sample from the panel fills the table (one verified row per kernel), the charts,
// the graph's timing overlay and the status bar; a second run compares with the first; Tune explains why it is
// unavailable. The overlay and roofline arithmetic are checked on hand-made reports.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>

#include "gui_test_util.h"
#include "onnx_model_maker.h"
#include "ui/pipeline/inspector_panel.h"
#include "ui/run/chart_kernel_times.h"
#include "ui/graph/graph_view.h"
#include "ui/run/roofline_chart.h"
#include "ui/run/run_controller.h"
#include "ui/run/run_panel.h"
#include "ui/models/run_table_model.h"
#include "ui/session/session_controller.h"
#include "ui/session/session_files.h"
#include "ui/session/session_state.h"

using namespace tessera;
using namespace tessera::ui;
using tessera::ui::test::sample;
using tessera::ui::test::waitForRun;
using tessera::ui::test::waitIdle;

namespace {

execute::KernelReport kernelReport(const char* group, double ms, double gbps, double gflops, bool verified) {
  execute::KernelReport k;
  k.group = group;
  k.nodes = {std::string(group) + "_node"};
  k.ms = ms;
  k.gbps = gbps;
  k.gflops = gflops;
  k.verified = verified;
  k.status = verified ? execute::KernelStatus::Ok : execute::KernelStatus::Mismatch;
  return k;
}

// y = If(cond) then Relu(x) + w else Relu(x) * w; f = com.acme::Frob(y), declared f32[3]; out = Neg(f).
std::string ifAndCustomOpModel() {
  using TP = onnx::TensorProto;
  testing::ModelMaker m;
  auto* imp = m.model.add_opset_import();
  imp->set_domain("com.acme");
  imp->set_version(1);
  m.input("cond", TP::BOOL, {});
  m.floatInput("x", {3});
  m.floatInitializer("w", {3}, {1, 2, 3});
  m.node("Relu", {"x"}, {"r"}, "relu");
  auto* n = m.node("If", {"cond"}, {"y"}, "choose");
  onnx::GraphProto* outer = m.graph;
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = n->add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    m.graph = a->mutable_g();
    m.node(branch[0] == 't' ? "Add" : "Mul", {"r", "w"}, {std::string(branch) + "_out"});
    m.output(std::string(branch) + "_out");
  }
  m.graph = outer;
  auto* frob = m.node("Frob", {"y"}, {"f"}, "frob");
  frob->set_domain("com.acme");
  testing::setInt(frob, "strength", 7);
  m.node("Neg", {"f"}, {"out"}, "neg");
  auto* vi = m.graph->add_value_info();
  vi->set_name("f");
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(TP::FLOAT);
  vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
  m.output("out");
  return m.bytes();
}

std::shared_ptr<RunResult> handMadeRun() {
  auto r = std::make_shared<RunResult>();
  r->backend = "cuda";
  r->peaks = {"test GPU", 1000, 10000, "test"};
  r->report.ran = true;
  r->report.kernels = {kernelReport("k0", 3, 500, 5000, true), kernelReport("k1", 1, 900, 0, false)};
  r->report.totalMs = 4;
  r->report.baselineTotalMs = 8;
  return r;
}

}  // namespace

class TestRunPanel : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void overlayAndRooflineArithmetic() {
    auto run = handMadeRun();
    // k0: 5000 of 10000 GFLOP/s is half the compute roof; 500 of 1000 GB/s is half the bandwidth: 50%.
    QCOMPARE(rooflineShare(run->report.kernels[0], run->peaks), 0.5);
    QCOMPARE(rooflineShare(run->report.kernels[1], run->peaks), 0.9);
    QCOMPARE(arithmeticIntensity(run->report.kernels[0]), 10.0);
    // Against the cache's roof when the buffers fit in it: 2 MB at 2000 GB/s is half a 4000 GB/s cache of 4 MB,
    // not twice the 1000 GB/s of DRAM; 3 GB do not fit, so DRAM's roof stands.
    DevicePeaks cached = run->peaks;
    cached.cacheGbps = 4000, cached.cacheBytes = 4e6;
    QCOMPARE(rooflineShare(kernelReport("small", 0.001, 2000, 0, true), cached), 0.5);
    QCOMPARE(rooflineShare(kernelReport("large", 1.5, 2000, 0, true), cached), 2.0);
    QCOMPARE(rooflineShare(run->report.kernels[0], cached), 0.5);
    auto overlay = timeOverlay(*run);
    QCOMPARE(overlay.size(), size_t(2));
    QCOMPARE(overlay["k0"].share, 0.75);
    QCOMPARE(overlay["k0"].text(), QString("3.00 ms · 50% of roofline · ✓"));
    QCOMPARE(overlay["k1"].text(), QString("1.00 ms · 90% of roofline · ✗"));
    QVERIFY(runSummary(*run).contains("2.00× faster"));
    QVERIFY(runSummary(*run).contains("not verified"));
    QVERIFY(!runSummary(*run).contains("whole run"));  // not timed as a whole: nothing said
    run->report.wholeMs = 3.5;
    run->report.graphMs = 3.25;
    QVERIFY2(runSummary(*run).contains("whole run 3.500 ms (as one CUDA graph 3.250 ms)"), qPrintable(runSummary(*run)));
    QVERIFY(!runSummary(*run).contains("kept"));
    run->report.keptBytes = 128.8e6;  // a repeat that found the weights in place (RunSession)
    QVERIFY2(runSummary(*run).contains("weights kept from the last run (128.8 MB)"), qPrintable(runSummary(*run)));
    RooflineChart roofline;
    roofline.setRun(run);
    QCOMPARE(roofline.pointCount(), 1);  // k1 moved bytes but did no arithmetic: it has no place on a log axis
    QCOMPARE(roofline.leftOut(), 1);
  }

  void runRoundTripsThroughTheSessionForm() {
    auto run = handMadeRun();
    run->kinds["k0"] = "gemm+epilogue";
    run->report.messages = {"kernel k1: output 'y' differs"};
    const RunResult back = runFromJson(nlohmann::json::parse(runToJson(*run).dump()));
    QCOMPARE(back.report.kernels.size(), size_t(2));
    QCOMPARE(back.report.kernels[1].verified, false);
    QCOMPARE(back.report.baselineTotalMs, 8.0);
    QCOMPARE(back.peaks.gflops, 10000.0);
    QCOMPARE(back.kinds.at("k0"), std::string("gemm+epilogue"));
    QCOMPARE(back.report.messages, run->report.messages);  // the ui's own reader dropped them
    QVERIFY(back.report.kernels[1].status == execute::KernelStatus::Mismatch);
    QCOMPARE(timeOverlay(back)["k0"].text(), timeOverlay(*run)["k0"].text());
  }

  void tableComparesWithThePreviousRun() {
    RunTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    auto before = handMadeRun();
    auto after = handMadeRun();
    after->report.kernels[0].ms = 1.5;
    model.setRuns(after, before);
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.index(0, RunTableModel::Delta).data(RunTableModel::ValueRole).toDouble(), -1.5);
    QVERIFY(model.index(0, RunTableModel::Delta).data().toString().contains("-50%"));
    QCOMPARE(model.index(1, RunTableModel::Verified).data().toString(), QString("✗ mismatch"));
    QCOMPARE(model.index(0, RunTableModel::Predicted).data().toString(), QString("—"));
    model.setRuns(nullptr, nullptr);
    QCOMPARE(model.rowCount(), 0);
  }

  // A kernel of constants is marked in the table, in the summary, and has no share of the run's time.
  void kernelsOfConstantsAreMarkedOnceAtLoad() {
    RunTableModel model;
    auto run = handMadeRun();
    run->kinds["k0"] = "opaque";
    run->report.kernels[0].once = true;
    run->report.onceMs = run->report.kernels[0].ms;
    model.setRuns(run, nullptr);
    QCOMPARE(model.index(0, RunTableModel::Kind).data().toString(), QString("once · opaque"));
    QVERIFY(model.index(0, RunTableModel::Kind).data(Qt::ToolTipRole).toString().contains("computed once"));
    QVERIFY(!model.index(1, RunTableModel::Kind).data().toString().contains("once"));
    QVERIFY(runSummary(*run).contains("once at load"));
    QCOMPARE(timeOverlay(*run)["k0"].share, 0.0);
  }

  void runsOnCpuFromThePanel() {
    MainWindow w;
    w.show();
    auto* panel = w.findChild<RunPanel*>();
    QVERIFY(panel);
    QAbstractItemModelTester tester(panel->model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    w.openModel(sample("mlp.tsr"));
    QVERIFY(waitIdle(w));
    RunController* runs = w.controller()->runs();
    runs->setBackend("cpu");
    QCOMPARE(runs->backend().name, QString("cpu"));
    QVERIFY(panel->runButton()->isEnabled());
    std::vector<std::shared_ptr<const RunResult>> shown;  // the run as the window showed it, in order
    std::vector<QString> summaries;
    connect(runs, &RunController::runFinished, this, [&](std::shared_ptr<const RunResult> r) {
      shown.push_back(r);
      summaries.push_back(panel->summary());
    });
    QTest::mouseClick(panel->runButton(), Qt::LeftButton);
    QVERIFY(runs->running());
    QVERIFY(waitForRun(runs, nullptr));
    auto run = runs->lastRun();
    // Its verified times first, while the unfused baseline is still being built and timed; then with it, in its
    // place (not as a previous run).
    QCOMPARE(shown.size(), size_t(2));
    QVERIFY(shown[0]->baselinePending && shown[0]->report.ran && shown[0]->report.outputsVerified);
    QVERIFY(shown[0]->report.baselineTotalMs <= 0);  // none yet
    QVERIFY2(summaries[0].contains("unfused baseline: timing"), qPrintable(summaries[0]));
    QCOMPARE(shown[1], run);
    QVERIFY(!run->baselinePending);
    QCOMPARE(run->report.totalMs, shown[0]->report.totalMs);
    QVERIFY(!runs->previousRun());
    QVERIFY2(run->error.isEmpty(), qPrintable(run->error));
    QVERIFY2(run->report.ran, run->report.cannotRun.c_str());
    // One row per kernel, all verified, each with a measured time.
    const auto& groups = w.controller()->compile()->fusion->groups;
    QCOMPARE(panel->model()->rowCount(), int(groups.size()));
    for (int row = 0; row < panel->model()->rowCount(); ++row) {
      QCOMPARE(panel->model()->index(row, RunTableModel::Verified).data(RunTableModel::ValueRole).toInt(), 1);
      QVERIFY(panel->model()->index(row, RunTableModel::Measured).data(RunTableModel::ValueRole).toDouble() > 0);
      QVERIFY(panel->model()->index(row, RunTableModel::Predicted).data(RunTableModel::ValueRole).toDouble() > 0);
    }
    QVERIFY(run->report.baselineTotalMs > 0);
    QVERIFY(panel->summary().contains("unfused"));
    // The cpu is timed within a budget a kernel, and the panel says so (the summary's tooltip).
    QVERIFY2(run->timing.contains("median of 5") && run->timing.contains("Within 10 ms"), qPrintable(run->timing));
    // The roofline is against this CPU's measured peaks (calibrated after the baseline where none were cached),
    // never cpu.json's defaults: shown only once measured.
    QVERIFY2(run->peaks.known() && run->peaks.source.startsWith("measured"), qPrintable(run->peaks.source));
    QVERIFY(!shown[0]->peaks.known() || shown[0]->peaks.source.startsWith("measured"));
    // The graph: every group carries its time.
    QVERIFY(waitIdle(w));
    const auto texts = w.graphView()->overlayTexts();
    QCOMPARE(texts.size(), groups.size());
    for (const FusedGroup& g : groups) {
      const QString text = texts.at(QString::fromStdString(g.id));
      QVERIFY2(QRegularExpression("^[0-9.]+ (µs|ms) · ").match(text).hasMatch(), qPrintable(text));
      QVERIFY2(text.endsWith("✓"), qPrintable(text));
    }
    // Charts and status bar.
    QCOMPARE(panel->timesChart()->setNames(), QStringList({"measured", "predicted"}));
    QVERIFY(panel->roofline()->pointCount() >= 1);
    const auto labels = w.statusBar()->findChildren<QLabel*>();
    QVERIFY(std::any_of(labels.begin(), labels.end(), [](QLabel* l) { return l->text().startsWith("last run: cpu"); }));
    QVERIFY(std::any_of(labels.begin(), labels.end(), [](QLabel* l) { return l->text().startsWith("backend: cpu"); }));

    // A second run compares with the first, kernel by kernel.
    QTest::mouseClick(panel->runButton(), Qt::LeftButton);
    QVERIFY(waitForRun(runs, run));
    QCOMPARE(runs->previousRun(), run);
    QVERIFY(panel->model()->index(0, RunTableModel::Delta).data().toString().contains(" ms ("));
    QCOMPARE(panel->timesChart()->setNames(), QStringList({"measured", "previous", "predicted"}));
    QVERIFY(panel->summary().contains("previous run"));

    // An override regroups the graph: the old overlay goes, and the model re-runs by itself.
    auto second = runs->lastRun();
    w.controller()->addOverride(Override{OverrideKind::Split, {}, {}, "fc1", {}}, "split fc1");
    QVERIFY(waitForRun(runs, second));
    QVERIFY(waitIdle(w));
    QCOMPARE(w.graphView()->overlayTexts().size(), w.controller()->compile()->fusion->groups.size());
  }

  // A Gather over an axis of 2 fed the window's random indices (0..3): the run fails and the panel's summary
  // says which node, input position and value, in the reference's words (the generated kernel's check says
  // the same when no reference runs: tests/codegen/test_index_checks.cpp).
  void indexOutOfRangeIsShown() {
    QTemporaryDir dir;
    QString path = dir.filePath("gather.tsr");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("graph g {\n  input %data: f32[2,3]\n  input %idx: i64[8]\n  node g = Gather(%data, %idx) {axis=0} -> %y\n"
            "  output %y\n}\n");
    f.close();
    MainWindow w;
    w.show();
    auto* panel = w.findChild<RunPanel*>();
    w.openModel(path);
    QVERIFY(waitIdle(w));
    RunController* runs = w.controller()->runs();
    runs->setBackend("cpu");
    QTest::mouseClick(panel->runButton(), Qt::LeftButton);
    QVERIFY(waitForRun(runs, nullptr));
    QVERIFY(!runs->lastRun()->error.isEmpty());
    QVERIFY2(panel->summary().contains("node 'g' (Gather): input 1 ('idx') holds "), qPrintable(panel->summary()));
    QVERIFY2(panel->summary().contains("out of range for axis 0 of extent 2 (-2..1 are valid)"), qPrintable(panel->summary()));
  }

  // A model with an If and a custom-domain op opens (the op drawn with its declared type), compiles and runs on
  // cpu up to the custom op: the table lists the If's host group with its time and the custom op's failed, the
  // summary names the node the run stopped before, and the Inspector says why each node runs on the host.
  void hostGroupsAreListedAndExplained() {
    QTemporaryDir dir;
    const QString cacheProblem = test::setUpCpuRuns(dir.filePath("cache"));
    if (!cacheProblem.isEmpty()) QSKIP(qPrintable(cacheProblem));
    const QString path = dir.filePath("hosts.onnx");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    const std::string bytes = ifAndCustomOpModel();
    f.write(bytes.data(), qint64(bytes.size()));
    f.close();
    MainWindow w;
    w.show();
    auto* panel = w.findChild<RunPanel*>();
    w.openModel(path);
    QVERIFY(waitIdle(w));
    QVERIFY(w.controller()->compile() && w.controller()->compile()->error.empty());
    QVERIFY(w.graphView()->selectNode("frob", false));  // drawn
    bool drawn = false;
    for (const LayoutNode& n : w.graphView()->currentLayout()->nodes)
      drawn = drawn || (n.id == "frob" && n.title == "com.acme::Frob" && n.subtitle == "3 f32");
    QVERIFY(drawn);

    RunController* runs = w.controller()->runs();
    runs->setBackend("cpu");
    QTest::mouseClick(panel->runButton(), Qt::LeftButton);
    QVERIFY(waitForRun(runs, nullptr));
    auto run = runs->lastRun();
    QVERIFY2(run->error.isEmpty(), qPrintable(run->error));
    QVERIFY(run->report.ran);
    QVERIFY2(panel->summary().contains("the run stopped before kernel") && panel->summary().contains("node 'frob' (com.acme::Frob)"),
             qPrintable(panel->summary()));
    int hostRows = 0;
    for (int row = 0; row < panel->model()->rowCount(); ++row) {
      const execute::KernelReport& k = run->report.kernels[size_t(row)];
      const QString kind = panel->model()->index(row, RunTableModel::Kind).data().toString();
      if (!kind.startsWith("host")) continue;
      ++hostRows;
      const QString tip = panel->model()->index(row, RunTableModel::Kind).data(Qt::ToolTipRole).toString();
      if (k.nodes == std::vector<std::string>{"choose"}) {
        QVERIFY2(tip.contains("control-flow: node 'choose' (If) is control flow"), qPrintable(tip));
        QVERIFY(panel->model()->index(row, RunTableModel::Measured).data(RunTableModel::ValueRole).toDouble() >= 0);
        QCOMPARE(panel->model()->index(row, RunTableModel::Verified).data(RunTableModel::ValueRole).toInt(), 1);
      } else {
        QCOMPARE(k.nodes, std::vector<std::string>{"frob"});
        QVERIFY2(tip.contains("unknown-op: node 'frob' (com.acme::Frob): unknown op 'Frob' (domain 'com.acme')"), qPrintable(tip));
        QCOMPARE(k.status, execute::KernelStatus::Failed);
      }
    }
    QCOMPARE(hostRows, 2);

    // The Inspector: why each node runs on the host (once the kernels are lowered for it).
    for (const auto& [node, rule] : {std::pair{"choose", "control-flow"}, std::pair{"frob", "unknown-op"}}) {
      const QString want = QString("[%1]").arg(rule);
      w.controller()->select(Selection{Selection::Node, node});
      QDeadlineTimer deadline(60000);
      QString html;
      while (!deadline.hasExpired() && !(html = inspectorHtml(*w.controller(), w.controller()->selection())).contains(want))
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
      QVERIFY2(html.contains("runs on") && html.contains(want), qPrintable(html));
    }
  }

  void tunedRunSurvivesASession() {
    // Override, tune on cpu (which runs the kept schedules), save; a fresh window reopens the same groups,
    // schedules, tune report and last run, as saved (nothing re-measured).
    QTemporaryDir dir;
    qputenv("TESSERA_CACHE_DIR", dir.filePath("cache").toUtf8());
    qputenv("XDG_CACHE_HOME", dir.filePath("xdg").toUtf8());  // autosaves
    MainWindow w;
    w.sessionFiles()->setPrompts({});
    w.openModel(sample("mlp.tsr"));
    QVERIFY(waitIdle(w));
    SessionController* c = w.controller();
    c->addOverride({OverrideKind::ForbidFuse, "fc2", "bias2", {}, {}}, "Forbid fuse fc2 → bias2");
    QVERIFY(waitIdle(w));
    RunController* runs = c->runs();
    runs->setBackend("cpu");
    QVERIFY(runs->canTune());
    runs->tune();
    QVERIFY(waitForRun(runs, nullptr, 240000));  // the tune's kept schedules are run by themselves
    QVERIFY(waitIdle(w));
    QVERIFY(!runs->tuning());
    QVERIFY2(runs->lastTune().contains("kernels"), runs->lastTune().dump().c_str());
    QVERIFY(!c->schedules().traces.empty());
    const QString file = dir.filePath("mlp-tuned.tessera");
    QVERIFY(w.sessionFiles()->saveAs(file));

    MainWindow again;
    again.sessionFiles()->setPrompts({});
    again.openModel(file);
    QVERIFY(waitIdle(again));
    SessionController* d = again.controller();
    QCOMPARE(compileFingerprint(*d->compile()), compileFingerprint(*c->compile()));
    QCOMPARE(d->schedules().save(), c->schedules().save());
    QCOMPARE(d->runs()->lastTune(), runs->lastTune());
    QVERIFY(d->runs()->lastRun());
    QCOMPARE(d->runs()->lastRun()->report.totalMs, runs->lastRun()->report.totalMs);
    QCOMPARE(d->runs()->lastRun()->report.kernels.size(), runs->lastRun()->report.kernels.size());
    QCOMPARE(d->runs()->currentOverlay().size(), runs->currentOverlay().size());
  }

  void tuneSaysWhyItIsUnavailable() {
    MainWindow w;
    auto* panel = w.findChild<RunPanel*>();
    QVERIFY(!panel->tuneButton()->isEnabled());
    QVERIFY(panel->tuneButton()->toolTip().contains("no model"));
    w.openModel(sample("mlp.tsr"));
    QVERIFY(waitIdle(w));
    w.controller()->runs()->setBackend("reference");
    QVERIFY(!panel->tuneButton()->isEnabled());
    QVERIFY(panel->tuneButton()->toolTip().contains("reference"));
    // cuda is listed with its device or with the reason it cannot run.
    const BackendInfo& cuda = w.controller()->runs()->backends().back();
    QCOMPARE(cuda.name, QString("cuda"));
    QVERIFY(!cuda.device.isEmpty() || !cuda.unavailable.isEmpty());
    const int row = panel->backendBox()->findData("cuda");
    QVERIFY(panel->backendBox()->itemText(row).startsWith("cuda — "));
  }
};

QTEST_MAIN(TestRunPanel)
#include "test_run_panel.moc"
