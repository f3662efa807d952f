#include "passes/fingerprint.h"

#include <cstring>

#include "ir/fnv.h"

namespace tessera {
namespace {

struct Hasher {
  Fnv1a fnv;
  void bytes(const void* p, size_t n) { fnv.add(p, n); }
  void u64(uint64_t v) { fnv.addU64(v); }
  void str(const std::string& s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }
  void type(const TensorType& t) {
    u64(uint64_t(t.dtype));
    u64(t.shape.size());
    for (int64_t d : t.shape) u64(uint64_t(d));
  }
};

constexpr size_t kHashedTensorBytes = 1 << 16;  // larger tensors are identified by their storage

void hashTensor(Hasher& h, const Tensor& t) {
  h.type(t.type());
  if (t.byteSize() <= kHashedTensorBytes) {
    h.u64(t.hash());
  } else {
    h.u64(uint64_t(reinterpret_cast<uintptr_t>(t.bytes().data())));
  }
}

}  // namespace

uint64_t attributeHash(const Attribute& attr) {
  Hasher h;
  h.u64(uint64_t(attr.kind()));
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, double>) {
          h.bytes(&v, sizeof v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          h.str(v);
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          for (const auto& s : v) h.str(s);
        } else if constexpr (std::is_same_v<T, Tensor>) {
          hashTensor(h, v);
        } else if constexpr (std::is_same_v<T, std::shared_ptr<const Graph>>) {
          h.u64(graphFingerprint(*v));  // a body's content: nesting is bounded by the importer
        } else {
          h.u64(v.size());
          h.bytes(v.data(), v.size() * sizeof(v[0]));
        }
      },
      attr.storage());
  return h.fnv.value;
}

uint64_t nodeFingerprint(const Node& node) {
  Hasher h;
  h.str(node.op());
  for (const auto& [name, attr] : node.attrs()) {
    h.str(name);
    h.u64(attributeHash(attr));
  }
  h.u64(node.numInputs());
  for (const Value* in : node.inputs()) h.str(in ? in->name() : std::string(1, '\1') + "absent");
  for (const Value* out : node.outputs()) h.type(out->type());
  return h.fnv.value;
}

std::unordered_map<std::string, uint64_t> nodeFingerprints(const Graph& graph) {
  std::unordered_map<std::string, uint64_t> out;
  for (const Node* n : graph.nodes()) out[n->id()] = nodeFingerprint(*n);
  return out;
}

uint64_t graphFingerprint(const Graph& graph) {
  Hasher h;
  for (const Value* in : graph.inputs()) {
    h.str(in->name());
    h.type(in->type());
  }
  for (const Value* v : graph.initializers()) {
    h.str(v->name());
    hashTensor(h, *v->initializer());
  }
  for (const Node* n : graph.nodes()) {
    h.str(n->id());
    h.u64(nodeFingerprint(*n));
    for (const Value* out : n->outputs()) h.str(out->name());
  }
  for (const Value* o : graph.outputs()) h.str(o->name());
  return h.fnv.value;
}

}  // namespace tessera
