#include "ir/tensor.h"

#include <cmath>
#include <cstring>

#include "ir/error.h"
#include "ir/fnv.h"
#include "ir/host_memory.h"

namespace tessera {

Tensor::Tensor(DType dtype, Shape shape) : type_{dtype, std::move(shape)} {
  int64_t n = type_.numElements();
  if (dtype == DType::String) {
    *this = strings(type_.shape, std::vector<std::string>(size_t(n)));
    return;
  }
  allocate(true);
}

Tensor Tensor::uninitialized(DType dtype, Shape shape) {
  if (dtype == DType::String) return Tensor(dtype, std::move(shape));
  Tensor t;
  t.type_ = {dtype, std::move(shape)};
  t.allocate(false);
  return t;
}

void Tensor::allocate(bool zeroed) {
  int64_t n = type_.numElements();
  if (n > kMaxTensorBytes / int64_t(dtypeSize(type_.dtype)))
    fail("tensor " + type_.toString() + " is larger than the 16 GiB limit");
  size_ = size_t(n) * dtypeSize(type_.dtype);
  std::shared_ptr<std::byte> bytes = allocateHostBytes(size_, zeroed);
  data_ = bytes.get();
  owner_ = std::move(bytes);
}

Tensor Tensor::fromMapping(TensorType type, std::span<std::byte> bytes, std::shared_ptr<void> owner) {
  if (int64_t(bytes.size()) != type.bytes())
    fail("a mapping of " + std::to_string(bytes.size()) + " bytes cannot hold " + type.toString());
  Tensor t;
  t.type_ = std::move(type);
  t.owner_ = std::move(owner);
  t.data_ = bytes.data();
  t.size_ = bytes.size();
  t.mapped_ = true;
  return t;
}

std::span<const std::byte> Tensor::bytes() const {
  if (!owner_) return {};
  return {data_, size_};
}

std::span<std::byte> Tensor::mutableBytes() {
  if (!owner_) return {};
  return {data_, size_};
}

namespace {
[[noreturn]] void noNumbers(const TensorType& t) { fail("a " + t.toString() + " holds strings, not numbers"); }
}  // namespace

double Tensor::getDouble(int64_t i) const {
  if (holdsStrings()) noNumbers(type_);
  const std::byte* p = data_ + size_t(i) * dtypeSize(dtype());
  switch (dtype()) {
    case DType::F32: { float v; std::memcpy(&v, p, 4); return v; }
    case DType::F64: { double v; std::memcpy(&v, p, 8); return v; }
    case DType::F16: { uint16_t v; std::memcpy(&v, p, 2); return halfToFloat(v); }
    case DType::BF16: { uint16_t v; std::memcpy(&v, p, 2); return bf16ToFloat(v); }
    case DType::U64: { uint64_t v; std::memcpy(&v, p, 8); return double(v); }
    case DType::F8E4M3FN:
    case DType::F8E4M3FNUZ:
    case DType::F8E5M2:
    case DType::F8E5M2FNUZ:
    case DType::F8E8M0: return float8ToDouble(uint8_t(*p), dtype());
    case DType::F4E2M1: return float4ToDouble(uint8_t(*p));
    default: return double(getInt(i));
  }
}

int64_t Tensor::getInt(int64_t i) const {
  if (holdsStrings()) noNumbers(type_);
  const std::byte* p = data_ + size_t(i) * dtypeSize(dtype());
  switch (dtype()) {
    case DType::I64: { int64_t v; std::memcpy(&v, p, 8); return v; }
    case DType::I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DType::I16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case DType::I8:
    case DType::I4:
    case DType::I2: { int8_t v; std::memcpy(&v, p, 1); return v; }
    case DType::U8:
    case DType::U4:
    case DType::U2: { uint8_t v; std::memcpy(&v, p, 1); return v; }
    case DType::U16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case DType::U32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    // u64 comes back as its bit pattern (values above INT64_MAX read negative); setInt stores it back unchanged.
    case DType::U64: { uint64_t v; std::memcpy(&v, p, 8); return int64_t(v); }
    case DType::Bool: { uint8_t v; std::memcpy(&v, p, 1); return v != 0; }
    default: {
      double d = getDouble(i);
      if (!std::isfinite(d)) return 0;
      if (d >= 9.2e18) return INT64_MAX;
      if (d <= -9.2e18) return INT64_MIN;
      return int64_t(d);  // truncation toward zero, as ONNX Cast
    }
  }
}

void Tensor::setDouble(int64_t i, double v) {
  if (holdsStrings()) noNumbers(type_);
  std::byte* p = data_ + size_t(i) * dtypeSize(dtype());
  switch (dtype()) {
    case DType::F32: { float f = float(v); std::memcpy(p, &f, 4); return; }
    case DType::F64: std::memcpy(p, &v, 8); return;
    case DType::F16: { uint16_t h = floatToHalf(float(v)); std::memcpy(p, &h, 2); return; }
    case DType::BF16: { uint16_t h = floatToBf16(float(v)); std::memcpy(p, &h, 2); return; }
    case DType::Bool: { uint8_t b = v != 0; std::memcpy(p, &b, 1); return; }
    case DType::F8E4M3FN:
    case DType::F8E4M3FNUZ:
    case DType::F8E5M2:
    case DType::F8E5M2FNUZ:
    case DType::F8E8M0: *p = std::byte(toFloat8(v, dtype())); return;
    case DType::F4E2M1: *p = std::byte(toFloat4(v)); return;
    case DType::U64:
      if (v >= 9223372036854775808.0) {  // 2^63 and above do not fit int64: convert through uint64
        uint64_t x = v >= 18446744073709551615.0 ? UINT64_MAX : uint64_t(v);
        std::memcpy(p, &x, 8);
        return;
      }
      [[fallthrough]];
    default: {
      int64_t x = 0;
      if (std::isfinite(v)) x = v >= 9.2e18 ? INT64_MAX : v <= -9.2e18 ? INT64_MIN : int64_t(v);
      setInt(i, x);
    }
  }
}

void Tensor::setInt(int64_t i, int64_t v) {
  if (holdsStrings()) noNumbers(type_);
  std::byte* p = data_ + size_t(i) * dtypeSize(dtype());
  switch (dtype()) {
    case DType::I64: std::memcpy(p, &v, 8); return;
    case DType::I32: { auto x = int32_t(v); std::memcpy(p, &x, 4); return; }
    case DType::I16: { auto x = int16_t(v); std::memcpy(p, &x, 2); return; }
    case DType::I8: { auto x = int8_t(v); std::memcpy(p, &x, 1); return; }
    case DType::I4: { auto x = int8_t(((v & 0xF) ^ 0x8) - 0x8); std::memcpy(p, &x, 1); return; }  // wraps
    case DType::U4: { auto x = uint8_t(v & 0xF); std::memcpy(p, &x, 1); return; }
    case DType::I2: { auto x = int8_t(((v & 0x3) ^ 0x2) - 0x2); std::memcpy(p, &x, 1); return; }  // wraps
    case DType::U2: { auto x = uint8_t(v & 0x3); std::memcpy(p, &x, 1); return; }
    case DType::U8: { auto x = uint8_t(v); std::memcpy(p, &x, 1); return; }
    case DType::U16: { auto x = uint16_t(v); std::memcpy(p, &x, 2); return; }
    case DType::U32: { auto x = uint32_t(v); std::memcpy(p, &x, 4); return; }
    case DType::U64: { auto x = uint64_t(v); std::memcpy(p, &x, 8); return; }
    case DType::Bool: { uint8_t x = v != 0; std::memcpy(p, &x, 1); return; }
    default: setDouble(i, double(v));
  }
}

std::vector<double> Tensor::toDoubles() const {
  int64_t n = numElements();
  // Built from the elements directly where it can: a vector of n zeros first is a second pass over memory.
  if (dtype() == DType::F32) return std::vector<double>(data<float>(), data<float>() + n);
  if (dtype() == DType::F64) return std::vector<double>(data<double>(), data<double>() + n);
  std::vector<double> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[size_t(i)] = getDouble(i);
  return out;
}

std::vector<int64_t> Tensor::toInts() const {
  int64_t n = numElements();
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[size_t(i)] = getInt(i);
  return out;
}

Tensor Tensor::fromDoubles(DType dtype, Shape shape, std::span<const double> values) {
  Tensor t = uninitialized(dtype, std::move(shape));
  if (int64_t(values.size()) != t.numElements())
    fail("tensor " + t.type().toString() + " given " + std::to_string(values.size()) + " values");
  if (dtype == DType::F32) {
    float* f = t.mutableData<float>();
    for (size_t i = 0; i < values.size(); ++i) f[i] = float(values[i]);
  } else {
    for (size_t i = 0; i < values.size(); ++i) t.setDouble(int64_t(i), values[i]);
  }
  return t;
}

Tensor Tensor::fromInts(DType dtype, Shape shape, std::span<const int64_t> values) {
  Tensor t = uninitialized(dtype, std::move(shape));
  if (int64_t(values.size()) != t.numElements())
    fail("tensor " + t.type().toString() + " given " + std::to_string(values.size()) + " values");
  for (size_t i = 0; i < values.size(); ++i) t.setInt(int64_t(i), values[i]);
  return t;
}

Tensor Tensor::scalar(DType dtype, double v) {
  Tensor t(dtype, {});
  t.setDouble(0, v);
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  if (isContainer()) fail("cannot reshape a " + type_.toString());
  if (tessera::numElements(shape) != numElements())
    fail("cannot reshape " + type_.toString() + " to " + shapeToString(shape));
  Tensor t = *this;
  t.type_.shape = std::move(shape);
  if (!t.owner_) t.owner_ = std::make_shared<std::vector<std::byte>>();
  return t;
}

Tensor Tensor::sequence(DType element, std::vector<Tensor> elements) {
  for (size_t i = 0; i < elements.size(); ++i)
    if (elements[i].type_.kind != ValueKind::Tensor || elements[i].dtype() != element)
      fail("a sequence of " + std::string(dtypeName(element)) + " cannot hold element " + std::to_string(i) + " of type " +
           elements[i].type_.toString());
  Tensor t;
  t.type_ = TensorType::container(ValueKind::Sequence, element);
  t.elements_ = std::make_shared<const std::vector<Tensor>>(std::move(elements));
  t.owner_ = std::const_pointer_cast<std::vector<Tensor>>(t.elements_);
  return t;
}

Tensor Tensor::optional(TensorType type, std::optional<Tensor> element) {
  if (!type.isOptional()) fail("Tensor::optional: " + type.toString() + " is not an optional type");
  TensorType inner = TensorType::container(type.isSequence() ? ValueKind::Sequence : ValueKind::Tensor, type.dtype);
  if (element && (element->type_.kind != inner.kind || element->dtype() != type.dtype))
    fail("an optional of type " + type.toString() + " cannot hold a value of type " + element->type_.toString());
  Tensor t;
  t.type_ = TensorType::container(type.kind, type.dtype);
  std::vector<Tensor> held;
  if (element) held.push_back(std::move(*element));
  t.elements_ = std::make_shared<const std::vector<Tensor>>(std::move(held));
  t.owner_ = std::const_pointer_cast<std::vector<Tensor>>(t.elements_);
  return t;
}

Tensor Tensor::strings(Shape shape, std::vector<std::string> values) {
  TensorType type{DType::String, std::move(shape)};
  if (int64_t(values.size()) != type.numElements())
    fail("tensor " + type.toString() + " given " + std::to_string(values.size()) + " strings");
  Tensor t;
  t.type_ = std::move(type);
  t.strings_ = std::make_shared<const std::vector<std::string>>(std::move(values));
  t.owner_ = std::const_pointer_cast<std::vector<std::string>>(t.strings_);
  return t;
}

const std::vector<std::string>& Tensor::strings() const {
  static const std::vector<std::string> none;
  return strings_ ? *strings_ : none;
}

const std::vector<Tensor>& Tensor::elements() const {
  static const std::vector<Tensor> none;
  return elements_ ? *elements_ : none;
}

bool Tensor::identical(const Tensor& other) const {
  if (type_ != other.type_) return false;
  if (isContainer()) {
    const auto &a = elements(), &b = other.elements();
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!a[i].identical(b[i])) return false;
    return true;
  }
  if (holdsStrings()) return strings() == other.strings();
  auto a = bytes(), b = other.bytes();
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

uint64_t Tensor::hash() const {
  Fnv1a h;
  uint8_t dtype = uint8_t(type_.dtype);
  h.add(&dtype, 1);
  for (int64_t d : shape()) h.addU64(uint64_t(d));
  h.add(bytes().data(), bytes().size());
  for (const std::string& e : strings()) {
    h.addU64(e.size());
    h.add(e.data(), e.size());
  }
  if (isContainer()) {
    h.addU64(uint64_t(type_.kind) << 32 | elements().size());
    for (const Tensor& e : elements()) h.addU64(e.hash());
  }
  return h.value;
}

}  // namespace tessera
