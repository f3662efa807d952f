#pragma once
// The overview map in the graph view's corner: the whole picture in small, with the part the view shows framed;
// click or drag in it to move the view there. Shown only while the view does not show everything.
#include <QPixmap>
#include <QWidget>

class QGraphicsView;

namespace tessera::ui {

class OverviewMap : public QWidget {
  Q_OBJECT
 public:
  explicit OverviewMap(QGraphicsView* view);
  // Redraws the small picture from the scene (after a new layout or overlay) and shows or hides the map.
  void refresh();
  // Keeps the map in the view's bottom-right corner and hides it when everything is in view.
  void follow();
  QRectF shownRect() const;  // the part of the scene the view shows, in map coordinates

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;

 private:
  QPointF toScene(QPointF p) const;
  QGraphicsView* view_;
  QPixmap picture_;
  double scale_ = 1;
  QPointF offset_;
};

}  // namespace tessera::ui
