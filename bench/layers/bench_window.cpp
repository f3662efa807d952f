// bench_layers --window: the same models in the real window (offscreen): compile time, then from the compile
// finishing to the first picture shown (layout on the worker, scene on the GUI thread) and to the window idle
// (every panel filled), opening and closing one top-level layer as a user would (to the picture shown), and the
// cost of painting one frame while panning and zooming (the view repainted synchronously; frames a second =
// 1000 / ms).
#include <QApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QScrollBar>
#include <cstdio>

#include "ui/graph/graph_view.h"
#include "ui/session/session_controller.h"
#include "ui/window/main_window.h"

namespace tessera::bench {

namespace {

double msSince(const QElapsedTimer& t) { return double(t.nsecsElapsed()) / 1e6; }

// Spins the event loop until `done` or 600 s.
template <class F>
bool spinUntil(F done) {
  QElapsedTimer t;
  t.start();
  while (!done() && t.elapsed() < 600000) QApplication::processEvents(QEventLoop::AllEvents, 5);
  return done();
}

// Milliseconds to paint one frame, averaged over panning down the picture and zooming out and in.
double frameMs(ui::GraphView* view) {
  QElapsedTimer t;
  t.start();
  int frames = 0;
  for (int i = 0; i < 30; ++i, ++frames) {
    view->verticalScrollBar()->setValue(view->verticalScrollBar()->value() + 40);
    view->viewport()->repaint();
  }
  for (int i = 0; i < 30; ++i, ++frames) {
    view->zoomBy(i < 15 ? 1 / 1.15 : 1.15);
    view->viewport()->repaint();
  }
  return msSince(t) / frames;
}

}  // namespace

void benchWindow(const QString& path) {
  ui::MainWindow w;
  w.resize(1600, 1000);
  w.show();
  ui::GraphView* view = w.graphView();
  QElapsedTimer sinceCompile;
  bool compiled = false;
  int shown = 0;
  QObject::connect(w.controller(), &ui::SessionController::compiled, [&] {
    sinceCompile.start();
    compiled = true;
  });
  double shownMs = -1;  // the first picture on screen, from the compile finishing
  QObject::connect(view, &ui::GraphView::layoutShown, [&](double, double) {
    if (compiled && shownMs < 0) shownMs = msSince(sinceCompile);
    ++shown;
  });
  QElapsedTimer open;
  open.start();
  w.openModel(path);
  if (!spinUntil([&] { return compiled && shown > 0 && w.idle(); })) return (void)std::printf("| %s | timed out |\n", qPrintable(path));
  const double firstMs = msSince(sinceCompile), compileMs = w.controller()->lastCompileMs();
  const auto layout = view->currentLayout();
  double openMs = -1, closeMs = -1;
  if (const LayerTree* tree = view->layers(); tree && !tree->root().children.empty()) {
    const QString layer = QString::fromStdString(tree->layer(tree->root().children[tree->root().children.size() / 2]).path);
    for (bool opening : {true, false}) {
      const int before = shown;
      QElapsedTimer t;
      t.start();
      view->setLayerOpen(layer, opening);
      spinUntil([&] { return shown > before && w.idle(); });
      (opening ? openMs : closeMs) = msSince(t);
    }
  }
  std::printf("| %s | %zu | %.0f | %.0f | %.0f | %zu | %.0f | %.0f | %.1f |\n", qPrintable(QFileInfo(path).fileName()),
              w.controller()->graphAt(w.controller()->currentStep())->numNodes(), compileMs, shownMs, firstMs,
              layout->nodes.size(), openMs, closeMs, frameMs(view));
  std::fflush(stdout);
}

}  // namespace tessera::bench
