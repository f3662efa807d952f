// core/layers on real models (the light ONNX zoo) and generated transformer stacks: scopes from names, the tree,
// repeats, merged edges between collapsed layers, per-layer sums, reveal and the fitting depth.
#include <QtTest>
#include <filesystem>

#include "bench/layers/stack_model.h"
#include "frontend/model_io.h"
#include "layers/collapsed_graph.h"
#include "ops/builder.h"

using namespace tessera;
namespace fs = std::filesystem;

// Skips the test with the path when the external test data (TESSERA_DATA_DIR) is not there.
#define SKIP_WITHOUT_DATA(path)                                                                          \
  if (!std::filesystem::exists(path))                                                                    \
  QSKIP(qPrintable(QString("test data absent: %1 (the TESSERA_DATA_DIR cache variable)").arg(QString::fromStdString(std::string(path)))))

namespace {

std::string lightModel(const std::string& name) {
  return std::string(TESSERA_DATA_DIR) + "/onnx-light/light/light_" + name + ".onnx";
}

ScopePath path(std::initializer_list<const char*> segments) { return ScopePath(segments.begin(), segments.end()); }

// The child of `layer` named `name`, or -1.
int child(const LayerTree& t, int layer, const std::string& name) {
  for (int c : t.layer(layer).children)
    if (t.layer(c).name == name) return c;
  return -1;
}

// Every node in exactly one layer, and each layer's count the sum of its own nodes and its children's.
void checkConsistent(const LayerTree& t, const Graph& g, const std::string& what) {
  QCOMPARE(t.nodeIds().size(), g.numNodes());
  QCOMPARE(size_t(t.root().nodeCount), g.numNodes());
  std::vector<int> seen(t.nodeIds().size(), 0);
  for (const Layer& l : t.layers()) {
    int sum = int(l.nodes.size());
    for (int c : l.children) sum += t.layer(c).nodeCount;
    QVERIFY2(sum == l.nodeCount, (what + ": " + l.path).c_str());
    QVERIFY2(l.parent < 0 || l.nodeCount >= 2, (what + ": single-node layer " + l.path).c_str());
    for (int n : l.nodes) ++seen[size_t(n)];
  }
  QVERIFY2(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; }), what.c_str());
}

// The distinct values crossing between two different items, counted directly from the graph.
size_t crossingValues(const Graph& g, const LayerTree& t, const CollapsedGraph& c) {
  std::set<std::tuple<int, int, const Value*>> crossing;
  std::map<const Value*, int> inputItem;
  for (size_t i = 0; i < g.inputs().size(); ++i) inputItem[g.inputs()[i]] = int(i);
  for (const Node* n : g.nodes())
    for (const Value* v : n->inputs()) {
      if (!v || (!v->producer() && !inputItem.count(v))) continue;
      const int from = v->producer() ? c.itemOfNode[size_t(t.nodeIndex(v->producer()->id()))] : inputItem[v];
      const int to = c.itemOfNode[size_t(t.nodeIndex(n->id()))];
      if (from != to) crossing.insert({from, to, v});
    }
  return crossing.size();
}

// `blocks` layers "b.0", "b.1", ... of two nodes each in a chain: long runs at little cost.
Graph chainOfBlocks(int blocks) {
  GraphBuilder b("chain");
  Value* x = b.input("x", {DType::F32, {4}});
  for (int i = 0; i < blocks; ++i) {
    const std::string p = "/b." + std::to_string(i);
    x = b.op("Neg", {b.op("Relu", {x}, {}, p + "/Relu")}, {}, p + "/Neg");
  }
  b.output(x);
  return b.finish();
}

int ops(const Layer& l, const std::string& op) {
  auto it = l.opCounts.find(op);
  return it == l.opCounts.end() ? 0 : it->second;
}

}  // namespace

class TestLayers : public QObject {
  Q_OBJECT
 private slots:
  // PyTorch node ids: every segment but the op label; ids without '/' name no scope.
  void scopesOfNodeIds() {
    QCOMPARE(scopeOfNodeId("/layer3/layer3.0/conv1/Conv"), path({"layer3", "layer3.0", "conv1"}));
    QCOMPARE(scopeOfNodeId("/h.0/attn/MatMul_1"), path({"h.0", "attn"}));
    QVERIFY(scopeOfNodeId("n5").empty());
    QVERIFY(scopeOfNodeId("/Relu").empty());
  }

  // Weight names: numbers nest (res2 > res2_0), parameter words and trailing numbers are dropped.
  void scopesOfParameters() {
    QCOMPARE(scopeOfParameter("gpu_0/res2_0_branch2a_w_0"), path({"gpu", "gpu_0", "res2", "res2_0", "branch2a"}));
    QCOMPARE(scopeOfParameter("gpu_0/res2_0_branch2a_bn_riv_0"), path({"gpu", "gpu_0", "res2", "res2_0", "branch2a"}));
    QCOMPARE(scopeOfParameter("layer1.0.conv1.weight"), path({"layer1", "layer1.0", "conv1"}));
    QCOMPARE(scopeOfParameter("res_conv1_bn_s_0"), path({"res_conv1"}));
    QCOMPARE(scopeOfParameter("conv1_1_w_0__SHAPE"), path({"conv1", "conv1_1"}));
    QVERIFY(scopeOfParameter("W").empty());
    QVERIFY(scopeOfParameter("bias_0").empty());
  }

  // light ResNet-50 names only its weights: stages res2..res5 hold 3, 4, 6, 3 blocks; the first block of a stage
  // (with its projection shortcut) differs from the others, which repeat (but in res5, whose last block also
  // takes the unnamed pooling and reshape after it).
  void resnet50Stages() {
    SKIP_WITHOUT_DATA(lightModel("resnet50"));
    const Graph g = loadModel(lightModel("resnet50"));
    const LayerTree t = LayerTree::build(g);
    checkConsistent(t, g, "resnet50");
    const std::vector<std::pair<std::string, int>> stages = {{"res2", 3}, {"res3", 4}, {"res4", 6}, {"res5", 3}};
    for (const auto& [name, blocks] : stages) {
      const int stage = child(t, 0, name);
      QVERIFY2(stage > 0, (name + "\n" + t.format(2)).c_str());
      QCOMPARE(int(t.layer(stage).children.size()), blocks);
      const Layer& first = t.layer(t.layer(stage).children[0]);
      const Layer& second = t.layer(t.layer(stage).children[1]);
      QCOMPARE(first.name, name + "_0");
      QCOMPARE(first.repeatCount, 1);
      QCOMPARE(second.repeatCount, name == "res5" ? 1 : blocks - 1);
      if (name != "res5") QCOMPARE(t.layer(t.layer(stage).children.back()).repeatIndex, blocks - 2);
      QVERIFY(first.signature != second.signature);
      QVERIFY2(ops(first, "Conv") == 4 && ops(second, "Conv") == 3, t.format(3).c_str());
    }
    // The stem comes first, the classifier last (ordered by their first computing node, not their weights).
    QCOMPARE(t.layer(t.root().children.front()).name, std::string("conv1"));
    QCOMPARE(t.layer(t.root().children.back()).name, std::string("pred"));
    // Unnamed nodes follow their producers: the residual Sum and the Relu after it belong to the block.
    const int block = t.find("res2/res2_1");
    QVERIFY(block > 0);
    QCOMPARE(ops(t.layer(block), "Sum"), 1);
    QCOMPARE(ops(t.layer(block), "Relu"), 3);
  }

  // A generated 12-block stack: h.0..h.11 repeat with 51 nodes each, and their inside nests as the modules do.
  void transformerStack() {
    const Graph g = bench::StackBuilder(12).build();
    const LayerTree t = LayerTree::build(g);
    checkConsistent(t, g, "stack");
    QCOMPARE(int(g.numNodes()), 12 * bench::StackBuilder::kNodesPerBlock + bench::StackBuilder::kNodesOutside);
    QCOMPARE(int(t.root().children.size()), 14);  // h.0..h.11, ln_f, lm_head
    const int h5 = t.find("h.5");
    QVERIFY(h5 > 0);
    QCOMPARE(t.layer(h5).nodeCount, bench::StackBuilder::kNodesPerBlock);
    QCOMPARE(t.layer(h5).repeatCount, 12);
    QCOMPARE(t.layer(h5).repeatIndex, 5);
    QVERIFY(t.find("h.5/attn/c_attn") > 0);
    QCOMPARE(t.layer(t.find("h.5/mlp/act")).nodeCount, 9);
    QCOMPARE(ops(t.layer(t.find("h.5/attn")), "Softmax"), 1);
    QCOMPARE(t.ancestry(t.find("h.5/attn/c_proj")).size(), size_t(3));
    QCOMPARE(t.findByName("ln_f"), std::vector<int>{t.find("ln_f")});
  }

  // 200 blocks are more than a picture shows: they are grouped by 32 ("h.0 … h.31 ×32", the last "h.192 …
  // h.199 ×8"); every block keeps its path, its repeat count and its place, and its time compares with all 200.
  void longRunsAreGrouped() {
    const Graph g = bench::StackBuilder(200).build();
    const LayerTree t = LayerTree::build(g);
    checkConsistent(t, g, "stack 200");
    std::vector<std::string> top;
    for (int c : t.root().children) top.push_back(layerTitle(t.layer(c)));
    QCOMPARE(top.size(), size_t(9));
    QCOMPARE(top.front(), std::string("h.0 \u2026 h.31 \u00d732"));
    QCOMPARE(top[6], std::string("h.192 \u2026 h.199 \u00d78"));
    QCOMPARE(top[7], std::string("ln_f"));
    const int h100 = t.find("h.100");
    QVERIFY(h100 > 0);
    QCOMPARE(t.layer(t.layer(h100).parent).path, std::string("h.96 \u2026 h.127"));
    QCOMPARE(t.layer(h100).depth, 2);
    QCOMPARE(layerTitle(t.layer(h100)), std::string("h.100 \u00d7200"));
    QCOMPARE(t.layer(h100).repeatIndex, 100);
    QCOMPARE(t.repeatsOf(h100).size(), size_t(200));
    QCOMPARE(t.repeatsOf(h100)[100], h100);
    QVERIFY(t.find("h.100/attn/c_attn") > 0);
    for (size_t l = 1; l < t.layers().size(); ++l) QVERIFY(t.layer(int(l)).parent < int(l));  // parents first
    // Opened as the window opens it: the groups and the layers outside; revealing a node opens its group.
    const int depth = tessera::fittingDepth(t, g.inputs().size(), 80);
    QCOMPARE(depth, 0);
    const CollapsedGraph c = collapseGraph(g, t, openToDepth(t, depth));
    QCOMPARE(c.items.size(), size_t(1 + 9));
    size_t counted = 0;
    for (const MergedEdge& e : c.edges) counted += size_t(e.count);
    QCOMPARE(counted, crossingValues(g, t, c));
    const OpenLayers open = reveal(t, {}, t.nodeIndex("/h.100/attn/Softmax"));
    QCOMPARE(open, (OpenLayers{"h.96 \u2026 h.127", "h.100", "h.100/attn"}));
    QCOMPARE(t.findByName("h.12").size(), size_t(11));  // h.12, h.120..h.129: no group
  }

  // A run of 64 stays as it is; beyond 32 × 32 the groups hold groups.
  // A node a pass made for another (its id extends that node's, as decompose's and canonicalize's do) stands in
  // that node's layer, not its producer's: ResNet's strided convs gained a Slice reading the previous block.
  void aPassMadeNodeStandsInItsNodesLayer() {
    const Graph before = chainOfBlocks(2);
    const LayerTree names = LayerTree::build(before);
    GraphBuilder b("chain");
    Value* x = b.input("x", {DType::F32, {4}});
    x = b.op("Neg", {b.op("Relu", {x}, {}, "/b.0/Relu")}, {}, "/b.0/Neg");
    x = b.op("Abs", {x}, {}, "/b.1/Relu.made");  // made for /b.1/Relu, reading /b.0's output
    x = b.op("Neg", {b.op("Relu", {x}, {}, "/b.1/Relu")}, {}, "/b.1/Neg");
    b.output(x);
    const Graph after = b.finish();
    const LayerTree t = LayerTree::build(after, &names);
    const int made = t.layerOfNode(t.nodeIndex("/b.1/Relu.made"));
    QCOMPARE(t.layer(made).path, t.layer(t.layerOfNode(t.nodeIndex("/b.1/Relu"))).path);
    QCOMPARE(t.layer(made).path, std::string("b.1"));
  }
  void runLengths() {
    const Graph g64 = chainOfBlocks(64);
    QCOMPARE(LayerTree::build(g64).root().children.size(), size_t(64));
    const Graph g = chainOfBlocks(1100);
    const LayerTree t = LayerTree::build(g);
    checkConsistent(t, g, "chain 1100");
    QCOMPARE(t.root().children.size(), size_t(2));
    const Layer& first = t.layer(t.root().children[0]);
    QCOMPARE(layerTitle(first), std::string("b.0 \u2026 b.1023 \u00d71024"));
    QCOMPARE(first.children.size(), size_t(32));
    QCOMPARE(layerTitle(t.layer(t.root().children[1])), std::string("b.1024 \u2026 b.1099 \u00d776"));
    QCOMPARE(t.layer(t.root().children[1]).children.size(), size_t(3));  // 32, 32 and 12
    QCOMPARE(t.layer(t.find("b.1099")).depth, 3);
    QCOMPARE(t.repeatsOf(t.find("b.7")).size(), size_t(1100));
  }

  // Collapsed to the top level: one item per block, one merged edge between neighbours carrying one value of
  // 4×16 f32; every crossing value is in exactly one merged edge.
  void mergedEdges() {
    const Graph g = bench::StackBuilder(12).build();
    const LayerTree t = LayerTree::build(g);
    const CollapsedGraph top = collapseGraph(g, t, openToDepth(t, 0));
    QCOMPARE(top.items.size(), size_t(1 + 14));
    QCOMPARE(top.edges.size(), size_t(14));
    for (const MergedEdge& e : top.edges) {
      QCOMPARE(e.count, 1);
      QCOMPARE(e.bytes, int64_t(4 * 16 * 4));
    }
    size_t counted = 0;
    for (const MergedEdge& e : top.edges) counted += size_t(e.count);
    QCOMPARE(counted, crossingValues(g, t, top));
    // Open h.3: its four children show, the others stay boxes; a residual crosses ln_1/attn to the Add.
    const CollapsedGraph open = collapseGraph(g, t, openLayer(t, openToDepth(t, 0), t.find("h.3")));
    QCOMPARE(open.items.size(), size_t(1 + 13 + 4 + 2));  // 13 boxes, ln_1, attn, ln_2, mlp, two Adds
    QCOMPARE(open.openLayers, (std::vector<int>{0, t.find("h.3")}));
    counted = 0;
    for (const MergedEdge& e : open.edges) counted += size_t(e.count);
    QCOMPARE(counted, crossingValues(g, t, open));
  }

  // Merged edges on ResNet-50's stages carry the values of the skip connections too.
  void resnetMergedEdges() {
    SKIP_WITHOUT_DATA(lightModel("resnet50"));
    const Graph g = loadModel(lightModel("resnet50"));
    const LayerTree t = LayerTree::build(g);
    for (int depth = 0; depth <= t.maxDepth(); ++depth) {
      const CollapsedGraph c = collapseGraph(g, t, openToDepth(t, depth));
      size_t counted = 0;
      for (const MergedEdge& e : c.edges) counted += size_t(e.count);
      QCOMPARE(counted, crossingValues(g, t, c));
    }
    QCOMPARE(collapseGraph(g, t, openToDepth(t, t.maxDepth())).items.size(), g.inputs().size() + g.numNodes());
  }

  // A layer's sum is the sum over the nodes below it.
  void sums() {
    const Graph g = bench::StackBuilder(4).build();
    const LayerTree t = LayerTree::build(g);
    std::vector<double> perNode(t.nodeIds().size());
    for (size_t n = 0; n < perNode.size(); ++n) perNode[n] = double(n % 7) + 0.5;
    const std::vector<double> sums = t.sums(perNode);
    for (size_t l = 0; l < t.layers().size(); ++l) {
      double expected = 0;
      for (int n : t.nodesUnder(int(l))) expected += perNode[size_t(n)];
      QCOMPARE(sums[l], expected);
    }
  }

  // Revealing a node opens exactly its ancestors; closing a layer closes what is below it.
  void revealAndClose() {
    const Graph g = bench::StackBuilder(6).build();
    const LayerTree t = LayerTree::build(g);
    const int softmax = t.nodeIndex("/h.4/attn/Softmax");
    QVERIFY(softmax >= 0);
    const OpenLayers open = reveal(t, {}, softmax);
    QCOMPARE(open, (OpenLayers{"h.4", "h.4/attn"}));
    const CollapsedGraph c = collapseGraph(g, t, open);
    QCOMPARE(int(c.items[size_t(c.itemOfNode[size_t(softmax)])].kind), int(ItemKind::Node));
    QVERIFY(closeLayer(t, open, t.find("h.4")).empty());
    QCOMPARE(commonLayer(t, {softmax, t.nodeIndex("/h.4/attn/MatMul")}), t.find("h.4/attn"));
    QCOMPARE(commonLayer(t, {softmax, t.nodeIndex("/h.4/ln_1/Sub")}), t.find("h.4"));
  }

  // The window opens at the deepest depth whose picture fits the budget.
  void fittingDepth() {
    SKIP_WITHOUT_DATA(lightModel("resnet50"));
    const Graph g = loadModel(lightModel("resnet50"));
    const LayerTree t = LayerTree::build(g);
    const int depth = tessera::fittingDepth(t, g.inputs().size(), 80);
    QVERIFY(collapseGraph(g, t, openToDepth(t, depth)).items.size() <= 80);
    if (depth < t.maxDepth()) QVERIFY(collapseGraph(g, t, openToDepth(t, depth + 1)).items.size() > 80);
    const Graph big = bench::transformerStack(10000);
    QCOMPARE(tessera::fittingDepth(LayerTree::build(big), 1, 80), 0);
  }

  // Every light model builds a consistent tree.
  void lightModels() {
    int checked = 0;
    SKIP_WITHOUT_DATA(std::string(TESSERA_DATA_DIR) + "/onnx-light/light");
    for (const auto& entry : fs::directory_iterator(std::string(TESSERA_DATA_DIR) + "/onnx-light/light")) {
      if (entry.path().extension() != ".onnx") continue;
      const Graph g = loadModel(entry.path().string());
      const LayerTree t = LayerTree::build(g);
      checkConsistent(t, g, entry.path().filename().string());
      ++checked;
    }
    QVERIFY(checked >= 8);
  }
};

QTEST_APPLESS_MAIN(TestLayers)
#include "test_layers.moc"
