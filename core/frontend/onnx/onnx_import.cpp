// ModelProto → Graph. Two passes when needed: upgrades that depend on an input's type (Clip/Pad bounds take
// its dtype, old Softmax needs its rank) ask for it in the first pass; the graph is then rebuilt with the
// types the first pass inferred.
#include "frontend/onnx/onnx_import.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "frontend/onnx/functions.h"
#include "frontend/onnx/onnx_proto.h"
#include "frontend/onnx/upgrade.h"
#include "ir/error.h"
#include "ir/random.h"
#include "ops/infer.h"
#include "ops/registry.h"
#include "ops/specialize.h"

namespace tessera {

namespace {
using namespace onnxio;

constexpr int64_t kMinOpset = 1, kMaxOpset = 27;  // opsets 1-6 are upgraded (upgrade.cpp)

struct ModelInfo {
  int64_t opset = 0;                      // of the default domain
  std::unordered_map<std::string, int64_t> domains;  // every imported domain, for messages
};

bool isDefaultDomain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

ModelInfo readModelInfo(const onnx::ModelProto& m) {
  ModelInfo info;
  for (const auto& o : m.opset_import()) {
    info.domains[o.domain()] = o.version();
    if (isDefaultDomain(o.domain())) info.opset = o.version();
  }
  if (!m.has_graph()) fail("model has no graph");
  if (info.opset == 0) {
    // A model of another domain's ops only (ai.onnx.ml, ai.onnx.preview.training) needs no ai.onnx opset; one
    // that uses an ai.onnx op must import it.
    for (const auto& np : m.graph().node())
      if (isDefaultDomain(np.domain()))
        fail("model imports no opset of the default domain (ai.onnx), but node '" + np.name() + "' uses its op '" +
             np.op_type() + "'");
    if (info.domains.empty()) fail("model imports no opset at all");
    info.opset = kMaxOpset;  // read as the newest; no node of the domain is there to read
  }
  if (info.opset < kMinOpset || info.opset > kMaxOpset)
    fail("opset " + std::to_string(info.opset) + " of the default domain is not supported (Tessera reads " +
         std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) + ")");
  return info;
}

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// Types of input 0 of nodes whose upgrade asked for it, by index of the node in the GraphProto.
using TypeHints = std::unordered_map<int, TensorType>;

// Where a subgraph sits: the outer-scope names it captures (the same list for every subgraph of its node) and
// its nesting depth.
struct BodyScope {
  std::vector<std::string> captures;
  int depth = 1;
};

class GraphImport {
 public:
  GraphImport(const onnx::GraphProto& gp, const ModelInfo& info, const OnnxImportOptions& options,
              const TypeHints& hints, const BodyScope* scope = nullptr)
      : gp_(gp), info_(info), options_(options), hints_(hints), scope_(scope),
        graph_(gp.name().empty() ? (scope ? "body" : "main") : gp.name()) {}

  // Builds the graph and infers its types.
  void run() {
    addInitializers();
    addInputs();
    addNodes();
    wireInputs();
    upgradeNodes();
    addOutputs();
    inferSpecializing(graph_, [this] { return sampleInputs(); });
  }
  // A subgraph: its types follow from the node holding it, which infers it with the types it passes (the
  // declared types of its inputs and outputs are kept until then).
  void runBody() {
    addInitializers();
    addBodyInputs();
    addNodes();
    wireInputs();
    upgradeNodes();
    addOutputs();
  }
  // The inputs data-dependent shapes are specialized on: the given ones, randomInputs(graph, 0) for the rest.
  std::vector<Tensor> sampleInputs() const {
    std::vector<Tensor> inputs = randomInputs(graph_, 0);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Value* in = graph_.inputs()[i];
      auto given = options_.sampleInputs.find(in->name());
      if (given != options_.sampleInputs.end()) inputs[i] = given->second;  // its type is checked where it is used
    }
    return inputs;
  }
  TypeHints neededHints() const {
    TypeHints hints;
    for (int k : needType_)
      if (Value* in = mainNodes_[size_t(k)]->input(0)) hints[k] = in->type();
    return hints;
  }
  Graph take() { return std::move(graph_); }

 private:
  struct PendingInput {
    Node* node;
    size_t slot;
    std::string name;
  };

  // Graph::uniqueNodeId's choice (the base, else base_k with the least free k), found in constant time: nodes
  // are never removed during import, so every suffix below the last one handed out is taken. A model with
  // many unnamed nodes of one op would otherwise cost quadratic time.
  std::string freshNodeId(const std::string& hint) {
    std::string base = hint.empty() ? "node" : hint;
    if (!graph_.findNode(base)) return base;
    int64_t& k = lastSuffix_[base];
    std::string id;
    do id = base + "_" + std::to_string(++k);
    while (graph_.findNode(id));
    return id;
  }

  void define(const std::string& name, Value* v) {
    if (!name.empty()) byName_[name] = v;
  }
  void requireFree(const std::string& name, const std::string& what) {
    if (!name.empty() && byName_.count(name)) fail("value " + quoted(name) + " is defined twice (again as " + what + ")");
  }

  void addInitializers() {
    if (gp_.sparse_initializer_size() > 0) fail("sparse initializers are not supported");
    for (int i = 0; i < gp_.initializer_size(); ++i) {
      const onnx::TensorProto& tp = gp_.initializer(i);
      if (tp.name().empty()) fail("initializer #" + std::to_string(i) + " has no name");
      requireFree(tp.name(), "an initializer");
      std::string what = "initializer " + quoted(tp.name());
      define(tp.name(), graph_.addInitializer(tp.name(), tensorFromProto(tp, what, options_.externalDataDir)));
    }
  }

  TensorType inputType(const onnx::ValueInfoProto& vi, const Tensor* data) {
    std::string what = "graph input " + quoted(vi.name());
    if (std::optional<TensorType> c = containerType(vi.type())) {
      if (data && data->type() != *c)
        fail("input data for " + quoted(vi.name()) + " is " + data->type().toString() + " but the model declares " +
             c->toString());
      return *c;
    }
    if (!vi.type().has_tensor_type())
      fail(what + " is neither a tensor nor a sequence or optional of tensors (a map, or no type)");
    const auto& tt = vi.type().tensor_type();
    TensorType t;
    t.dtype = requireDType(tt.elem_type(), what);
    if (!tt.has_shape()) {
      if (!data) fail(what + " has no shape (unknown rank); Tessera needs static shapes");
      t.shape = data->shape();
    }
    const auto& dims = tt.shape().dim();
    if (data && tt.has_shape() && size_t(dims.size()) != data->shape().size())
      fail("input data for " + quoted(vi.name()) + " is " + data->type().toString() + " but the model declares rank " +
           std::to_string(dims.size()));
    for (int d = 0; d < dims.size() && d <= 64; ++d) {
      const auto& dim = dims[d];
      if (dim.has_dim_value()) t.shape.push_back(dim.dim_value());
      else if (data) t.shape.push_back(data->shape()[size_t(d)]);  // a symbolic dim resolved by the data
      else if (dim.has_dim_param())
        fail(what + ": dim " + std::to_string(d) + " is symbolic (" + quoted(dim.dim_param()) +
             "); Tessera needs static shapes");
      else fail(what + ": dim " + std::to_string(d) + " is unknown; Tessera needs static shapes");
    }
    if (dims.size() > 64) fail(what + ": rank " + std::to_string(dims.size()) + " is too large (at most 64)");
    checkTensorSize(t.shape, t.dtype, what);
    if (data && data->type() != t)
      fail("input data for " + quoted(vi.name()) + " is " + data->type().toString() + " but the model declares " +
           t.toString());
    return t;
  }

  void addInputs() {
    std::unordered_set<std::string> initializerNames;
    for (const auto& tp : gp_.initializer()) initializerNames.insert(tp.name());
    std::unordered_set<std::string> feedsShapes = shapeFeedingNames(gp_, 0);
    for (int i = 0; i < gp_.input_size(); ++i) {
      const onnx::ValueInfoProto& vi = gp_.input(i);
      if (vi.name().empty()) fail("graph input #" + std::to_string(i) + " has no name");
      if (initializerNames.count(vi.name())) continue;  // IR 3: initializers are listed as inputs too
      requireFree(vi.name(), "a graph input");
      auto data = options_.inputData.find(vi.name());
      const Tensor* known = data == options_.inputData.end() ? nullptr : &data->second;
      TensorType type = inputType(vi, known);
      if (known && feedsShapes.count(vi.name())) define(vi.name(), graph_.addInitializer(vi.name(), *known));
      else define(vi.name(), graph_.addInput(vi.name(), type));
    }
  }

  // Formal inputs keep their declared types (placeholders when undeclared), then one capture per outer name.
  void addBodyInputs() {
    std::unordered_set<std::string> initializerNames;
    for (const auto& tp : gp_.initializer()) initializerNames.insert(tp.name());
    for (int i = 0; i < gp_.input_size(); ++i) {
      const onnx::ValueInfoProto& vi = gp_.input(i);
      if (vi.name().empty()) fail("subgraph input #" + std::to_string(i) + " has no name");
      if (initializerNames.count(vi.name())) continue;
      requireFree(vi.name(), "a subgraph input");
      define(vi.name(), graph_.addInput(vi.name(), declaredType(vi).value_or(TensorType{})));
    }
    std::unordered_set<std::string> own;  // a sibling subgraph's capture may be a name this one defines
    for (const auto& n : gp_.node()) own.insert(n.output().begin(), n.output().end());
    for (const std::string& name : scope_->captures) {
      bool local = byName_.count(name) || own.count(name);
      Value* v = graph_.addCapture(graph_.uniqueValueName(local ? "outer_" + name : name), TensorType{});
      if (!local) define(name, v);
    }
  }

  std::string unsupported(const onnx::NodeProto& np, const std::string& id) const {
    std::string domain = np.domain().empty() ? "ai.onnx" : np.domain();
    auto it = info_.domains.find(np.domain());
    int64_t opset = isDefaultDomain(np.domain()) ? info_.opset : it == info_.domains.end() ? 0 : it->second;
    return "node " + quoted(id) + " uses unsupported op " + quoted(np.op_type()) + " (domain " + quoted(domain) +
           ", opset " + std::to_string(opset) + ")";
  }

  // An op Tessera does not know still imports, as an opaque node (ops/registry.h): its outputs take the types
  // the model declares for them (value_info, graph outputs), since nothing here can infer them.
  void typeOpaqueNode(Node* n, const onnx::NodeProto& np, const std::vector<std::string>& outs) {
    if (declared_.empty()) {
      for (const auto& vi : gp_.value_info())
        if (auto t = declaredType(vi)) declared_[vi.name()] = *t;
      for (const auto& vi : gp_.output())
        if (auto t = declaredType(vi)) declared_[vi.name()] = *t;
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      if (outs[i].empty()) continue;  // an omitted output: nothing reads it
      auto it = declared_.find(outs[i]);
      if (it == declared_.end())
        fail(unsupported(np, n->id()) + " and the model declares no static type for its output " + quoted(outs[i]) +
             " (value_info): Tessera infers types only for the ops it knows");
      n->output(i)->setType(it->second);
    }
  }

  Attributes nodeAttributes(const onnx::NodeProto& np, const std::string& id,
                            const std::vector<std::string>& captures) {
    Attributes attrs;
    for (const auto& ap : np.attribute()) {
      std::string what = "node " + quoted(id) + " (" + np.op_type() + "): attribute " + quoted(ap.name());
      if (ap.name().empty()) fail("node " + quoted(id) + " (" + np.op_type() + "): an attribute has no name");
      if (attrs.count(ap.name())) fail(what + " appears twice");
      attrs[ap.name()] = isGraphAttribute(ap) ? Attribute(importBody(ap.g(), captures, what)) : attributeFromProto(ap, what);
    }
    return attrs;
  }

  std::shared_ptr<const Graph> importBody(const onnx::GraphProto& body, const std::vector<std::string>& captures,
                                          const std::string& what) {
    BodyScope scope{captures, depth() + 1};
    TypeHints none;
    GraphImport sub(body, info_, options_, none, &scope);
    try {
      sub.runBody();
    } catch (const Error& e) {
      fail(what + ": " + e.what());
    }
    for (size_t i = 0; i < size_t(body.output_size()); ++i) {  // the declared types stand until inference
      Value* out = sub.graph_.outputs()[i];
      if (auto t = declaredType(body.output(int(i))); t && out->producer()) out->setType(*t);
    }
    return std::make_shared<const Graph>(sub.take());
  }

  int depth() const { return scope_ ? scope_->depth : 0; }

  static std::vector<std::string> trimmedNames(const google::protobuf::RepeatedPtrField<std::string>& names) {
    std::vector<std::string> out(names.begin(), names.end());
    while (!out.empty() && out.back().empty()) out.pop_back();  // omitted trailing optionals
    return out;
  }

  // A node with subgraphs keeps every listed input (omitted ones in place, as many as its body's formal inputs
  // for Loop and Scan) and then takes its captures as further inputs.
  Node* addPlainNode(const onnx::NodeProto& np, const std::string& hint, Attributes attrs,
                     const std::vector<std::string>& outs, const std::vector<std::string>& captures) {
    bool subgraphs = !captures.empty() || std::any_of(attrs.begin(), attrs.end(), [](const auto& a) {
      return a.second.kind() == AttrKind::Graph;
    });
    const std::string op = qualifiedOpName(isDefaultDomain(np.domain()) ? "" : np.domain(), np.op_type());
    // Specialized types are Tessera's own record of a run on sample inputs (ops/specialize.h), never an ONNX
    // attribute: a file cannot hand them in; specialization finds them again on the inputs this model runs on.
    if (isKnownOp(op)) attrs.erase(kSpecializedTypesAttr);
    Node* n = graph_.addNode(op, {}, outs, std::move(attrs), hint);
    if (!isKnownOp(op)) typeOpaqueNode(n, np, outs);
    for (size_t i = 0; i < outs.size(); ++i) define(outs[i], n->output(i));
    std::vector<std::string> ins = subgraphs ? std::vector<std::string>(np.input().begin(), np.input().end())
                                             : trimmedNames(np.input());
    if (const Attribute* body = n->attr("body"); body && body->kind() == AttrKind::Graph) {
      const Graph& g = body->g();
      ins.resize(std::max(ins.size(), g.inputs().size() - g.numCaptures()));
    }
    for (size_t i = 0; i < ins.size(); ++i) pending_.push_back({n, i, ins[i]});
    for (size_t c = 0; c < captures.size(); ++c) pending_.push_back({n, ins.size() + c, captures[c]});
    return n;
  }

  // Old Softmax semantics: Flatten(x, axis) → op(axis=-1) → Reshape(·, Shape(x)); the op keeps the node's id
  // and the Reshape produces the node's output name.
  Node* addCoercedSoftmax(const onnx::NodeProto& np, const std::string& hint, Attributes attrs,
                          const std::vector<std::string>& outs, int64_t axis) {
    if (outs.size() != 1 || outs[0].empty() || np.input_size() < 1 || np.input(0).empty())
      fail("node " + quoted(hint) + " (" + np.op_type() + "): expects one input and one output");
    const std::string& y = outs[0];
    attrs["axis"] = int64_t(-1);
    // Inserted in topological order, so that an export (which writes that order) re-imports identically.
    Node* flat = graph_.addNode("Flatten", {}, {y + "_flat"}, {{"axis", axis}}, hint + "_flatten");
    Node* shape = graph_.addNode("Shape", {}, {y + "_shape"}, {}, hint + "_shape");
    Node* op = graph_.addNode(np.op_type(), {flat->output(0)}, {y + "_2d"}, std::move(attrs), hint);
    pending_.push_back({flat, 0, np.input(0)});
    pending_.push_back({shape, 0, np.input(0)});
    Node* back = graph_.addNode("Reshape", {op->output(0), shape->output(0)}, {y}, {}, hint + "_reshape");
    define(y, back->output(0));
    return op;
  }

  // Scan of opset 8 has a batch axis first on every state, scan input and output (the scan inputs' sequence
  // axis is their second) and an optional sequence_lens. It becomes, for each batch row b, the row taken out of
  // every input (Gather at b), a Scan of the later form over it with the same body, and each output row put
  // back (Unsqueeze, then a Concat over the rows), so the graph holds standard ops only. The batch extent comes
  // from the inputs' types, known for graph inputs and initializers; sequence_lens is refused.
  Node* addBatchedScan(const onnx::NodeProto& np, const std::string& hint, Attributes attrs,
                       const std::vector<std::string>& outs, const std::vector<std::string>& captures) {
    auto refuse = [&](const std::string& why) -> Node* { fail("node " + quoted(hint) + " (Scan, opset 8): " + why); };
    if (np.input_size() > 0 && !np.input(0).empty())
      return refuse("sequence_lens '" + np.input(0) + "' is not supported (every sequence must run its full length)");
    const Attribute* body = attrs.count("body") ? &attrs.at("body") : nullptr;
    if (!body || body->kind() != AttrKind::Graph) return refuse("needs a body graph");
    const size_t formal = body->g().inputs().size() - body->g().numCaptures();
    if (size_t(np.input_size()) != formal + 1)
      return refuse(std::to_string(np.input_size()) + " inputs for a body of " + std::to_string(formal));
    int64_t batch = -1;
    for (int i = 1; i < np.input_size(); ++i) {
      auto it = byName_.find(np.input(i));
      if (it == byName_.end() || it->second->shape().empty() || it->second->type() == TensorType{})
        return refuse("the batch extent of input '" + np.input(i) + "' is not known here (graph inputs and "
                      "initializers give it)");
      if (batch >= 0 && it->second->shape()[0] != batch) return refuse("its inputs disagree on the batch extent");
      batch = it->second->shape()[0];
    }
    if (batch < 1) return refuse("a batch of " + std::to_string(batch) + " rows");
    if (auto d = attrs.find("directions"); d != attrs.end()) {
      attrs["scan_input_directions"] = d->second;
      attrs.erase(d);
    }
    Value* axis0 = graph_.addInitializer(graph_.uniqueValueName(hint + "_axis0"), Tensor::fromInts(DType::I64, {1}, std::vector<int64_t>{0}));
    std::vector<std::vector<Value*>> rows(outs.size());
    Node* first = nullptr;
    for (int64_t b = 0; b < batch; ++b) {
      const std::string row = hint + "_row" + std::to_string(b);
      Value* at = graph_.addInitializer(graph_.uniqueValueName(row + "_index"), Tensor::fromInts(DType::I64, {}, std::vector<int64_t>{b}));
      std::vector<Value*> ins;
      for (int i = 1; i < np.input_size(); ++i) {
        Node* take = graph_.addNode("Gather", {nullptr, at}, {graph_.uniqueValueName(row + "_" + np.input(i))},
                                    {{"axis", int64_t(0)}}, freshNodeId(row + "_take" + std::to_string(i)));
        pending_.push_back({take, 0, np.input(i)});
        ins.push_back(take->output(0));
      }
      std::vector<std::string> rowOuts;
      for (size_t i = 0; i < outs.size(); ++i) rowOuts.push_back(graph_.uniqueValueName(row + "_out" + std::to_string(i)));
      Node* scan = graph_.addNode("Scan", ins, rowOuts, attrs, freshNodeId(b == 0 ? hint : row));
      for (size_t c = 0; c < captures.size(); ++c) pending_.push_back({scan, ins.size() + c, captures[c]});
      if (!first) first = scan;
      for (size_t i = 0; i < outs.size(); ++i) {
        Node* up = graph_.addNode("Unsqueeze", {scan->output(i), axis0}, {graph_.uniqueValueName(rowOuts[i] + "_1")}, {},
                                  freshNodeId(row + "_put" + std::to_string(i)));
        rows[i].push_back(up->output(0));
      }
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      Node* cat = graph_.addNode("Concat", rows[i], {outs[i]}, {{"axis", int64_t(0)}}, freshNodeId(hint + "_rows" + std::to_string(i)));
      define(outs[i], cat->output(0));
    }
    return first;
  }

  void addNodes() {
    for (int k = 0; k < gp_.node_size(); ++k) {
      const onnx::NodeProto& np = gp_.node(k);
      std::string hint = freshNodeId(moduleScopedName(np, np.name().empty() ? lowercase(np.op_type()) : np.name()));
      std::vector<std::string> captures = nodeCaptures(np, depth());
      Attributes attrs = nodeAttributes(np, hint, captures);
      std::vector<std::string> outs = trimmedNames(np.output());
      std::unordered_set<std::string> own;
      for (const std::string& o : outs) {
        requireFree(o, "an output of node " + quoted(hint));
        if (!o.empty() && !own.insert(o).second) fail("node " + quoted(hint) + " names output " + quoted(o) + " twice");
      }
      std::optional<int64_t> flattenAt;
      auto hint0 = hints_.find(k);
      if (isDefaultDomain(np.domain()) && isCoercingSoftmax(np.op_type(), info_.opset) && hint0 != hints_.end())
        flattenAt = coercedSoftmaxAxis(hint, np.op_type(), attrs, hint0->second);
      if (isDefaultDomain(np.domain()) && np.op_type() == "Scan" && info_.opset < 9) {
        // Its nodes are in the later forms already; the first Scan keeps the place of node k (hints_ by k).
        mainNodes_.push_back(addBatchedScan(np, hint, std::move(attrs), outs, captures));
        continue;
      }
      mainNodes_.push_back(flattenAt ? addCoercedSoftmax(np, hint, std::move(attrs), outs, *flattenAt)
                                     : addPlainNode(np, hint, std::move(attrs), outs, captures));
    }
  }

  void wireInputs() {
    for (const PendingInput& p : pending_) {
      Value* v = nullptr;
      if (!p.name.empty()) {
        auto it = byName_.find(p.name);
        if (it == byName_.end())
          fail("node " + quoted(p.node->id()) + " (" + p.node->op() + "): input " + std::to_string(p.slot) + " " +
               quoted(p.name) + " is not defined by any graph input, initializer or node");
        v = it->second;
      }
      graph_.setNodeInput(p.node, p.slot, v);
    }
  }

  void upgradeNodes() {
    for (size_t k = 0; k < mainNodes_.size(); ++k) {
      auto hint = hints_.find(int(k));
      if (!upgradeNode(graph_, mainNodes_[k], info_.opset, hint == hints_.end() ? nullptr : &hint->second)) continue;
      if (scope_)
        fail("node " + quoted(mainNodes_[k]->id()) + " (" + mainNodes_[k]->op() + "): upgrading it from opset " +
             std::to_string(info_.opset) + " needs its input's type, which is not known inside a subgraph");
      needType_.push_back(int(k));
    }
  }

  void addOutputs() {
    for (int i = 0; i < gp_.output_size(); ++i) {
      const std::string& name = gp_.output(i).name();
      auto it = byName_.find(name);
      if (it == byName_.end())
        fail("graph output " + quoted(name) + " is not defined by any graph input, initializer or node");
      graph_.addOutput(it->second);
    }
  }

  const onnx::GraphProto& gp_;
  const ModelInfo& info_;
  const OnnxImportOptions& options_;
  const TypeHints& hints_;
  const BodyScope* scope_;  // null for the model's graph
  Graph graph_;
  std::unordered_map<std::string, Value*> byName_;
  std::vector<PendingInput> pending_;
  std::vector<Node*> mainNodes_;  // the node standing for each NodeProto
  std::vector<int> needType_;
  std::unordered_map<std::string, int64_t> lastSuffix_;
  std::unordered_map<std::string, TensorType> declared_;  // value_info and output types, read when first needed
};

Graph importModel(const onnx::ModelProto& model, const OnnxImportOptions& options) {
  if (model.functions_size() > 0) {  // a copy only for a model with local functions
    onnx::ModelProto inlined = model;
    inlineFunctions(inlined);
    return importModel(inlined, options);
  }
  ModelInfo info = readModelInfo(model);
  TypeHints none;
  GraphImport first(model.graph(), info, options, none);
  first.run();
  TypeHints hints = first.neededHints();
  if (hints.empty()) return first.take();
  GraphImport second(model.graph(), info, options, hints);
  second.run();
  return second.take();
}
}  // namespace

Graph importOnnxBytes(std::string_view bytes, const std::string& sourceName, const OnnxImportOptions& options) {
  onnx::ModelProto model;
  parseBounded(model, bytes, sourceName, "ONNX model");
  try {
    return importModel(model, options);
  } catch (const Error& e) {
    fail(sourceName + ": " + e.what());
  }
}

Graph importOnnxFile(const std::string& path, const OnnxImportOptions& options) {
  OnnxImportOptions o = options;
  if (o.externalDataDir.empty()) {
    const size_t slash = path.rfind('/');
    o.externalDataDir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  }
  return importOnnxBytes(readBoundedFile(path), path, o);
}

}  // namespace tessera
