#pragma once
// File > Export > Graph: the graph as the view shows it (current step, groups, collapsed boxes) as SVG (vector,
// QSvgGenerator), PNG (as `tessera-cli render` draws it) or DOT (the Graphviz source the layout came from).
// Each returns an empty string on success, else one line naming the file and the problem.
#include <QString>

namespace tessera::ui {

class GraphView;

QString exportGraphSvg(const GraphView& view, const QString& path);
QString exportGraphPng(const GraphView& view, const QString& path);
QString exportGraphDot(const GraphView& view, const QString& path);

}  // namespace tessera::ui
