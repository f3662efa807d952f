#include "ir/random.h"

#include <cmath>

namespace tessera {

namespace {
uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
}  // namespace

// Strings: words of 0 to 7 lowercase letters, some of them repeated (so equality and lookups have matches).
Tensor randomStrings(const TensorType& type, uint64_t seed) {
  uint64_t state = seed;
  std::vector<std::string> words(size_t(type.numElements()));
  for (std::string& w : words) {
    uint64_t r = splitmix(state);
    w.assign(size_t(r % 8), ' ');
    for (char& c : w) c = char('a' + (r >>= 3) % 4);
  }
  return Tensor::strings(type.shape, std::move(words));
}

Tensor randomUniform(const TensorType& type, uint64_t seed, double lo, double hi) {
  if (type.dtype == DType::String) return randomStrings(type, seed);
  Tensor t(type.dtype, type.shape);
  uint64_t state = seed;
  int64_t n = t.numElements();
  for (int64_t i = 0; i < n; ++i) {
    double u = double(splitmix(state) >> 11) * 0x1.0p-53;  // [0, 1)
    if (isFloat(type.dtype))
      t.setDouble(i, lo + (hi - lo) * u);
    else if (type.dtype == DType::Bool)
      t.setInt(i, u < 0.5 ? 0 : 1);
    else
      t.setInt(i, int64_t(std::floor(lo + (hi - lo) * u)));
  }
  return t;
}

Tensor randomTensor(const TensorType& type, uint64_t seed) {
  // A container's element shapes are not in its type: nothing to draw them from, so it is empty.
  if (type.kind == ValueKind::Sequence) return Tensor::sequence(type.dtype, {});
  if (type.isOptional()) return Tensor::optional(type, std::nullopt);
  if (isFloat(type.dtype)) return randomUniform(type, seed, -1.0, 1.0);
  return randomUniform(type, seed, 0.0, type.dtype == DType::Bool ? 1.0 : 4.0);
}

std::vector<Tensor> randomInputs(const Graph& graph, uint64_t seed) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < graph.inputs().size(); ++i)
    out.push_back(randomTensor(graph.inputs()[i]->type(), seed * 1000003 + i));
  return out;
}

}  // namespace tessera
