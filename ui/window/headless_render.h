#pragma once
// Headless rendering of the window's panels to PNG, for docs and tests (`tessera-cli render`, `tessera --render`;
// without a display use QT_QPA_PLATFORM=offscreen). The panels are the real ones, in a real MainWindow, driven
// as a user would: open the model or session, apply overrides, pick the step and selection, wait, grab.
#include <QDeadlineTimer>
#include <QSize>
#include <QString>
#include <QStringList>
#include <functional>
#include <vector>

class QWidget;

namespace tessera::ui {

class MainWindow;

struct RenderRequest {
  QString model;           // a model (.onnx, .tsr) or a session (.tessera)
  QString view = "graph";  // a name from renderViews()
  int step = -1;           // pipeline row (0 = as imported); -1: the last step (or the session's)
  QString select;          // node id to select (inspector; the graph opens the layers around it and centres it);
                           // empty: the first matmul or conv (not for the graph view)
  int expandDepth = -1;    // graph: open the layers down to this depth; -1: the depth the window opens with
  QStringList expandLayers;  // graph: layers to open too, by path ("h.3/attn") or by name (every "res3_1")
  QString overrides;       // JSON file of overrides to apply before rendering (fusion/overrides.h)
  QString backend = "cpu"; // what the run view runs on (reference, cpu, cuda)
  QString output;          // .png
  QSize size{1600, 1000};
  bool exactSize = false;  // the image is exactly `size` (the panel scaled to fit), not the panel's natural size
  int timeoutMs = 120000;
};

// One view that can be rendered. To add a panel, add one line to the table in renderViews().
struct RenderView {
  QString name;
  QString description;
  // The widget to grab, found in or built for the window (w.controller() is the session). Null: the view is
  // planned but not in this build yet, and rendering it fails with exit code 2.
  std::function<QWidget*(MainWindow&)> panel;
  // Optional: true while the panel still has work in flight (a run), so rendering waits for it.
  std::function<bool(MainWindow&)> busy;
};
const std::vector<RenderView>& renderViews();
QStringList renderViewNames();

// Spins the event loop until `idle()` holds twice in a row (queued results delivered in between), or the
// deadline passes (false).
bool waitUntil(const std::function<bool()>& idle, QDeadlineTimer deadline);

// --expand and --expand-layer on the graph (lessons open layers the same way): the layers down to `expandDepth`
// (-1: as they are) and `layers` by path or name. Returns "" when done, else what is wrong.
QString openNamedLayers(MainWindow& window, int expandDepth, const QStringList& layers);

// Returns 0 on success; otherwise prints one line naming the problem to stderr and returns 1 (2 for a view
// that is not available in this build).
int renderHeadless(const RenderRequest& request);

}  // namespace tessera::ui
