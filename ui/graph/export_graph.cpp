#include "ui/graph/export_graph.h"

#include <QGraphicsItem>
#include <QGraphicsScene>
#include <vector>
#include <QImage>
#include <QPainter>
#include <QSaveFile>
#include <QSvgGenerator>

#include "ui/common/export_file.h"
#include "ui/graph/graph_view.h"

namespace tessera::ui {

QString exportGraphSvg(const GraphView& view, const QString& path) {
  if (!view.scene() || view.scene()->sceneRect().isEmpty()) return QObject::tr("%1: no graph to export").arg(path);
  const QRectF source = view.scene()->sceneRect();
  QSvgGenerator svg;
  svg.setFileName(path);
  svg.setSize(source.size().toSize());
  svg.setViewBox(QRectF(QPointF(0, 0), source.size()));
  svg.setTitle(QObject::tr("Tessera graph"));
  QPainter painter;
  if (!painter.begin(&svg)) return QObject::tr("%1: cannot write").arg(path);
  // Items cache themselves as pixmaps; drawn uncached, text and shapes stay vectors in the SVG.
  std::vector<std::pair<QGraphicsItem*, QGraphicsItem::CacheMode>> cached;
  for (QGraphicsItem* item : view.scene()->items()) {
    cached.push_back({item, item->cacheMode()});
    item->setCacheMode(QGraphicsItem::NoCache);
  }
  view.scene()->render(&painter, QRectF(QPointF(0, 0), source.size()), source);
  painter.end();
  for (auto& [item, mode] : cached) item->setCacheMode(mode);
  return {};
}

QString exportGraphPng(const GraphView& view, const QString& path) {
  const QImage image = view.renderWhole(QSize(8192, 8192));
  if (image.isNull()) return QObject::tr("%1: no graph to export").arg(path);
  return writeFileAtomically(path, [&image](QIODevice& out) { return image.save(&out, "PNG"); });
}

QString exportGraphDot(const GraphView& view, const QString& path) {
  if (!view.currentLayout()) return QObject::tr("%1: no graph to export").arg(path);
  const std::string dot = dotSource(*view.currentLayout());
  return writeFileAtomically(path, [&dot](QIODevice& out) { return out.write(dot.data(), qint64(dot.size())) == qint64(dot.size()); });
}

}  // namespace tessera::ui
