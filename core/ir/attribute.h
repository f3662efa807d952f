#pragma once
// Typed node attributes (ONNX attribute kinds we support). Kept in a name-sorted map so that printing
// and fingerprints are deterministic. A graph attribute (the body of If, Loop, Scan) is shared and immutable,
// like a tensor's bytes: copies of a node share its subgraph, and a pass that changes a body makes a new one.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/tensor.h"

namespace tessera {

class Graph;

enum class AttrKind : uint8_t { Int, Float, String, Ints, Floats, Strings, Tensor, Graph };
// "int", "float", "string", "ints", "floats", "strings", "tensor", "graph"
std::string_view attrKindName(AttrKind k);

class Attribute {
 public:
  using Storage = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>,
                               std::vector<std::string>, Tensor, std::shared_ptr<const Graph>>;
  Attribute() : v_(int64_t(0)) {}
  Attribute(int64_t v) : v_(v) {}
  Attribute(int v) : v_(int64_t(v)) {}
  Attribute(double v) : v_(v) {}
  Attribute(std::string v) : v_(std::move(v)) {}
  Attribute(const char* v) : v_(std::string(v)) {}
  Attribute(std::vector<int64_t> v) : v_(std::move(v)) {}
  Attribute(std::vector<double> v) : v_(std::move(v)) {}
  Attribute(std::vector<std::string> v) : v_(std::move(v)) {}
  Attribute(Tensor v) : v_(std::move(v)) {}
  Attribute(std::shared_ptr<const Graph> v);  // throws Error when null

  AttrKind kind() const { return AttrKind(v_.index()); }
  const Storage& storage() const { return v_; }

  // Typed access; throws Error naming the expected kind on mismatch.
  int64_t i() const;
  double f() const;  // an Int attribute also reads as float
  const std::string& s() const;
  const std::vector<int64_t>& ints() const;
  const std::vector<double>& floats() const;
  const std::vector<std::string>& strings() const;
  const Tensor& t() const;
  const Graph& g() const;
  const std::shared_ptr<const Graph>& graph() const;

  // Graphs compare by identity: two nodes are equal only when they share the subgraph object.
  bool operator==(const Attribute& o) const;

 private:
  Storage v_;
};

using Attributes = std::map<std::string, Attribute>;

}  // namespace tessera
