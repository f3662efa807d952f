#include "ui/headless_render.h"

#include <QDeadlineTimer>
#include <QDockWidget>
#include <QImage>
#include <QPainter>
#include <QThread>
#include <QCoreApplication>
#include <cstdio>

#include "fusion/overrides.h"
#include "ui/graph_view.h"
#include "ui/inspector_panel.h"
#include "ui/main_window.h"
#include "ui/overrides_panel.h"
#include "ui/pipeline_panel.h"
#include "ui/session_controller.h"

namespace tessera::ui {
namespace {

int failWith(const QString& message) {
  std::fprintf(stderr, "tessera --render: %s\n", qPrintable(message));
  return 1;
}

// Spins the event loop until the window has nothing in flight.
bool settle(MainWindow& w, QDeadlineTimer deadline) {
  do {
    QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    if (w.idle()) {
      QCoreApplication::processEvents();
      if (w.idle()) return true;
    }
    QThread::msleep(5);
  } while (!deadline.hasExpired());
  return false;
}

QString firstHeavyNode(const SessionController& c) {
  auto g = c.graphAt(c.currentStep());
  if (!g) return {};
  for (const Node* n : g->topoOrder())
    if (n->op() == "MatMul" || n->op() == "Gemm" || n->op() == "Conv") return QString::fromStdString(n->id());
  return g->numNodes() ? QString::fromStdString(g->topoOrder().front()->id()) : QString();
}

QWidget* panelFor(MainWindow& w, const QString& view) {
  if (view == "graph") return w.graphView();
  if (view == "inspector") return w.inspector();
  if (view == "overrides") return w.overridesPanel();
  return &w;  // pipeline and window: the whole window, with the pipeline and the IR diff in view
}

}  // namespace

int renderHeadless(const RenderRequest& r) {
  static const QStringList views{"graph", "pipeline", "inspector", "overrides", "window"};
  if (!views.contains(r.view)) return failWith(QString("unknown view '%1' (expected %2)").arg(r.view, views.join(", ")));
  MainWindow w;
  w.resize(r.size);
  w.show();
  const QDeadlineTimer deadline(r.timeoutMs);
  w.openModel(r.model);
  if (!settle(w, deadline)) return failWith(QString("%1: timed out").arg(r.model));
  if (!w.controller()->input()) return failWith(QString("%1: could not open the model").arg(r.model));
  if (!r.overrides.isEmpty()) {
    try {
      w.controller()->changeOverrides(loadOverrides(r.overrides.toStdString()), "overrides from " + r.overrides);
    } catch (const std::exception& e) {
      return failWith(QString::fromStdString(e.what()));
    }
    if (!settle(w, deadline)) return failWith("timed out recompiling with the overrides");
  }
  if (r.step >= w.controller()->stepCount()) return failWith(QString("step %1 out of range (0..%2)").arg(r.step).arg(w.controller()->stepCount() - 1));
  if (r.step >= 0) w.controller()->setCurrentStep(r.step);
  const QString select = r.select.isEmpty() ? firstHeavyNode(*w.controller()) : r.select;
  if (!select.isEmpty() && (r.view == "inspector" || r.view == "window" || r.view == "pipeline"))
    w.controller()->select({Selection::Node, select, {}, {}});
  if (!settle(w, deadline)) return failWith("timed out laying out the graph");
  QCoreApplication::processEvents();
  QWidget* panel = panelFor(w, r.view);
  if (auto* dock = qobject_cast<QDockWidget*>(panel->parentWidget())) {
    // A dock alone: float it at a readable size.
    dock->setFloating(true);
    dock->resize(std::min(r.size.width(), 560), std::min(r.size.height(), 720));
    QCoreApplication::processEvents();
    panel = dock;
  }
  const QImage image = r.view == "graph" ? w.graphView()->renderWhole(r.size) : panel->grab().toImage();
  if (image.isNull() || !image.save(r.output)) return failWith(QString("%1: could not write the image").arg(r.output));
  std::printf("wrote %s (%dx%d); layout %.1f ms, scene %.1f ms\n", qPrintable(r.output), image.width(), image.height(),
              w.graphView()->currentLayout() ? w.graphView()->currentLayout()->layoutMs : 0.0, w.graphView()->lastSceneMs());
  return 0;
}

}  // namespace tessera::ui
