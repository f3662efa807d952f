#include "io/npy.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <regex>

#include "io/atomic_file.h"
#include "ir/error.h"

namespace tessera {
namespace {

static_assert(std::endian::native == std::endian::little, ".npy files are written in the host's byte order");

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

// The dtype a tensor is stored as (itself when NumPy has it).
DType storedAs(DType t) {
  if (t == DType::BF16 || isFloat8(t) || t == DType::F4E2M1) return DType::F32;
  if (t == DType::I4 || t == DType::I2) return DType::I8;
  if (t == DType::U4 || t == DType::U2) return DType::U8;
  return t;
}

const std::pair<DType, const char*> kDescrs[] = {
    {DType::F32, "<f4"}, {DType::F16, "<f2"}, {DType::F64, "<f8"}, {DType::I64, "<i8"}, {DType::I32, "<i4"},
    {DType::I16, "<i2"}, {DType::I8, "|i1"},  {DType::U8, "|u1"},  {DType::Bool, "|b1"}, {DType::U16, "<u2"},
    {DType::U32, "<u4"}, {DType::U64, "<u8"}};

std::string header(const Tensor& t) {
  std::string shape;
  for (int64_t d : t.shape()) shape += std::to_string(d) + ", ";
  if (t.shape().size() > 1) shape.resize(shape.size() - 2);  // (2, 3); a 1-d shape keeps its comma: (5,)
  else if (t.shape().size() == 1) shape.pop_back();
  std::string h = "{'descr': '" + npyDescr(t.dtype()) + "', 'fortran_order': False, 'shape': (" + shape + "), }";
  const size_t total = kMagicSize + 4 + h.size() + 1;  // magic, version, length, dict, newline
  h.append((64 - total % 64) % 64, ' ');
  return h + '\n';
}

// The tensor's elements in the stored dtype's bytes.
Tensor widened(const Tensor& t) {
  const DType to = storedAs(t.dtype());
  if (to == t.dtype()) return t;
  return isFloat(to) ? Tensor::fromDoubles(to, t.shape(), t.toDoubles()) : Tensor::fromInts(to, t.shape(), t.toInts());
}

}  // namespace

std::string npyDescr(DType t) {
  for (const auto& [d, descr] : kDescrs)
    if (d == storedAs(t)) return descr;
  fail("npy: no descr for dtype " + std::string(dtypeName(t)));
}

std::string npyBytes(const Tensor& t) {
  if (t.isContainer()) fail("a " + t.type().toString() + " is not a tensor: a .npy file holds one array");
  if (t.holdsStrings()) fail("a " + t.type().toString() + " holds strings: Tessera writes .npy of numbers only");
  const std::string h = header(t);
  std::string out(kMagic, kMagicSize);
  out += char(1);
  out += char(0);
  out += char(h.size() & 0xff);
  out += char(h.size() >> 8);
  out += h;
  const Tensor w = widened(t);
  out.append(reinterpret_cast<const char*>(w.bytes().data()), w.byteSize());
  return out;
}

void writeNpy(const Tensor& t, const std::string& path) { writeFileAtomically(path, npyBytes(t)); }

Tensor readNpy(const std::string& path) {
  const std::string bytes = readWholeFile(path, Tensor::kMaxTensorBytes + 65536);
  if (bytes.size() < 10 || bytes.compare(0, kMagicSize, kMagic, kMagicSize) != 0) fail(path + ": not a .npy file");
  if (bytes[6] != 1) fail(path + ": .npy version " + std::to_string(int(bytes[6])) + " (only 1.0 is read)");
  const size_t length = uint8_t(bytes[8]) | size_t(uint8_t(bytes[9])) << 8;
  if (10 + length > bytes.size()) fail(path + ": truncated .npy header");
  const std::string h = bytes.substr(10, length);
  std::smatch m;
  static const std::regex form(R"(\{'descr': '([<|][a-z][0-9])', 'fortran_order': False, 'shape': \(([0-9, ]*)\), \})");
  if (!std::regex_search(h, m, form)) fail(path + ": unsupported .npy header " + h);
  const auto descr = std::find_if(std::begin(kDescrs), std::end(kDescrs), [&](auto& d) { return m[1] == d.second; });
  if (descr == std::end(kDescrs)) fail(path + ": unsupported .npy dtype " + m[1].str());
  std::vector<int64_t> dims;
  const std::string shape = m[2];
  for (size_t at = 0; at < shape.size();) {
    size_t end = shape.find(',', at);
    if (end == std::string::npos) end = shape.size();
    if (shape.find_first_of("0123456789", at) < end) dims.push_back(std::stoll(shape.substr(at, end - at)));
    at = end + 1;
  }
  Tensor t(descr->first, dims);
  if (bytes.size() - 10 - length != t.byteSize())
    fail(path + ": .npy data is " + std::to_string(bytes.size() - 10 - length) + " bytes, the header says " +
         std::to_string(t.byteSize()));
  std::memcpy(t.mutableBytes().data(), bytes.data() + 10 + length, t.byteSize());
  return t;
}

}  // namespace tessera
