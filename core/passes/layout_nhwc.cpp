#include "passes/layout_nhwc.h"

#include <unordered_map>
#include <unordered_set>

#include "ops/registry.h"
#include "passes/rewrite.h"

namespace tessera {
namespace {

const std::vector<int64_t> kToNhwc{0, 2, 3, 1};
const std::vector<int64_t> kToNchw{0, 3, 1, 2};

bool layoutSensitive(const Node& n) {
  if (!opTraits(n.op()).hasNhwcForm) return false;
  for (size_t i = 1; i < n.numOutputs(); ++i)  // MaxPool's Indices are NCHW positions: leave such pools alone
    if (!n.output(i)->uses().empty() || n.output(i)->isGraphOutput()) return false;
  return n.input(0)->shape().size() == 4;
}

bool isPointwise(const Node& n) {
  const OpSchema* s = OpRegistry::instance().find(n.op());
  return s && s->category == OpCategory::Pointwise && n.numOutputs() == 1;
}

class NhwcRewriter {
 public:
  NhwcRewriter(Graph& graph, PassContext& ctx) : g_(graph), ctx_(ctx) {}

  void run() {
    findFriendly();
    for (Node* n : g_.topoOrder()) {
      if (layoutSensitive(*n)) wrap(n);
      else if (isPointwise(*n)) movePointwise(n);
    }
    cancelPairs();
  }

 private:
  Value* transpose(Value* x, const std::vector<int64_t>& perm, const std::string& id) {
    Value* t = addInferredNode(g_, "Transpose", {x}, {{"perm", perm}}, id);
    made_.insert(t->producer());
    return t;
  }

  // The op keeps computing NCHW between a to_nchw and a to_nhwc transpose; its neighbours see NHWC.
  void wrap(Node* n) {
    if (!ctx_.tryRewrite()) return;
    Value* x = n->input(0);
    Value* xh = nhwc_.count(x) ? nhwc_[x] : (nhwc_[x] = transpose(x, kToNhwc, n->id() + ".in_nhwc"));
    g_.setNodeInput(n, 0, transpose(xh, kToNchw, n->id() + ".to_nchw"));
    Value* y = n->output(0);
    nhwc_[y] = transpose(y, kToNhwc, n->id() + ".to_nhwc");
    ctx_.count("wrapped-ops");
  }

  // Pointwise nodes whose data ends up, through pointwise nodes only, in the data input of convs and pools.
  // Only those move to NHWC: moving one whose result goes elsewhere (a graph output, a Flatten) would just
  // trade its neighbour's transpose for two. Consumers come first in reverse topological order.
  void findFriendly() {
    std::vector<Node*> order = g_.topoOrder();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Node* n = *it;
      Value* out = n->output(0);
      if (!isPointwise(*n) || out->isGraphOutput() || out->shape().size() != 4 || out->uses().empty()) continue;
      bool all = true;
      for (const Use& u : out->uses())
        all &= (u.index == 0 && layoutSensitive(*u.node)) || friendly_.count(u.node) > 0;
      if (all) friendly_.insert(n);
    }
  }

  // A pointwise op whose non-scalar inputs all exist in NHWC computes in NHWC; a to_nchw transpose serves
  // the consumers that still want NCHW (it dies when they all moved too).
  void movePointwise(Node* n) {
    Value* out = n->output(0);
    if (!friendly_.count(n)) return;
    bool anyNhwc = false;
    for (Value* in : n->inputs()) {
      if (!in) continue;
      if (nhwc_.count(in) && in->shape() == out->shape()) anyNhwc = true;
      else if (in->type().numElements() != 1) return;  // a broadcast operand would need permuting too
    }
    if (!anyNhwc || !ctx_.tryRewrite()) return;
    for (size_t i = 0; i < n->numInputs(); ++i)
      if (Value* in = n->input(i); in && nhwc_.count(in)) g_.setNodeInput(n, i, nhwc_[in]);
    std::vector<Use> uses = out->uses();
    const Shape& s = out->shape();
    out->setType({out->dtype(), {s[0], s[2], s[3], s[1]}});
    Value* back = transpose(out, kToNchw, n->id() + ".to_nchw");
    for (const Use& u : uses) g_.setNodeInput(u.node, size_t(u.index), back);
    nhwc_[back] = out;
    ctx_.count("nhwc-pointwise");
  }

  // to_nchw right after to_nhwc (two wrapped ops with nothing between) is no transpose at all.
  void cancelPairs() {
    for (Node* t : g_.topoOrder()) {
      if (!made_.count(t)) continue;
      Node* inner = t->input(0)->producer();
      if (!inner || !made_.count(inner) || inner->attrInts("perm") == t->attrInts("perm")) continue;
      if (!ctx_.tryRewrite()) break;
      if (!forwardOutput(g_, t, 0, inner->input(0))) continue;
      made_.erase(t);
      ctx_.count("cancelled-pairs");
    }
    std::vector<Node*> order = g_.topoOrder();
    for (auto it = order.rbegin(); it != order.rend(); ++it)
      if (made_.count(*it) && removeIfDead(g_, *it)) made_.erase(*it);
    ctx_.count("transposes-left", int64_t(made_.size()));
  }

  Graph& g_;
  PassContext& ctx_;
  std::unordered_map<Value*, Value*> nhwc_;  // NCHW value → the same data laid out NHWC
  std::unordered_set<Node*> made_;           // transposes this pass added
  std::unordered_set<Node*> friendly_;       // pointwise nodes worth moving to NHWC
};

class LayoutNhwcPass : public Pass {
 public:
  std::string name() const override { return "layout-nhwc"; }
  std::string summary() const override { return "lay activations out NHWC between convolutions and pools"; }
  std::vector<PassStatistic> statistics() const override {
    return {{"wrapped-ops", "Conv and Pool nodes wrapped in layout transposes"},
            {"nhwc-pointwise", "pointwise nodes now computing on NHWC data"},
            {"cancelled-pairs", "back-to-back transposes that undid each other"},
            {"transposes-left", "layout transposes remaining"}};
  }
  void run(Graph& graph, PassContext& ctx) override {
    if (!OpRegistry::instance().find("Transpose")) return;
    NhwcRewriter(graph, ctx).run();
  }
};

}  // namespace

std::unique_ptr<Pass> createLayoutNhwcPass() { return std::make_unique<LayoutNhwcPass>(); }

}  // namespace tessera
