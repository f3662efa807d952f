#include "ui/graph/palette.h"

#include <QObject>

namespace tessera::ui {

QColor hueColor(NodeHue hue) {
  switch (hue) {
    case NodeHue::Pointwise: return QColor(0xc9, 0xdb, 0xee);     // muted blue
    case NodeHue::Reduction: return QColor(0xcf, 0xe6, 0xcc);     // muted green
    case NodeHue::MatmulConv: return QColor(0xf3, 0xd5, 0xb5);    // muted orange
    case NodeHue::DataMovement: return QColor(0xdd, 0xd2, 0xec);  // muted violet
    case NodeHue::InputConstant: return QColor(0xe4, 0xe2, 0xdc); // warm grey
  }
  return Qt::lightGray;
}

QString hueName(NodeHue hue) {
  switch (hue) {
    case NodeHue::Pointwise: return QObject::tr("pointwise");
    case NodeHue::Reduction: return QObject::tr("reduction");
    case NodeHue::MatmulConv: return QObject::tr("matmul / conv");
    case NodeHue::DataMovement: return QObject::tr("data movement");
    case NodeHue::InputConstant: return QObject::tr("input / constant");
  }
  return {};
}

QColor groupTint(GroupKind kind) {
  QColor c;
  switch (kind) {
    case GroupKind::Pointwise: c = QColor(0x4a, 0x7d, 0xb8); break;
    case GroupKind::Reduction: c = QColor(0x4f, 0x9a, 0x4a); break;
    case GroupKind::GemmEpilogue:
    case GroupKind::ConvEpilogue: c = QColor(0xd0, 0x7a, 0x2a); break;
    case GroupKind::DataMovement: c = QColor(0x85, 0x6a, 0xb5); break;
    case GroupKind::Attention: c = QColor(0xb8, 0x4a, 0x7d); break;
    case GroupKind::Opaque: c = QColor(0x80, 0x80, 0x80); break;
  }
  c.setAlpha(38);
  return c;
}

QPen markPen(NodeMark mark, bool selected) {
  QPen pen(QColor(0x55, 0x55, 0x55), 1.0);
  switch (mark) {
    case NodeMark::None: break;
    case NodeMark::Added: pen = QPen(QColor(0x2e, 0x9e, 0x3e), 3.0); break;
    case NodeMark::Rewritten: pen = QPen(QColor(0xe0, 0x9a, 0x10), 3.0, Qt::DashLine); break;
    case NodeMark::Removed: pen = QPen(QColor(0xd0, 0x30, 0x30), 2.0, Qt::DashLine); break;
  }
  if (selected) {
    pen.setColor(QColor(0x1a, 0x5f, 0xd0));
    pen.setWidthF(std::max(pen.widthF(), 2.5));
  }
  return pen;
}

QString legendHtml() {
  QString html = "<table cellspacing=2>";
  for (NodeHue h : {NodeHue::Pointwise, NodeHue::Reduction, NodeHue::MatmulConv, NodeHue::DataMovement,
                    NodeHue::InputConstant})
    html += QString("<tr><td bgcolor='%1' width=14>&nbsp;</td><td>%2</td></tr>").arg(hueColor(h).name(), hueName(h));
  html += "<tr><td style='color:#2e9e3e'><b>▭</b></td><td>added (solid green)</td></tr>"
          "<tr><td style='color:#e09a10'><b>┅</b></td><td>rewritten (dashed amber)</td></tr>"
          "<tr><td style='color:#d03030'><b>┄</b></td><td>removed (red ghost)</td></tr></table>";
  return html;
}

}  // namespace tessera::ui
