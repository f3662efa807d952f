#include "passes/decompose_einsum.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "passes/decompose_emitter.h"

namespace tessera {
namespace {

// Labels are characters; an ellipsis is spelled out as one label per dim ('0', '1', ... counted from the right),
// so that every term names each of its dims.
using Labels = std::string;

std::optional<Labels> termLabels(const std::string& term, size_t rank) {
  size_t dots = term.find("...");
  std::string letters = term;
  if (dots != std::string::npos) letters.erase(dots, 3);
  if (letters.size() > rank && dots != std::string::npos) return std::nullopt;
  Labels out;
  for (size_t i = 0; i < term.size(); ++i) {
    if (i == dots) {
      size_t n = rank - letters.size();
      for (size_t k = n; k-- > 0;) out += char('0' + k);
      i += 2;
      continue;
    }
    if (!std::isalpha(static_cast<unsigned char>(term[i]))) return std::nullopt;
    out += term[i];
  }
  if (out.size() != rank) return std::nullopt;
  return out;
}

bool repeats(const Labels& l) {
  for (size_t i = 0; i < l.size(); ++i)
    if (l.find(l[i], i + 1) != std::string::npos) return true;
  return false;
}

struct Plan {
  std::vector<Labels> in;
  Labels out;
  std::map<char, int64_t> extent;
};

// Without "->": the ellipsis dims, then the letters used once in all the terms, a-z before A-Z (as the
// reference orders them).
Labels implicitOutput(const std::vector<Labels>& terms, size_t ellipsis) {
  Labels out;
  for (size_t k = ellipsis; k-- > 0;) out += char('0' + k);
  Labels once;
  for (const Labels& t : terms)
    for (char c : t) {
      size_t uses = 0;
      for (const Labels& u : terms) uses += size_t(std::count(u.begin(), u.end(), c));
      if (uses == 1 && std::isalpha(static_cast<unsigned char>(c))) once += c;
    }
  auto rank = [](char c) { return std::islower(static_cast<unsigned char>(c)) ? c - 'a' : 26 + c - 'A'; };
  std::sort(once.begin(), once.end(), [&](char a, char b) { return rank(a) < rank(b); });
  return out + once;
}

// The equation read into labels, or nullopt for what this decomposition leaves whole.
std::optional<Plan> planOf(const Node& n) {
  std::string eq;
  for (char c : n.attrString("equation", ""))
    if (c != ' ') eq += c;
  size_t arrow = eq.find("->");
  if (n.numInputs() < 1 || n.numInputs() > 2) return std::nullopt;
  Plan p;
  std::string lhs = eq.substr(0, arrow);
  size_t comma = lhs.find(',');
  std::vector<std::string> terms = {lhs.substr(0, comma)};
  if (comma != std::string::npos) terms.push_back(lhs.substr(comma + 1));
  if (terms.size() != n.numInputs()) return std::nullopt;
  size_t ellipsis = 0;
  for (size_t t = 0; t < terms.size(); ++t) {
    const Shape& s = n.input(t)->shape();
    auto l = termLabels(terms[t], s.size());
    if (!l || repeats(*l)) return std::nullopt;
    for (size_t d = 0; d < s.size(); ++d) {
      auto [it, fresh] = p.extent.emplace((*l)[d], s[d]);
      if (!fresh && it->second != s[d]) return std::nullopt;
      if (std::isdigit(static_cast<unsigned char>((*l)[d]))) ellipsis = std::max<size_t>(ellipsis, size_t((*l)[d] - '0') + 1);
    }
    p.in.push_back(*l);
  }
  auto out = arrow == std::string::npos ? std::optional<Labels>(implicitOutput(p.in, ellipsis))
                                         : termLabels(eq.substr(arrow + 2), ellipsis + eq.substr(arrow + 2).size() -
                                                                                (eq.find("...", arrow) == std::string::npos ? 0 : 3));
  if (!out || repeats(*out)) return std::nullopt;
  for (char c : *out)
    if (!p.extent.count(c)) return std::nullopt;
  p.out = *out;
  return p;
}

// x (labelled `from`) with its dims in the order of `to`, a permutation of them.
Value* arrange(decompose::Emitter& e, const std::string& suffix, Value* x, const Labels& from, const Labels& to) {
  if (from == to) return x;
  std::vector<int64_t> perm;
  for (char c : to) perm.push_back(int64_t(from.find(c)));
  return e.transpose(suffix, x, perm);
}

Value* reshapeTo(decompose::Emitter& e, const std::string& suffix, Value* x, const Shape& shape) {
  return x->shape() == shape ? x : e.reshape(suffix, x, shape);
}

int64_t product(const Labels& l, const std::map<char, int64_t>& extent) {
  int64_t p = 1;
  for (char c : l) p *= extent.at(c);
  return p;
}

bool has(const Labels& l, char c) { return l.find(c) != std::string::npos; }

}  // namespace

Value* einsumAsMatMul(Graph& graph, const Node& einsum) {
  auto plan = planOf(einsum);
  if (!plan) return nullptr;
  Plan& p = *plan;
  decompose::Emitter b(graph, einsum);
  // Labels only one operand has and the output lacks are summed out of that operand first.
  std::vector<Value*> x;
  for (size_t t = 0; t < p.in.size(); ++t) {
    Labels kept;
    std::vector<int64_t> summed;
    for (size_t d = 0; d < p.in[t].size(); ++d) {
      char c = p.in[t][d];
      bool elsewhere = has(p.out, c) || (p.in.size() == 2 && has(p.in[1 - t], c));
      if (elsewhere) kept += c;
      else summed.push_back(int64_t(d));
    }
    Value* v = einsum.input(t);
    if (!summed.empty())
      v = b.op("sum" + std::to_string(t), "ReduceSum", {v, b.ints("axes" + std::to_string(t), summed)}, {{"keepdims", 0}});
    p.in[t] = kept;
    x.push_back(v);
  }
  if (x.size() == 1) return arrange(b, "out", x[0], p.in[0], p.out);
  Labels batch, m, n, k;
  for (char c : p.in[0]) (has(p.in[1], c) ? (has(p.out, c) ? batch : k) : m) += c;
  for (char c : p.in[1])
    if (!has(p.in[0], c)) n += c;
  // MatMul takes any batch dims as they are; the row, column and depth groups become one dim each, reshaped only
  // where a group is not one label (an empty one is a dim of 1).
  Shape batchShape;
  for (char c : batch) batchShape.push_back(p.extent.at(c));
  auto matrix = [&](const Labels& rows, const Labels& cols) {
    Shape s = batchShape;
    s.push_back(product(rows, p.extent));
    s.push_back(product(cols, p.extent));
    return s;
  };
  Value* a = arrange(b, "a_order", x[0], p.in[0], batch + m + k);
  if (m.size() != 1 || k.size() != 1) a = reshapeTo(b, "a", a, matrix(m, k));
  Value* w = arrange(b, "b_order", x[1], p.in[1], batch + k + n);
  if (k.size() != 1 || n.size() != 1) w = reshapeTo(b, "b", w, matrix(k, n));
  Value* y = b.op("matmul", "MatMul", {a, w});
  Shape grouped = batchShape;
  for (char c : m + n) grouped.push_back(p.extent.at(c));
  return arrange(b, "out", reshapeTo(b, "ungroup", y, grouped), batch + m + n, p.out);
}

}  // namespace tessera
