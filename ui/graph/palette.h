#pragma once
// The visual language of shared/UI.md in one place: five muted node hues, group tints, change outlines.
#include <QColor>
#include <QPen>
#include <QString>

#include "ui/graph/graph_layout.h"

namespace tessera::ui {

QColor hueColor(NodeHue hue);
QString hueName(NodeHue hue);  // for the legend
QColor groupTint(GroupKind kind);
// The outline of a node for a change mark: colour and dash style both differ, so colour is never the only cue.
QPen markPen(NodeMark mark, bool selected);
// The legend as rich text: a swatch and a name per hue, then the change outlines.
QString legendHtml();

}  // namespace tessera::ui
