// The Schedule panel: the kernel of the selection with its loop tree and tiling picture; editing a gemm tile
// size re-lowers the kernel with the new value in its trace, and undo restores it; a refused combination shows
// the schedule's error and changes nothing.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QListWidget>
#include <QTreeView>
#include <QUndoStack>
#include <QtTest>

#include "gui_test_util.h"
#include "frontend/text/tsr.h"
#include "runtime/execute/from_fusion.h"
#include "ui/schedule/schedule_tiling.h"
#include "ui/code/code_controller.h"
#include "ui/window/headless_render.h"
#include "ui/code/code_levels.h"
#include "ui/schedule/schedule_edit.h"
#include "ui/models/schedule_loop_model.h"
#include "ui/schedule/schedule_panel.h"
#include "ui/schedule/schedule_picture.h"
#include "ui/session/session_controller.h"

using namespace tessera;
using namespace tessera::ui;
using tessera::ui::test::sample;
using tessera::ui::test::waitIdle;

namespace {

// Waits until the panel shows kernel `id` lowered for the current compile and schedules.
bool waitForKernel(MainWindow& w, SchedulePanel* panel, const QString& id, int timeoutMs = 30000) {
  QDeadlineTimer deadline(timeoutMs);
  while (!deadline.hasExpired()) {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    auto code = w.controller()->code()->kernels();
    if (!w.controller()->code()->busy() && code && code->compile == w.controller()->compile() && panel->kernelId() == id &&
        panel->picture()->tiling())
      return true;
    QThread::msleep(5);
  }
  return false;
}

const execute::CompiledKernel& kernelOf(MainWindow& w, const QString& id) {
  return w.controller()->code()->kernels()->find(id)->compiled;
}

int64_t recorded(const execute::CompiledKernel& k, const std::string& name) {
  return paramsOfTrace(k.trace).at(name);
}

// Opens mlp and selects `pick`; true once the panel shows kernel `id`.
bool openMlpShowing(MainWindow& w, SchedulePanel* panel, const Selection& pick, const QString& id) {
  w.openModel(sample("mlp.tsr"));
  if (!waitIdle(w)) return false;
  w.controller()->select(pick);
  return waitForKernel(w, panel, id);
}

}  // namespace

class TestSchedulePanel : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void showsTheKernelOfTheSelection() {
    MainWindow w;
    auto* panel = w.findChild<SchedulePanel*>();
    QVERIFY(panel);
    QAbstractItemModelTester tester(panel->loopModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QVERIFY(openMlpShowing(w, panel, {Selection::Node, "fc2", {}, {}}, "k1"));  // a node selects its group's kernel
    const kernel::Kernel& k = kernelOf(w, "k1").kernel;
    // The tree holds every loop of the nest, bound ones say their hardware index.
    QCOMPARE(panel->loopModel()->rows().size(), loopRows(k).size());
    const QModelIndex top = panel->loopModel()->index(0, ScheduleLoopModel::Runs);
    QVERIFY(top.data().toString().startsWith("blockIdx"));
    // The picture: gemm output 64 x 256 in block_m x block_n tiles, A and B tiles beside it.
    const TilingPicture& t = *panel->picture()->tiling();
    QCOMPARE(t.templateName, QString("gemm"));
    QCOMPARE(t.gridX * t.tileCols, int64_t(256));
    QCOMPARE(t.gridY * t.tileRows, int64_t(64));
    QCOMPARE(t.tileRows, k.params.at("block_m"));
    QCOMPARE(t.operands.size(), size_t(2));
    QCOMPARE(t.operands[0].tileCols, k.params.at("block_k"));  // A: rows x block_k
    QCOMPARE(t.operands[1].tileRows, k.params.at("block_k"));  // B: block_k x columns
    QCOMPARE(t.waves, (t.blocks + t.slotsPerWave - 1) / t.slotsPerWave);
    QCOMPARE(t.waveOf(t.gridX - 1, t.gridY - 1, t.gridZ - 1), t.waves - 1);
    QVERIFY(t.sharedLimit > 0 && t.registerLimit > 0);
    QVERIFY(!panel->picture()->grab().isNull());
  }

  // The trace stepper: row 0 is the nest as lowered (i, j, k, nothing bound), row n the nest after the n-th
  // primitive (the tile's loops appear at the tile step, not before), the last row the kernel as compiled.
  void traceStepperReplaysPrimitiveByPrimitive() {
    MainWindow w;
    auto* panel = w.findChild<SchedulePanel*>();
    QVERIFY(openMlpShowing(w, panel, {Selection::Node, "fc2", {}, {}}, "k1"));
    const execute::CompiledKernel& ck = kernelOf(w, "k1");
    const auto& steps = ck.trace.instructions;
    QCOMPARE(panel->traceList()->count(), int(steps.size()) + 1);
    QCOMPARE(panel->traceStep(), -1);
    QCOMPARE(panel->traceList()->currentRow(), int(steps.size()));
    QCOMPARE(panel->loopModel()->rows().size(), loopRows(ck.kernel).size());
    QVERIFY(panel->showTraceStep(0));
    QVERIFY(panel->loopModel()->indexOfLoop("i").isValid());
    QVERIFY(!panel->loopModel()->indexOfLoop("i_o").isValid());
    for (const LoopRow& r : panel->loopModel()->rows()) QCOMPARE(r.header.loopKind, kernel::LoopKind::Serial);
    const auto tile = std::find_if(steps.begin(), steps.end(), [](const kernel::Instruction& i) { return i.kind == "tile"; });
    QVERIFY(tile != steps.end());
    const int at = int(tile - steps.begin()) + 1;  // rows count the primitives applied
    QVERIFY(panel->traceList()->item(at)->text().contains("tile i, j"));
    QVERIFY(panel->showTraceStep(at - 1));
    QVERIFY(!panel->loopModel()->indexOfLoop("i_o").isValid());
    panel->traceList()->setCurrentRow(at);  // picking a row steps there
    QCOMPARE(panel->traceStep(), at);
    QVERIFY(panel->loopModel()->indexOfLoop("i_o").isValid());
    QVERIFY(!panel->loopModel()->indexOfLoop("i").isValid());
    // New kernels of the same schedule (another panel asked for them) keep the step shown.
    w.controller()->code()->requestKernels();
    QVERIFY(waitForKernel(w, panel, "k1"));
    QTest::qWait(200);
    QCOMPARE(panel->traceStep(), at);
    QVERIFY(panel->showTraceStep(-1));
    QCOMPARE(panel->loopModel()->rows().size(), loopRows(ck.kernel).size());
    QCOMPARE(panel->traceList()->currentRow(), int(steps.size()));
  }

  void editsATileSizeAndUndoes() {
    MainWindow w;
    auto* panel = w.findChild<SchedulePanel*>();
    QVERIFY(openMlpShowing(w, panel, {Selection::Group, "k0", {}, {}}, "k0"));
    const int64_t before = recorded(kernelOf(w, "k0"), "block_m");
    QComboBox* box = panel->paramBox("block_m");
    QVERIFY(box);
    QCOMPARE(box->currentText(), QString::number(before));
    // Choose another candidate in the box, as a user would.
    const int other = box->findText(before == 32 ? "16" : "32");
    QVERIFY(other >= 0);
    const int64_t after = box->itemData(other).toLongLong();
    box->setCurrentIndex(other);
    emit box->activated(other);
    QCOMPARE(w.controller()->undoStack()->count(), 1);
    QVERIFY(waitForKernel(w, panel, "k0"));
    QCOMPARE(recorded(kernelOf(w, "k0"), "block_m"), after);  // re-lowered: its trace holds the new value
    QCOMPARE(kernelOf(w, "k0").kernel.params.at("block_m"), after);
    QVERIFY(kernelOf(w, "k0").replayed);
    QCOMPARE(panel->picture()->tiling()->tileRows, after);
    QCOMPARE(panel->paramBox("block_m")->currentText(), QString::number(after));
    // The CUDA source follows the schedule.
    QVERIFY(!w.controller()->code()->kernels()->find("k0")->cuda.source.empty());
    w.controller()->undoStack()->undo();
    QVERIFY(waitForKernel(w, panel, "k0"));
    QCOMPARE(recorded(kernelOf(w, "k0"), "block_m"), before);
    QVERIFY(!kernelOf(w, "k0").replayed);  // back to the template's defaults
    w.controller()->undoStack()->redo();
    QVERIFY(waitForKernel(w, panel, "k0"));
    QCOMPARE(recorded(kernelOf(w, "k0"), "block_m"), after);
    // Reset is one more undoable step.
    panel->resetSchedule();
    QCOMPARE(w.controller()->undoStack()->count(), 2);
    QVERIFY(waitForKernel(w, panel, "k0"));
    QCOMPARE(recorded(kernelOf(w, "k0"), "block_m"), before);
  }

  void refusedCombinationShowsTheMessage() {
    MainWindow w;
    auto* panel = w.findChild<SchedulePanel*>();
    QVERIFY(openMlpShowing(w, panel, {Selection::Group, "k0", {}, {}}, "k0"));
    // Tensor cores on f32 operands: offered by the box, refused by the gemm template.
    QVERIFY(panel->paramBox("mma")->findText("1") >= 0);
    QVERIFY(!panel->editParam("mma", 1));
    QVERIFY2(panel->error().contains("mma = 1 refused"), qPrintable(panel->error()));
    QVERIFY2(panel->error().contains("f16 or bf16"), qPrintable(panel->error()));  // the template's rule
    QCOMPARE(w.controller()->undoStack()->count(), 0);
    QCOMPARE(w.controller()->schedules().traces.size(), size_t(0));
    QCOMPARE(panel->paramBox("mma")->currentText(), QString("0"));
    QCOMPARE(recorded(kernelOf(w, "k0"), "mma"), int64_t(0));
  }

  // A row split over blocks: its loop tree says which launch each top-level nest is, the picture how the rows
  // are spread.
  void splitRowShowsItsLaunches() {
    const char* tsr = "graph g {\n  input %x: f32[4,65536]\n  node n = Softmax(%x) {axis=-1} -> %y\n  output %y\n}\n";
    execute::CompiledModel m = execute::compileKernels(compileGraph(parseTsr(tsr), CompileOptions{}));
    const kernel::Kernel& k = m.kernels.at(0).kernel;
    QCOMPARE(k.params.at("blocks_per_row"), int64_t(8));
    ScheduleLoopModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.setKernel(&k);
    QCOMPARE(model.rowCount(), 3);  // one nest per launch: the max, the sum, the outputs
    QVERIFY(model.index(0, ScheduleLoopModel::Notes).data().toString().startsWith("launch 1 of 3"));
    QVERIFY(model.index(2, ScheduleLoopModel::Notes).data().toString().startsWith("launch 3 of 3"));
    TilingPicture t = describeTiling(k, codegen::generateCuda(k).launch, cost::loadDevice("h200"));
    QCOMPARE(t.blocks, int64_t(32));
    QVERIFY2(t.tileCaption.contains("each row over 8 blocks") && t.tileCaption.contains("3 launches"), qPrintable(t.tileCaption));
  }

  // A conv split over k (batch 1, 512 channels over 7 x 7): two launches, and the picture says each of the 16
  // blocks of a tile sums a part of k.
  void splitKShowsItsParts() {
    const char* tsr = "graph g {\n  input %x: f32[1,512,7,7]\n  const %w: f32[512,512,3,3] = fill(0.01)\n"
                      "  node c = Conv(%x, %w) {kernel_shape=[3, 3], pads=[1, 1, 1, 1]} -> %y\n  output %y\n}\n";
    execute::CompiledModel m = execute::compileKernels(compileGraph(parseTsr(tsr), CompileOptions{}));
    const kernel::Kernel& k = m.kernels.at(0).kernel;
    QCOMPARE(k.params.at("split_k"), int64_t(16));
    ScheduleLoopModel model;
    model.setKernel(&k);
    QCOMPARE(model.rowCount(), 2);  // phase 0 (the parts) and phase 1 (their sum)
    QVERIFY(model.index(1, ScheduleLoopModel::Notes).data().toString().startsWith("launch 2 of 2"));
    TilingPicture t = describeTiling(k, codegen::generateCuda(k).launch, cost::loadDevice("h200"));
    QCOMPARE(t.blocks, int64_t(2048));
    QCOMPARE(t.tileCols, int64_t(196));  // 25088 outputs x 16 parts over 2048 blocks (tiles of 2 rows overhang the 7)
    QVERIFY2(t.tileCaption.contains("1/16 of k (split-K); 2 launches"), qPrintable(t.tileCaption));
  }

  // tessera-cli render --view schedule: the panel on the kernel of --select, and run on cpu with its timings.
  void rendersScheduleAndRunHeadless() {
    QTemporaryDir dir;
    RenderRequest r;
    r.model = sample("mlp.tsr");
    r.select = "fc2";
    r.size = QSize(1000, 700);
    for (const char* view : {"schedule", "run"}) {
      r.view = view;
      r.output = dir.filePath(QString(view) + ".png");
      QCOMPARE(renderHeadless(r), 0);
      QImage image(r.output);
      QVERIFY(image.width() > 300 && image.height() > 300);
    }
    r.backend = "nonsense";
    QCOMPARE(renderHeadless(r), 1);  // an unknown backend is refused, not ignored
  }
};

QTEST_MAIN(TestSchedulePanel)
#include "test_schedule_panel.moc"
