// placeWithDot: Graphviz `dot` positions for a GraphLayout. Graphviz 2.42 takes char* everywhere and its
// y axis points up; both are handled here so that nothing else sees them.
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <QElapsedTimer>
#include <QObject>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

#include "ui/graph/graph_layout.h"

namespace tessera::ui {
namespace {

constexpr double kNodeWidth = 150, kNodeHeight = 40, kGroupWidth = 190;

char* cs(const char* s) { return const_cast<char*>(s); }

void setAttr(void* object, const char* name, const std::string& value) {
  agsafeset(object, cs(name), const_cast<char*>(value.c_str()), cs(""));
}

// Owns the Graphviz context and graph for one layout.
class DotGraph {
 public:
  DotGraph() : gvc_(gvContext()), g_(agopen(cs("tessera"), Agdirected, nullptr)) {
    // Speed over polish: straight edges drawn by us, bounded network simplex and crossing minimization.
    agattr(g_, AGRAPH, cs("rankdir"), cs("TB"));
    agattr(g_, AGRAPH, cs("splines"), cs("false"));
    agattr(g_, AGRAPH, cs("nodesep"), cs("0.25"));
    agattr(g_, AGRAPH, cs("ranksep"), cs("0.35"));
    agattr(g_, AGRAPH, cs("nslimit"), cs("4"));
    agattr(g_, AGRAPH, cs("nslimit1"), cs("4"));
    agattr(g_, AGRAPH, cs("mclimit"), cs("0.3"));
    agattr(g_, AGRAPH, cs("searchsize"), cs("20"));
    agattr(g_, AGNODE, cs("shape"), cs("box"));
    agattr(g_, AGNODE, cs("fixedsize"), cs("true"));
    agattr(g_, AGNODE, cs("label"), cs(""));
    agattr(g_, AGNODE, cs("width"), cs("2"));
    agattr(g_, AGNODE, cs("height"), cs("0.5"));
  }
  ~DotGraph() {
    if (laidOut_) gvFreeLayout(gvc_, g_);
    agclose(g_);
    gvFreeContext(gvc_);
  }
  DotGraph(const DotGraph&) = delete;
  DotGraph& operator=(const DotGraph&) = delete;

  void build(const GraphLayout& layout) {
    nodes_.reserve(layout.nodes.size());
    for (size_t i = 0; i < layout.nodes.size(); ++i) {
      std::string name = std::to_string(i);  // appended, not `"n" + …`: GCC 12 warns falsely on that sum
      name.insert(0, 1, 'n');
      Agnode_t* n = agnode(g_, name.data(), 1);
      const QSizeF size = layout.nodes[i].size;  // a layer's box: the size of what it holds
      const double w = !size.isEmpty() ? size.width() : layout.nodes[i].isGroup ? kGroupWidth : kNodeWidth;
      setAttr(n, "width", std::to_string(w / 72.0));
      setAttr(n, "height", std::to_string((!size.isEmpty() ? size.height() : kNodeHeight) / 72.0));
      nodes_.push_back(n);
    }
    std::set<std::pair<int, int>> seen;
    for (const LayoutEdge& e : layout.edges)
      if (seen.insert({e.from, e.to}).second) agedge(g_, nodes_[size_t(e.from)], nodes_[size_t(e.to)], nullptr, 1);
    for (const LayoutCluster& c : layout.clusters) {
      if (c.collapsed) continue;
      std::string name = c.id.toStdString();
      name.insert(0, "cluster_");  // the prefix makes dot draw it as a cluster
      Agraph_t* sub = agsubg(g_, name.data(), 1);
      setAttr(sub, "label", c.label.toStdString());  // reserves room for the label we draw
      setAttr(sub, "margin", "10");
      for (int m : c.members) agsubnode(sub, nodes_[size_t(m)], 1);
      clusters_.push_back(sub);
    }
  }

  // The text a reader of the DOT file needs: each node's op, shape and id; each cluster's kind; each edge's value.
  void label(const GraphLayout& layout) {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const LayoutNode& n = layout.nodes[i];
      setAttr(nodes_[i], "label", (n.title + "\n" + n.subtitle).toStdString());
      setAttr(nodes_[i], "id", n.id.toStdString());
    }
    for (const LayoutEdge& e : layout.edges)
      if (Agedge_t* edge = agedge(g_, nodes_[size_t(e.from)], nodes_[size_t(e.to)], nullptr, 0))
        setAttr(edge, "label", e.value.toStdString());
  }

  std::string write() const {
    char* text = nullptr;
    size_t size = 0;
    FILE* out = open_memstream(&text, &size);
    if (!out) return {};
    agwrite(g_, out);
    std::fclose(out);
    std::string result(text, size);
    std::free(text);
    return result;
  }

  bool layout() {
    laidOut_ = gvLayout(gvc_, g_, "dot") == 0;
    return laidOut_;
  }

  void readBack(GraphLayout& layout) const {
    const boxf bb = GD_bb(g_);
    const double top = bb.UR.y;  // Graphviz y points up
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const pointf c = ND_coord(nodes_[i]);
      const double w = ND_width(nodes_[i]) * 72, h = ND_height(nodes_[i]) * 72;
      layout.nodes[i].box = QRectF(c.x - w / 2, top - c.y - h / 2, w, h);
    }
    size_t k = 0;
    for (LayoutCluster& c : layout.clusters) {
      if (c.collapsed) {
        c.box = layout.nodes[size_t(c.members.front())].box.adjusted(-6, -6, 6, 6);
        continue;
      }
      const boxf cb = GD_bb(clusters_[k++]);
      c.box = QRectF(QPointF(cb.LL.x, top - cb.UR.y), QPointF(cb.UR.x, top - cb.LL.y));
    }
    for (LayoutEdge& e : layout.edges) {
      const QRectF& a = layout.nodes[size_t(e.from)].box;
      const QRectF& b = layout.nodes[size_t(e.to)].box;
      e.start = QPointF(a.center().x(), a.bottom());
      e.end = QPointF(b.center().x(), b.top());
    }
    layout.bounds = QRectF(bb.LL.x, 0, bb.UR.x - bb.LL.x, bb.UR.y - bb.LL.y);
  }

 private:
  GVC_t* gvc_;
  Agraph_t* g_;
  std::vector<Agnode_t*> nodes_;
  std::vector<Agraph_t*> clusters_;
  bool laidOut_ = false;
};

// Graphviz is not thread-safe, and every graph view has a layout thread of its own (the compare view shows
// two): one graph at a time in the whole process.
std::mutex& graphvizLock() {
  static std::mutex lock;
  return lock;
}

}  // namespace

std::string dotSource(const GraphLayout& layout) {
  std::lock_guard hold(graphvizLock());
  DotGraph dot;
  dot.build(layout);
  dot.label(layout);
  return dot.write();
}

void placeWithDot(GraphLayout& layout) {
  QElapsedTimer timer;
  timer.start();
  if (layout.nodes.empty()) return;
  std::lock_guard hold(graphvizLock());
  DotGraph dot;
  dot.build(layout);
  if (!dot.layout()) {
    layout.error = QObject::tr("Graphviz dot could not lay out the graph");
    return;
  }
  dot.readBack(layout);
  layout.layoutMs = double(timer.nsecsElapsed()) / 1e6;
}

}  // namespace tessera::ui
