#pragma once
// The graph picture as plain data: what to lay out (LayoutInput, built from one pipeline step) and where
// Graphviz `dot` put it (the same structs with positions filled). Computed on a worker thread; no widgets here.
#include <QPointF>
#include <QRectF>
#include <QString>
#include <memory>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fusion/fusion.h"
#include "ir/graph.h"
#include "layers/collapsed_graph.h"

namespace tessera::ui {

// The five fills of the legend (shared/UI.md): op categories folded into five muted hues.
enum class NodeHue { Pointwise, Reduction, MatmulConv, DataMovement, InputConstant };
// How a node changed in the step shown; drawn with both an outline colour and an outline style.
enum class NodeMark { None, Added, Rewritten, Removed };

struct LayoutNode {
  QString id;        // node id, value name (graph inputs) or group id (a collapsed group)
  QString title;     // first line: the op
  QString subtitle;  // second line: output shape and dtype
  QString tooltip;
  NodeHue hue = NodeHue::Pointwise;
  NodeMark mark = NodeMark::None;
  QString group;            // the fusion group holding it, if any
  bool isInput = false;     // a graph input
  bool isGroup = false;     // a collapsed fusion group standing for its nodes
  QString layer;            // a collapsed layer standing for its nodes: its path ("h.3/attn")
  int owner = -1;           // the open layer drawn around it (index into clusters), -1: none
  QSizeF size;              // the box dot reserves; empty: the usual node size
  QRectF box;               // filled by the layout, y pointing down
};

struct LayoutEdge {
  int from = 0, to = 0;  // indices into nodes
  QString value;         // the tensor it carries
  QString tooltip;       // "%x: f32[1,64,56,56] · 802,816 bytes"
  QString producerId, consumerId;  // node ids (for overrides), even when an end is collapsed
  bool ghost = false;    // touches a removed node
  int count = 1;         // values it stands for (edges between collapsed layers are merged)
  qint64 bytes = 0;      // their total size
  QPointF start, end;    // filled by the layout
};

struct LayoutCluster {
  QString id;     // "k3"; an open layer: "layer:" and its path
  QString label;  // "k3 · gemm+epilogue"; an open layer: its name
  GroupKind kind = GroupKind::Opaque;
  bool collapsed = false;
  QString layer;  // an open layer: its path; empty for a fusion group
  int owner = -1; // the open layer drawn around it (index into clusters), -1: none
  std::vector<int> members;  // indices into nodes
  QRectF box;
};

struct GraphLayout {
  std::vector<LayoutNode> nodes;
  std::vector<LayoutEdge> edges;
  std::vector<LayoutCluster> clusters;
  QRectF bounds;
  double layoutMs = 0;
  QString error;
  std::shared_ptr<const LayerTree> layers;  // the step's layers (null: drawn flat)
  OpenLayers open;                          // the layers drawn open
};

// One pipeline step as the graph view sees it.
struct StepPicture {
  std::shared_ptr<const Graph> graph;     // the IR after the step
  std::shared_ptr<const Graph> previous;  // the IR before it (for removed ghosts); may be null
  std::vector<std::string> added, removed, rewritten;
  std::shared_ptr<const FusionResult> fusion;  // groups to draw; null before fusion
  std::set<QString> collapsed;                 // group ids drawn as one box
  std::map<std::string, std::string> groupNotes;  // group id → what its label adds ("split: A's k1", compare view)
  // Layers (core/layers): drawn when the graph's names give it any; `open` says which are drawn open, and
  // without `openSet` the picture opens at the depth that fits (fittingDepth). `layers` may be given when known.
  std::shared_ptr<const LayerTree> layers;
  OpenLayers open;
  bool openSet = false;
  std::shared_ptr<const Graph> names;  // the model as imported, whose names give every step its layers
};

NodeHue hueOf(const std::string& op);
// One node's or graph input's box as drawn flat, and a value's tooltip ("%x: f32[1,64] · 256 bytes").
LayoutNode describeNode(const Node& node, NodeMark mark);
LayoutNode describeInput(const Value& value);
QString valueTooltip(const Value& value);
// The nodes, edges and clusters to draw, without positions.
GraphLayout describeStep(const StepPicture& step);
// Runs `dot` on the description and fills the positions (at 72 points per inch, y down). Graphviz is not
// thread-safe: it and dotSource hold one process-wide lock (several views lay out at once).
void placeWithDot(GraphLayout& layout);
// The Graphviz source placeWithDot lays out, with each node's op, shape and id as labels (File > Export > DOT).
std::string dotSource(const GraphLayout& layout);

}  // namespace tessera::ui
