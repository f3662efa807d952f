#pragma once
// The graph panel: a QGraphicsView over the layout of one pipeline step. Layouts run as LayoutRunner jobs;
// showing another step while one is laid out supersedes it. Wheel and Ctrl+= / Ctrl+- zoom, drag pans,
// fit() shows everything; right-click on an edge or a group offers the overrides.
#include <QGraphicsView>
#include <map>
#include <memory>

#include "fusion/overrides.h"
#include "ui/graph/graph_items.h"
#include "ui/graph/layout_runner.h"

class QLabel;
class QMenu;

namespace tessera::ui {

class GraphView : public QGraphicsView {
  Q_OBJECT
 public:
  explicit GraphView(QWidget* parent = nullptr);
  ~GraphView() override;

  // Lays out and shows `step` (off the GUI thread); layoutShown follows.
  void showStep(StepPicture step);
  std::shared_ptr<const GraphLayout> currentLayout() const { return layout_; }
  LayoutRunner* runner() const { return runner_; }
  // Collapsing re-lays out the current step with the group drawn as one box.
  void setGroupCollapsed(const QString& group, bool collapsed);
  bool isCollapsed(const QString& group) const { return collapsed_.count(group) > 0; }

  // Selects the next node whose id or op contains `text` (case-insensitive) and centres it; false if none.
  bool search(const QString& text);
  // Selects and centres a node (or a collapsed group standing for it); false when it is not drawn.
  bool selectNode(const QString& id, bool centre);
  void fit();
  // The next layout shown is fitted to the view (a newly opened model).
  void fitNextLayout() { fitOnNextLayout_ = true; }
  void zoomBy(double factor);
  double lastSceneMs() const { return sceneMs_; }
  // The right-click actions for an item (edge: force / forbid fuse; group or grouped node: split, collapse),
  // owned by `menu`; empty for other items.
  void fillContextMenu(QGraphicsItem* item, QMenu& menu);
  // The whole scene with the legend, at natural size or scaled down to fit `limit` (for headless rendering).
  QImage renderWhole(QSize limit) const;

  // The timing overlay of a run: group id → timing (empty clears it). Kept across layouts until replaced, so
  // stepping or collapsing keeps it; groups not in the map are drawn as usual.
  void setTimeOverlay(std::map<QString, GroupTiming> overlay);
  const std::map<QString, GroupTiming>& timeOverlay() const { return overlay_; }
  // Group id → the overlay text drawn on it, for every group drawn with an overlay.
  std::map<QString, QString> overlayTexts() const;

 signals:
  void layoutShown(double layoutMs, double sceneMs);
  void nodeClicked(const QString& id);
  void valueClicked(const QString& value, const QString& producer, const QString& consumer);
  void groupClicked(const QString& group);
  void overrideRequested(const tessera::Override& entry, const QString& text);

 protected:
  void wheelEvent(QWheelEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;

 private:
  void acceptLayout(quint64 job, std::shared_ptr<const GraphLayout> layout);
  void buildScene();
  void onSelectionChanged();
  void applyOverlay();

  QGraphicsScene* scene_;
  LayoutRunner* runner_;
  QLabel* legend_;
  StepPicture step_;
  std::set<QString> collapsed_;
  std::map<QString, GroupTiming> overlay_;
  std::shared_ptr<const GraphLayout> layout_;
  QString lastSearch_;
  int searchCursor_ = -1;
  double sceneMs_ = 0;
  bool fitOnNextLayout_ = true;
  bool syncing_ = false;
};

}  // namespace tessera::ui
