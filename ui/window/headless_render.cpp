#include "ui/window/headless_render.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDockWidget>
#include <QImage>
#include <QPainter>
#include <QThread>
#include <cstdio>

#include "fusion/overrides.h"
#include "layers/collapsed_graph.h"
#include "ui/graph/graph_view.h"
#include "ui/pipeline/inspector_panel.h"
#include "ui/code/levels_panel.h"
#include "ui/window/main_window.h"
#include "ui/pipeline/overrides_panel.h"
#include "ui/pipeline/pipeline_panel.h"
#include "ui/window/compare_docks.h"
#include "ui/window/run_docks.h"
#include "ui/session/session_controller.h"
#include "ui/session/session_files.h"

namespace tessera::ui {

const std::vector<RenderView>& renderViews() {
  static const std::vector<RenderView> views{
      {"graph", "the graph of the step, groups and legend", [](MainWindow& w) -> QWidget* { return w.graphView(); }, {}},
      // The whole window, with the pipeline list and the IR diff of the step in view.
      {"pipeline", "the window at the step (pipeline list, graph, IR diff)", [](MainWindow& w) -> QWidget* { return &w; }, {}},
      {"inspector", "the inspector on the selection", [](MainWindow& w) -> QWidget* { return w.inspector(); }, {}},
      {"overrides", "the overrides list", [](MainWindow& w) -> QWidget* { return w.overridesPanel(); }, {}},
      {"window", "the whole window", [](MainWindow& w) -> QWidget* { return &w; }, {}},
      {"schedule", "the schedule of the selected kernel", schedulePanelFor, scheduleBusy},
      {"code", "the levels and generated code of the selection", levelsPanelFor, levelsBusy},
      {"run", "the run panel with per-kernel timings (runs on --backend first)", runPanelFor, runBusy},
      {"compare", "a session's first branch against its last (graphs, joined runs, deltas)", compareViewFor, compareBusy},
      {"tensor", "the tensor panel on the selected node's output after a run with values kept", tensorPanelFor, tensorBusy},
  };
  return views;
}

QStringList renderViewNames() {
  QStringList names;
  for (const RenderView& v : renderViews()) names << v.name;
  return names;
}

namespace {

int failWith(const QString& message, int code = 1) {
  std::fprintf(stderr, "render: %s\n", qPrintable(message));
  return code;
}

// Spins the event loop until the window (and the view's own work) has nothing in flight.
bool settle(MainWindow& w, const RenderView& view, QDeadlineTimer deadline) {
  return waitUntil([&] { return w.idle() && !(view.busy && view.busy(w)); }, deadline);
}

QString firstHeavyNode(const SessionController& c) {
  auto g = c.graphAt(c.currentStep());
  if (!g) return {};
  for (const Node* n : g->topoOrder())
    if (n->op() == "MatMul" || n->op() == "Gemm" || n->op() == "Conv") return QString::fromStdString(n->id());
  return g->numNodes() ? QString::fromStdString(g->topoOrder().front()->id()) : QString();
}

// The image scaled (never enlarged) to fit `size` and centred on a canvas of exactly that size.
QImage onCanvas(const QImage& image, QSize size) {
  QImage canvas(size, QImage::Format_ARGB32);
  canvas.fill(QColor(0xfb, 0xfb, 0xf9));
  const QImage fitted = image.width() > size.width() || image.height() > size.height()
                            ? image.scaled(size, Qt::KeepAspectRatio, Qt::SmoothTransformation)
                            : image;
  QPainter painter(&canvas);
  painter.drawImage(QPoint((size.width() - fitted.width()) / 2, (size.height() - fitted.height()) / 2), fitted);
  return canvas;
}

QImage grabPanel(MainWindow& w, QWidget* panel, const RenderRequest& r) {
  if (panel == w.graphView()) return w.graphView()->renderWhole(r.size);
  if (auto* dock = qobject_cast<QDockWidget*>(panel->parentWidget())) {
    // A dock alone: float it at a readable size.
    dock->setFloating(true);
    dock->resize(r.exactSize ? r.size.width() : std::min(r.size.width(), 560),
                 r.exactSize ? r.size.height() : std::min(r.size.height(), 720));
    QCoreApplication::processEvents();
    panel = dock;
  } else if (panel != &w) {
    panel->resize(r.size);  // a widget built for the render
    panel->show();
    QCoreApplication::processEvents();
  }
  return panel->grab().toImage();
}

}  // namespace

bool waitUntil(const std::function<bool()>& idle, QDeadlineTimer deadline) {
  do {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    if (idle()) {
      QCoreApplication::processEvents();
      if (idle()) return true;
    }
    QThread::msleep(5);
  } while (!deadline.hasExpired());
  return false;
}

QString openNamedLayers(MainWindow& w, int expandDepth, const QStringList& layers) {
  GraphView* graph = w.graphView();
  const LayerTree* tree = graph->layers();
  if (!tree) return {};  // a model without layers is drawn flat whatever was asked
  OpenLayers open = expandDepth >= 0 ? tessera::openToDepth(*tree, expandDepth) : graph->openLayers();
  for (const QString& name : layers) {
    std::vector<int> found;
    if (int l = tree->find(name.toStdString()); l > 0) found.push_back(l);
    for (size_t l = 1; l < tree->layers().size() && found.empty(); ++l)
      if (tree->layer(int(l)).name == name.toStdString())
        for (size_t m = l; m < tree->layers().size(); ++m)  // every layer of that name
          if (tree->layer(int(m)).name == name.toStdString()) found.push_back(int(m));
    if (found.empty()) {
      QStringList top;
      for (int c : tree->root().children) top << QString::fromStdString(tree->layer(c).name);
      return QString("--expand-layer %1: no layer has that path or name (top-level layers: %2)").arg(name, top.join(", "));
    }
    for (int l : found) open = openLayer(*tree, open, l);
  }
  if (open != graph->openLayers()) graph->setOpenLayers(open);
  return {};
}

int renderHeadless(const RenderRequest& r) {
  auto view = std::find_if(renderViews().begin(), renderViews().end(), [&](const RenderView& v) { return v.name == r.view; });
  if (view == renderViews().end())
    return failWith(QString("unknown view '%1' (expected %2)").arg(r.view, renderViewNames().join(", ")));
  if (!view->panel)
    return failWith(QString("the %1 view (%2) is not available in this build yet").arg(r.view, view->description), 2);
  MainWindow w;
  w.sessionFiles()->setPrompts({});  // no autosave recovery questions: render the file as saved
  w.resize(r.size);
  w.show();
  const QDeadlineTimer deadline(r.timeoutMs);
  w.openModel(r.model);
  if (!settle(w, *view, deadline)) return failWith(QString("%1: timed out").arg(r.model));
  if (!w.controller()->input()) return failWith(QString("%1: could not open the model or session").arg(r.model));
  if (!r.overrides.isEmpty()) {
    try {
      w.controller()->changeOverrides(loadOverrides(r.overrides.toStdString()), "overrides from " + r.overrides);
    } catch (const std::exception& e) {
      return failWith(QString::fromStdString(e.what()));
    }
    if (!settle(w, *view, deadline)) return failWith("timed out recompiling with the overrides");
  }
  if (r.step >= w.controller()->stepCount()) return failWith(QString("step %1 out of range (0..%2)").arg(r.step).arg(w.controller()->stepCount() - 1));
  if (r.step >= 0) w.controller()->setCurrentStep(r.step);
  if (const QString why = chooseBackend(w, r.backend); !why.isEmpty()) return failWith(why);
  const bool session = r.model.endsWith(".tessera", Qt::CaseInsensitive);
  const QString select = !r.select.isEmpty() ? r.select : session ? QString() : firstHeavyNode(*w.controller());
  if (!select.isEmpty() && r.view != "graph") w.controller()->select({Selection::Node, select, {}, {}});
  if (r.view == "graph" || r.view == "window" || r.view == "pipeline") {
    if (!settle(w, *view, deadline)) return failWith("timed out laying out the graph");
    if (const QString why = openNamedLayers(w, r.expandDepth, r.expandLayers); !why.isEmpty()) return failWith(why);
    if (!settle(w, *view, deadline)) return failWith("timed out laying out the graph");
    if (!r.select.isEmpty() && !w.graphView()->selectNode(r.select, true))
      return failWith(QString("--select %1: no node has that id at this step").arg(r.select));
  }
  QWidget* panel = view->panel(w);
  if (!panel) return failWith(QString("%1: the %2 view needs %3").arg(r.model, r.view, "a session with two branches"));
  if (!settle(w, *view, deadline)) return failWith("timed out laying out the graph");
  QCoreApplication::processEvents();
  QImage image = grabPanel(w, panel, r);
  if (r.exactSize && !image.isNull()) image = onCanvas(image, r.size);
  if (image.isNull() || !image.save(r.output)) return failWith(QString("%1: could not write the image").arg(r.output));
  std::printf("wrote %s (%dx%d); layout %.1f ms, scene %.1f ms\n", qPrintable(r.output), image.width(), image.height(),
              w.graphView()->currentLayout() ? w.graphView()->currentLayout()->layoutMs : 0.0, w.graphView()->lastSceneMs());
  return 0;
}

}  // namespace tessera::ui
