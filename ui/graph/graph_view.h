#pragma once
// The graph panel: a QGraphicsView over the layout of one pipeline step. Layouts run as LayoutRunner jobs;
// showing another step while one is laid out supersedes it. Wheel and Ctrl+= / Ctrl+- zoom, drag pans,
// fit() shows everything; right-click on an edge or a group offers the overrides. A model with layers (core/layers)
// opens collapsed to the depth that fits, at a readable zoom on its inputs; double-click, Enter/+ and
// Backspace/- open and close layers, search and selection open the layers holding what they find, and the
// breadcrumbs above the graph name the layers around the selection.
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
  // Nodes drawn with a halo (a lesson step's linked nodes): kept across layouts until set again; a node hidden
  // in a closed layer or group is not drawn, so neither is its halo.
  void setSpotlight(const QStringList& nodeIds);
  const QStringList& spotlight() const { return spotlight_; }
  QStringList spotlitDrawn() const;  // the spotlit nodes drawn now

  // --- layers (graph_view_layers.cpp) ---
  const LayerTree* layers() const { return layout_ && layout_->layers && layout_->layers->layers().size() > 1 ? layout_->layers.get() : nullptr; }
  const OpenLayers& openLayers() const { return open_; }
  // Opens or closes the layer with this path (closing closes what is inside too) and lays out again.
  void setLayerOpen(const QString& path, bool open);
  // Opens every layer down to `depth` (0: only the top-level layers show, as boxes) and closes the rest.
  void openToDepth(int depth);
  void setOpenLayers(OpenLayers open);
  // Per collapsed or open layer path: the sum of the time overlay over its nodes (a kernel's time is shared
  // evenly among its nodes, so a kernel across two layers counts in both by its share).
  std::map<QString, GroupTiming> layerTimes() const;
  QString breadcrumbs() const;  // "resnet50 › res3 › res3_1", the layers around the selection
  class OverviewMap* overview() const { return overview_; }
  // The next layout shown is fitted to the view (a newly opened model).
  void fitNextLayout() { fitOnNextLayout_ = true; }
  void zoomBy(double factor);
  double lastSceneMs() const { return sceneMs_; }
  // The right-click actions for an item (edge: force / forbid fuse; group or grouped node: split, collapse),
  // owned by `menu`; empty for other items.
  void fillContextMenu(QGraphicsItem* item, QMenu& menu);
  // The whole scene with the legend, at natural size or scaled down to fit `limit` (for headless rendering).
  // When the whole graph would be too small to read, the part around the selection (else the inputs) instead.
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
  void keyPressEvent(QKeyEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void acceptLayout(quint64 job, std::shared_ptr<const GraphLayout> layout);
  void buildScene();
  void onSelectionChanged();
  void applyOverlay();
  void relayout();
  void applyLayerOverlay();
  // Opens the layers around node `id` when it is hidden in a collapsed layer; true when a layout was requested.
  bool revealNode(const QString& id, bool centre);
  bool selectDrawn(const QString& id, bool centre);
  bool moveAlongEdge(bool up);
  QString repeatComparison(const QString& path, const std::map<QString, GroupTiming>& times) const;
  bool searchLayers(const QString& text);
  void showReadable();
  QRectF readableCrop(QSizeF limit, double& scale) const;
  void updateBreadcrumbs();
  QString selectedLayerPath() const;

  QGraphicsScene* scene_;
  LayoutRunner* runner_;
  QLabel* legend_;
  QLabel* crumbs_;
  class OverviewMap* overview_;
  StepPicture step_;
  std::set<QString> collapsed_;
  std::map<QString, GroupTiming> overlay_;
  std::shared_ptr<const GraphLayout> layout_;
  QString lastSearch_;
  QStringList spotlight_;
  int searchCursor_ = -1;
  double sceneMs_ = 0;
  bool fitOnNextLayout_ = true;
  bool syncing_ = false;
  OpenLayers open_;
  bool openChosen_ = false;  // false: the next layout opens at the fitting depth
  QString pendingSelect_;    // selected (and centred when pendingCentre_) once the layout that shows it arrives
  bool pendingCentre_ = false;
};

}  // namespace tessera::ui
