#include "ir/attribute.h"

#include "ir/error.h"

namespace tessera {

std::string_view attrKindName(AttrKind k) {
  static constexpr std::string_view names[] = {"int",     "float",   "string", "ints",
                                               "floats",  "strings", "tensor", "graph"};
  return names[size_t(k)];
}

namespace {
template <class T>
const T& get(const Attribute::Storage& v, AttrKind want) {
  if (auto* p = std::get_if<T>(&v)) return *p;
  fail("attribute is " + std::string(attrKindName(AttrKind(v.index()))) + ", expected " +
       std::string(attrKindName(want)));
}
}  // namespace

int64_t Attribute::i() const { return get<int64_t>(v_, AttrKind::Int); }
double Attribute::f() const {
  if (auto* p = std::get_if<int64_t>(&v_)) return double(*p);
  return get<double>(v_, AttrKind::Float);
}
const std::string& Attribute::s() const { return get<std::string>(v_, AttrKind::String); }
const std::vector<int64_t>& Attribute::ints() const { return get<std::vector<int64_t>>(v_, AttrKind::Ints); }
const std::vector<double>& Attribute::floats() const { return get<std::vector<double>>(v_, AttrKind::Floats); }
const std::vector<std::string>& Attribute::strings() const {
  return get<std::vector<std::string>>(v_, AttrKind::Strings);
}
const Tensor& Attribute::t() const { return get<Tensor>(v_, AttrKind::Tensor); }

Attribute::Attribute(std::shared_ptr<const Graph> v) : v_(std::move(v)) {
  if (!graph()) fail("a graph attribute needs a graph");
}
const std::shared_ptr<const Graph>& Attribute::graph() const {
  return get<std::shared_ptr<const Graph>>(v_, AttrKind::Graph);
}
const Graph& Attribute::g() const { return *graph(); }

bool Attribute::operator==(const Attribute& o) const {
  if (kind() != o.kind()) return false;
  if (kind() == AttrKind::Tensor) return t().identical(o.t());
  if (kind() == AttrKind::Float) return f() == o.f() || (f() != f() && o.f() != o.f());
  return std::visit(
      [&](const auto& a) {
        using T = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<T, Tensor>) return false;
        else return a == std::get<T>(o.v_);
      },
      v_);
}

}  // namespace tessera
