// Item models under QAbstractItemModelTester, with their contents compared as printed rows; the line diff.
#include <QAbstractItemModelTester>
#include <QtTest>

#include "frontend/text/tsr.h"
#include "fusion/compile.h"
#include "ui/models/line_diff.h"
#include "ui/models/node_table_model.h"
#include "ui/models/overrides_model.h"
#include "ui/models/pipeline_model.h"

using namespace tessera;
using namespace tessera::ui;

namespace {
const char* kTiny = R"(graph tiny {
  input %x: f32[2,3]
  node a = Relu(%x) -> %r
  node b = Neg(%r) -> %n
  node c = Neg(%n) -> %y
  output %y
})";

std::shared_ptr<const CompileResult> compileTiny(std::vector<Override> overrides = {}) {
  CompileOptions options;
  options.overrides = std::move(overrides);
  return std::make_shared<const CompileResult>(compileGraph(parseTsr(kTiny, "tiny.tsr"), options));
}

QStringList rows(const QAbstractItemModel& m) {
  QStringList out;
  for (int r = 0; r < m.rowCount(); ++r) {
    QStringList cells;
    for (int c = 0; c < m.columnCount(); ++c) cells << m.index(r, c).data().toString();
    out << cells.join(" | ");
  }
  return out;
}
}  // namespace

class TestUiModels : public QObject {
  Q_OBJECT
 private slots:
  void pipelineModelListsTheSteps() {
    PipelineModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(model.rowCount(), 0);
    auto compile = compileTiny();
    model.setCompile(compile);
    QCOMPARE(model.rowCount(), 1 + int(compile->steps.size()));
    QCOMPARE(model.index(0, PipelineModel::Pass).data().toString(), QString("input"));
    QCOMPARE(model.index(1, PipelineModel::Pass).data().toString(), QString("1. infer-shapes"));
    // Unchanged steps, and only those, are greyed.
    for (int r = 1; r < model.rowCount(); ++r) {
      const bool greyed = model.index(r, PipelineModel::Pass).data(Qt::ForegroundRole).isValid();
      QCOMPARE(greyed, !compile->steps[size_t(r - 1)].changed);
    }
    QCOMPARE(model.index(1, PipelineModel::Delta).data().toString(), QString("—"));
    model.setCompile(nullptr);
    QCOMPARE(model.rowCount(), 0);
  }

  void pipelineDeltaIsHandChecked() {
    // The mlp sample: decompose turns one Gelu into five nodes (+5 −1).
    PipelineModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    CompileResult r = compileGraph(parseTsrFile(TESSERA_SOURCE_DIR "/samples/mlp.tsr"), {});
    model.setCompile(std::make_shared<const CompileResult>(std::move(r)));
    QCOMPARE(model.index(5, PipelineModel::Pass).data().toString(), QString("5. decompose"));
    QCOMPARE(model.index(5, PipelineModel::Delta).data().toString(), QString("+5 −1 ~0"));
  }

  void overridesModelShowsStatusAndRule() {
    OverridesModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    std::vector<Override> overrides{{OverrideKind::ForbidFuse, "nosuch", "b", {}, {}},
                                    {OverrideKind::DisablePass, {}, {}, {}, "cse"}};
    auto compile = compileTiny(overrides);
    model.setOverrides(overrides, compile->overrides);
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.index(0, OverridesModel::Kind).data().toString(), QString("forbid-fuse"));
    QCOMPARE(model.index(0, OverridesModel::Target).data().toString(), QString("nosuch → b"));
    QVERIFY(model.index(0, OverridesModel::Status).data().toString().startsWith("stale"));
    QVERIFY(model.index(0, OverridesModel::Status).data(Qt::ForegroundRole).isValid());
    QCOMPARE(model.index(1, OverridesModel::Status).data().toString(), QString("applied"));
    // Before the compile comes back, a new entry is pending.
    overrides.push_back({OverrideKind::Split, {}, {}, "a", {}});
    model.setOverrides(overrides, compile->overrides);
    QCOMPARE(model.index(2, OverridesModel::Status).data().toString(), QString("pending"));
  }

  void nodeTableModelPrintsTheGraph() {
    NodeTableModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setGraph(std::make_shared<const Graph>(parseTsr(kTiny, "tiny.tsr")));
    QCOMPARE(rows(model), QStringList({"a | Relu | %x | %r: f32[2,3]", "b | Neg | %r | %n: f32[2,3]",
                                       "c | Neg | %n | %y: f32[2,3]"}));
  }

  void lineDiffMarksAddedAndRemoved() {
    auto d = diffLines({"a", "b", "c", "d"}, {"a", "x", "c", "d", "e"});
    QString printed = diffText(d);
    QCOMPARE(printed, QString("  a\n- b\n+ x\n  c\n  d\n+ e\n"));
    QCOMPARE(diffText(diffLines({"same"}, {"same"})), QString("  same\n"));
    QCOMPARE(diffText(diffLines({}, {"new"})), QString("+ new\n"));
  }
};

QTEST_MAIN(TestUiModels)
#include "test_ui_models.moc"
