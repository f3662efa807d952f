// Big models in the window (issue 14): the light ResNet-50 and a generated 10,000-node stack open collapsed at a
// readable zoom; layers open and close (calls, double-click, keys); search opens the layers around a hit hidden
// in a collapsed layer; the time overlay's per-layer sums equal the sums over their nodes.
#include <QDockWidget>
#include <QGraphicsItem>
#include <QTemporaryDir>
#include <QFileInfo>
#include <QtTest>

#include "bench/layers/stack_model.h"
#include "frontend/model_io.h"
#include "gui_test_util.h"
#include "ui/graph/graph_items.h"
#include "ui/graph/graph_view.h"
#include "ui/graph/overview_map.h"
#include "ui/session/session_controller.h"

using namespace tessera;
using namespace tessera::ui;
using tessera::ui::test::waitIdle;

namespace {

QString lightModel(const char* name) { return QStringLiteral(TESSERA_DATA_DIR "/onnx-light/light/light_%1.onnx").arg(name); }

const LayoutNode* boxOf(const GraphLayout& l, const QString& path) {
  for (const LayoutNode& n : l.nodes)
    if (n.layer == path) return &n;
  return nullptr;
}

const LayoutCluster* frameOf(const GraphLayout& l, const QString& path) {
  for (const LayoutCluster& c : l.clusters)
    if (c.layer == path) return &c;
  return nullptr;
}

NodeItem* itemOf(GraphView* view, const QString& id) {
  for (QGraphicsItem* item : view->scene()->items())
    if (item->type() == NodeItemType && static_cast<NodeItem*>(item)->node().id == id) return static_cast<NodeItem*>(item);
  return nullptr;
}

// Opens `model` in the window with every layer closed.
bool openCollapsed(MainWindow& w, const QString& model) {
  w.openModel(model);
  if (!waitIdle(w)) return false;
  w.graphView()->openToDepth(0);
  return waitIdle(w);
}

// Every node drawn inside its frame, and every frame inside the frame around it.
void checkNesting(const GraphLayout& l) {
  for (const LayoutNode& n : l.nodes)
    if (n.owner >= 0) QVERIFY2(l.clusters[size_t(n.owner)].box.adjusted(-1, -1, 1, 1).contains(n.box), qPrintable(n.id));
  for (const LayoutCluster& c : l.clusters)
    if (c.owner >= 0) QVERIFY2(l.clusters[size_t(c.owner)].box.adjusted(-1, -1, 1, 1).contains(c.box), qPrintable(c.id));
}

}  // namespace

class TestLayersView : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  // Opens with the stages as boxes, readable (not a strip), with breadcrumbs; res3 opens into its blocks and
  // closes again.
  void resnet50OpensCollapsed() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    if (!QFileInfo::exists(lightModel("resnet50"))) QSKIP(qPrintable("test data absent: " + lightModel("resnet50")));
    w.openModel(lightModel("resnet50"));
    QVERIFY(waitIdle(w));
    GraphView* view = w.graphView();
    auto layout = view->currentLayout();
    QVERIFY(view->layers());
    QVERIFY(layout->nodes.size() <= 80);
    QVERIFY2(boxOf(*layout, "res3") || frameOf(*layout, "res3"), "res3 drawn");
    QVERIFY(view->transform().m11() >= 0.5);
    QVERIFY(view->breadcrumbs().startsWith("resnet50"));
    view->openToDepth(0);
    QVERIFY(waitIdle(w));
    QVERIFY(boxOf(*view->currentLayout(), "res3"));
    view->setLayerOpen("res3", true);
    QVERIFY(waitIdle(w));
    layout = view->currentLayout();
    QVERIFY(frameOf(*layout, "res3"));
    QVERIFY(boxOf(*layout, "res3/res3_1"));
    QVERIFY(boxOf(*layout, "res3/res3_1")->title.contains(QStringLiteral("×3")));
    checkNesting(*layout);
    view->setLayerOpen("res3", false);
    QVERIFY(waitIdle(w));
    QVERIFY(boxOf(*view->currentLayout(), "res3"));
    QVERIFY(!frameOf(*view->currentLayout(), "res3"));
  }

  // Double-click on a box opens it; Backspace with a node inside selected closes it.
  void doubleClickAndKeys() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    if (!QFileInfo::exists(lightModel("resnet50"))) QSKIP(qPrintable("test data absent: " + lightModel("resnet50")));
    QVERIFY(openCollapsed(w, lightModel("resnet50")));
    GraphView* view = w.graphView();
    NodeItem* box = itemOf(view, "layer:res4");
    QVERIFY(box);
    view->centerOn(box);
    QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, view->mapFromScene(box->sceneBoundingRect().center()));
    QVERIFY(waitIdle(w));
    QVERIFY(frameOf(*view->currentLayout(), "res4"));
    NodeItem* inner = itemOf(view, "layer:res4/res4_2");
    QVERIFY(inner);
    inner->setSelected(true);
    QCOMPARE(view->breadcrumbs(), QStringLiteral("resnet50 › res4 › res4_2"));
    QTest::keyClick(view, Qt::Key_Plus);
    QVERIFY(waitIdle(w));
    QVERIFY(frameOf(*view->currentLayout(), "res4/res4_2"));
    NodeItem* node = nullptr;
    for (const LayoutNode& n : view->currentLayout()->nodes)
      if (n.layer.isEmpty() && n.owner >= 0 && view->currentLayout()->clusters[size_t(n.owner)].layer.startsWith("res4/res4_2"))
        node = itemOf(view, n.id);
    QVERIFY(node);
    node->setSelected(true);
    QCOMPARE(view->breadcrumbs(), QStringLiteral("resnet50 › res4 › res4_2"));
    QTest::keyClick(view, Qt::Key_Backspace);
    QVERIFY(waitIdle(w));
    QVERIFY(!frameOf(*view->currentLayout(), "res4/res4_2"));
    QVERIFY(boxOf(*view->currentLayout(), "res4/res4_2") || !frameOf(*view->currentLayout(), "res4"));
  }

  // Alt+Down and Alt+Up walk along the drawn edges; F11 hides the docks and brings them back.
  void producersConsumersAndGraphOnly() {
    MainWindow w;
    w.show();
    if (!QFileInfo::exists(lightModel("resnet50"))) QSKIP(qPrintable("test data absent: " + lightModel("resnet50")));
    QVERIFY(openCollapsed(w, lightModel("resnet50")));
    GraphView* view = w.graphView();
    NodeItem* res3 = itemOf(view, "layer:res3");
    QVERIFY(res3);
    res3->setSelected(true);
    QTest::keyClick(view, Qt::Key_Down, Qt::AltModifier);
    QVERIFY(itemOf(view, "layer:res4")->isSelected());
    QTest::keyClick(view, Qt::Key_Up, Qt::AltModifier);
    QVERIFY(itemOf(view, "layer:res3")->isSelected());
    auto visibleDocks = [&w] {
      int n = 0;
      for (QDockWidget* d : w.findChildren<QDockWidget*>()) n += d->isVisible();
      return n;
    };
    const int before = visibleDocks();
    QVERIFY(before > 0);
    QTest::keyClick(&w, Qt::Key_F11);
    QCOMPARE(visibleDocks(), 0);
    QTest::keyClick(&w, Qt::Key_F11);
    QCOMPARE(visibleDocks(), before);
  }

  // Search finds a node hidden in a collapsed layer, opens the layers around it and selects it.
  void searchOpensTheLayersOfAHit() {
    MainWindow w;
    if (!QFileInfo::exists(lightModel("resnet50"))) QSKIP(qPrintable("test data absent: " + lightModel("resnet50")));
    QVERIFY(openCollapsed(w, lightModel("resnet50")));
    GraphView* view = w.graphView();
    const LayerTree* tree = view->layers();
    const int block = tree->find("res4/res4_3");
    QVERIFY(block > 0);
    const QString hidden = QString::fromStdString(tree->nodeIds()[size_t(tree->nodesUnder(block).back())]);
    QVERIFY(!itemOf(view, hidden));
    QVERIFY(view->search(hidden));
    QVERIFY(waitIdle(w));
    NodeItem* found = itemOf(view, hidden);
    QVERIFY(found);
    QVERIFY(found->isSelected());
    QVERIFY(view->openLayers().count("res4/res4_3"));
    QCOMPARE(w.controller()->selection().id, hidden);
  }

  // A layer's time is the sum over its nodes of their kernel's time shared evenly among the kernel's nodes;
  // the collapsed box shows it.
  void overlaySumsPerLayer() {
    MainWindow w;
    if (!QFileInfo::exists(lightModel("resnet50"))) QSKIP(qPrintable("test data absent: " + lightModel("resnet50")));
    QVERIFY(openCollapsed(w, lightModel("resnet50")));
    GraphView* view = w.graphView();
    auto fusion = w.controller()->compile()->fusion;
    std::map<QString, GroupTiming> overlay;
    std::map<std::string, double> nodeMs;
    for (size_t g = 0; g < fusion->groups.size(); ++g) {
      GroupTiming t;
      t.ms = 0.01 * double(g + 1);
      t.share = 0.5 / double(fusion->groups.size());
      t.verified = true;
      overlay[QString::fromStdString(fusion->groups[g].id)] = t;
      for (const GroupNode& n : fusion->groups[g].nodes) nodeMs[n.id] = t.ms / double(fusion->groups[g].nodes.size());
    }
    view->setTimeOverlay(overlay);
    const LayerTree* tree = view->layers();
    const auto times = view->layerTimes();
    QVERIFY(times.size() == tree->layers().size() - 1);
    double stages = 0;
    for (size_t l = 1; l < tree->layers().size(); ++l) {
      double expected = 0;
      for (int n : tree->nodesUnder(int(l))) expected += nodeMs[tree->nodeIds()[size_t(n)]];
      const GroupTiming& t = times.at(QString::fromStdString(tree->layer(int(l)).path));
      QVERIFY2(std::abs(t.ms - expected) < 1e-9, tree->layer(int(l)).path.c_str());
      if (tree->layer(int(l)).depth == 1) stages += t.ms;
    }
    double all = 0;
    for (const auto& [id, ms] : nodeMs) all += ms;
    double atRoot = 0;
    for (int n : tree->root().nodes) atRoot += nodeMs[tree->nodeIds()[size_t(n)]];
    QVERIFY(std::abs(stages + atRoot - all) < 1e-9);
    NodeItem* res3 = itemOf(view, "layer:res3");
    QVERIFY(res3);
    QCOMPARE(res3->timingText(), times.at("res3").text());
    // A repeated layer's tooltip compares its time with the layers like it.
    view->setLayerOpen("res4", true);
    QVERIFY(waitIdle(w));
    NodeItem* repeat = itemOf(view, "layer:res4/res4_2");
    QVERIFY(repeat);
    QVERIFY2(repeat->toolTip().contains("the 5 like it"), qPrintable(repeat->toolTip()));
  }

  // A generated 10,000-node stack opens with its 195 blocks in seven groups ("h.0 … h.31 ×32", the last
  // "h.192 … h.194 ×3"), at a readable zoom; a group opens into its blocks, a block into its modules, and a
  // search opens the group and the block around its hit. (Its speed is bench_layers', docs/performance.md.)
  void tenThousandNodes() {
    QTemporaryDir dir;
    const QString path = dir.filePath("stack10k.tsr");
    saveModel(bench::transformerStack(10000), path.toStdString());
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    w.openModel(path);
    QVERIFY(waitIdle(w, 120000));
    GraphView* view = w.graphView();
    auto layout = view->currentLayout();
    QVERIFY(view->layers());
    const QString group = QStringLiteral("h.96 \u2026 h.127");
    QVERIFY(boxOf(*layout, QStringLiteral("h.0 \u2026 h.31")) && boxOf(*layout, QStringLiteral("h.192 \u2026 h.194")));
    QCOMPARE(boxOf(*layout, group)->title, QStringLiteral("h.96 \u2026 h.127 \u00d732"));
    QCOMPARE(layout->nodes.size(), size_t(1 + 7 + 2));  // the input, the groups, ln_f and lm_head
    QVERIFY(view->transform().m11() >= 0.5);
    view->setLayerOpen(group, true);
    QVERIFY(waitIdle(w));
    layout = view->currentLayout();
    QVERIFY(frameOf(*layout, group));
    QVERIFY(boxOf(*layout, "h.100")->title.contains(QStringLiteral("\u00d7195")));
    QVERIFY(!boxOf(*layout, "h.95") && boxOf(*layout, QStringLiteral("h.64 \u2026 h.95")));
    // The overview map shows (the picture is taller than the view); a click at its bottom moves the view there.
    QVERIFY(view->overview()->isVisible());
    const double before = view->mapToScene(view->viewport()->rect().center()).y();
    QTest::mouseClick(view->overview(), Qt::LeftButton, {}, QPoint(view->overview()->width() / 2, view->overview()->height() - 4));
    QVERIFY(view->mapToScene(view->viewport()->rect().center()).y() > before + 1000);
    view->setLayerOpen("h.100", true);
    QVERIFY(waitIdle(w));
    layout = view->currentLayout();
    QVERIFY(frameOf(*layout, "h.100"));
    QVERIFY(boxOf(*layout, "h.100/attn"));
    QVERIFY(boxOf(*layout, "h.99") && boxOf(*layout, "h.101"));
    checkNesting(*layout);
    // Closed again, then a search for a node of h.150 opens its group and its block.
    w.graphView()->openToDepth(0);
    QVERIFY(waitIdle(w));
    QVERIFY(!frameOf(*view->currentLayout(), group));
    QVERIFY(view->search("/h.150/attn/"));
    QVERIFY(waitIdle(w));
    layout = view->currentLayout();
    QVERIFY(frameOf(*layout, QStringLiteral("h.128 \u2026 h.159")) && frameOf(*layout, "h.150"));
    const QString hit = w.controller()->selection().id;
    QVERIFY2(hit.startsWith("/h.150/attn/") && itemOf(view, hit), qPrintable(hit));
  }
};

QTEST_MAIN(TestLayersView)
#include "test_layers_view.moc"
