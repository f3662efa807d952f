#include "frontend/text/tsr_syntax.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace tessera::tsr {

namespace {
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

constexpr char kBase64Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Value of each byte as a base64 digit, -1 for bytes outside the alphabet.
constexpr std::array<int8_t, 256> kBase64Digits = [] {
  std::array<int8_t, 256> table{};
  table.fill(-1);
  for (int i = 0; i < 64; ++i) table[static_cast<unsigned char>(kBase64Alphabet[i])] = int8_t(i);
  return table;
}();

int base64Digit(char c) { return kBase64Digits[static_cast<unsigned char>(c)]; }

template <class F>
std::string formatShortest(F v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, result.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// f32 from text: correctly rounded; values below the f32 range read as (signed) zero or subnormals through
// f64, values above it are an error.
std::optional<float> parseFloat32(std::string_view text) {
  if (!isNumberText(text)) return std::nullopt;
  float f = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), f);
  if (r.ec == std::errc() && r.ptr == text.data() + text.size()) return f;
  std::optional<double> d = parseDouble(text);
  if (d && std::fabs(*d) < 1.0) return float(*d);
  return std::nullopt;
}

std::optional<std::string> encodeInt(DType dtype, std::string_view text, std::byte* out) {
  if (looksLikeFloat(text))
    return "expected an integer for " + std::string(dtypeName(dtype)) + ", found " + singleQuoted(text);
  std::optional<int64_t> v = parseInt(text);
  int64_t lo = INT64_MIN, hi = INT64_MAX;
  switch (dtype) {
    case DType::I32: lo = INT32_MIN, hi = INT32_MAX; break;
    case DType::I16: lo = INT16_MIN, hi = INT16_MAX; break;
    case DType::I8: lo = INT8_MIN, hi = INT8_MAX; break;
    case DType::I4: lo = -8, hi = 7; break;
    case DType::U4: lo = 0, hi = 15; break;
    case DType::I2: lo = -2, hi = 1; break;
    case DType::U2: lo = 0, hi = 3; break;
    case DType::U8: lo = 0, hi = UINT8_MAX; break;
    case DType::U16: lo = 0, hi = UINT16_MAX; break;
    case DType::U32: lo = 0, hi = UINT32_MAX; break;
    case DType::U64: lo = 0; break;
    default: break;
  }
  if (!v || *v < lo || *v > hi) return singleQuoted(text) + " is out of range for " + std::string(dtypeName(dtype));
  Tensor one(dtype, {});
  one.setInt(0, *v);
  std::memcpy(out, one.bytes().data(), dtypeSize(dtype));
  return std::nullopt;
}

std::optional<std::string> encodeFloat(DType dtype, std::string_view text, std::byte* out) {
  std::string bad = singleQuoted(text) + " is out of range for " + std::string(dtypeName(dtype));
  if (dtype == DType::F64) {
    std::optional<double> d = parseDouble(text);
    if (!d) return bad;
    std::memcpy(out, &*d, 8);
    return std::nullopt;
  }
  std::optional<float> f = parseFloat32(text);
  if (!f) return bad;
  if (dtype == DType::F32) {
    std::memcpy(out, &*f, 4);
    return std::nullopt;
  }
  if (dtype == DType::F8E8M0) {  // a power of two; the text of each reads back exactly (rounding to nearest)
    uint8_t b = toFloat8E8M0(*f, false, E8M0Rounding::Nearest);
    if (!std::isnan(*f) && (!(*f > 0) || b == 0xFF)) return bad;  // no sign, no zero, nothing past 2^127
    std::memcpy(out, &b, 1);
    return std::nullopt;
  }
  if (dtype == DType::F4E2M1) {  // the code in the low nibble; no infinities or NaN
    if (!(std::fabs(*f) <= 6)) return bad;
    uint8_t b = toFloat4(*f);
    std::memcpy(out, &b, 1);
    return std::nullopt;
  }
  if (isFloat8(dtype)) {  // one byte; beyond the largest finite value is out of range, not saturated
    uint8_t b = toFloat8(*f, dtype, false);
    double back = float8ToDouble(b, dtype);
    if (std::isfinite(*f) && !std::isfinite(back)) return bad;
    std::memcpy(out, &b, 1);
    return std::nullopt;
  }
  uint16_t h = dtype == DType::F16 ? floatToHalf(*f) : floatToBf16(*f);
  float back = dtype == DType::F16 ? halfToFloat(h) : bf16ToFloat(h);
  if (std::isinf(back) && !std::isinf(*f)) return bad;
  std::memcpy(out, &h, 2);
  return std::nullopt;
}
}  // namespace

bool isBareNameStart(char c) { return isAlpha(c) || c == '_'; }
bool isBareNameChar(char c) { return isAlpha(c) || isDigit(c) || c == '_' || c == '.' || c == '-' || c == '/'; }

bool isBareName(std::string_view name) {
  if (name.empty() || !isBareNameStart(name[0])) return false;
  for (char c : name)
    if (!isBareNameChar(c)) return false;
  return true;
}

std::string showChar(char c) {
  auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string(1, c);
  static constexpr char hex[] = "0123456789abcdef";
  return std::string("\\x").append(1, hex[u >> 4]).append(1, hex[u & 15]);
}

std::string formatName(std::string_view name) { return isBareName(name) ? std::string(name) : quoteString(name); }

std::string formatValueRef(std::string_view name) {
  bool bare = !name.empty();
  for (char c : name) bare = bare && isBareNameChar(c);
  return std::string("%").append(bare ? std::string(name) : quoteString(name));
}

std::string singleQuoted(std::string_view s) {
  std::string out;  // appended piece by piece: "'" + std::string trips GCC 12's -Wrestrict
  out.reserve(s.size() + 2);
  return out.append("'").append(s).append("'");
}

std::string quoteString(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.append(1, '\\').append(1, c);
    } else if (c == '\n' || c == '\t' || c == '\r') {
      out.append(1, '\\').append(1, c == '\n' ? 'n' : c == '\t' ? 't' : 'r');
    } else if (u < 0x20 || u == 0x7f) {
      out += showChar(c);
    } else {
      out += c;  // printable ASCII, and UTF-8 as it is
    }
  }
  return out += '"';
}

std::string formatDouble(double v) { return formatShortest(v); }
std::string formatFloat(float v) { return formatShortest(v); }

std::optional<std::string> formatElement(const Tensor& t, int64_t i) {
  DType dtype = t.dtype();
  size_t size = dtypeSize(dtype);
  const std::byte* element = t.bytes().data() + size_t(i) * size;
  std::string text;
  if (dtype == DType::Bool) {
    auto b = static_cast<unsigned char>(*element);
    if (b > 1) return std::nullopt;
    text = b ? "true" : "false";
  } else if (dtype == DType::F64) {
    text = formatDouble(t.getDouble(i));
  } else if (isFloat(dtype)) {
    text = formatFloat(float(t.getDouble(i)));  // f32, f16 and bf16 values are exact floats
  } else {
    text = std::to_string(t.getInt(i));
  }
  std::byte back[8];
  if (encodeElement(dtype, text, back) || std::memcmp(back, element, size) != 0) return std::nullopt;
  return text;
}

std::optional<std::string> encodeElement(DType dtype, std::string_view text, std::byte* out) {
  if (dtype == DType::Bool) {
    if (text != "true" && text != "false" && text != "0" && text != "1")
      return "expected true or false, found '" + std::string(text) + "'";
    *out = std::byte(text == "true" || text == "1");
    return std::nullopt;
  }
  if (!isNumberText(text))
    return "expected a number for " + std::string(dtypeName(dtype)) + ", found " + singleQuoted(text);
  return isFloat(dtype) ? encodeFloat(dtype, text, out) : encodeInt(dtype, text, out);
}

bool isNumberText(std::string_view text) {
  size_t i = 0;
  if (i < text.size() && text[i] == '-') ++i;
  std::string_view rest = text.substr(i);
  if (rest == "inf" || text == "nan") return true;
  auto digits = [&] {
    size_t start = i;
    while (i < text.size() && isDigit(text[i])) ++i;
    return i > start;
  };
  if (!digits()) return false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == text.size();
}

bool looksLikeFloat(std::string_view text) {
  return text.find_first_of(".eE") != std::string_view::npos || text.ends_with("inf") || text == "nan";
}

std::optional<int64_t> parseInt(std::string_view text) {
  if (!isNumberText(text) || looksLikeFloat(text)) return std::nullopt;
  int64_t v = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<double> parseDouble(std::string_view text) {
  if (!isNumberText(text)) return std::nullopt;
  double v = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

std::string base64Encode(std::span<const std::byte> bytes) {
  std::string out((bytes.size() + 2) / 3 * 4, '=');
  char* o = out.data();
  auto digit = [](uint32_t group, int shift) { return kBase64Alphabet[(group >> shift) & 63]; };
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3, o += 4) {
    uint32_t group = uint32_t(bytes[i]) << 16 | uint32_t(bytes[i + 1]) << 8 | uint32_t(bytes[i + 2]);
    o[0] = digit(group, 18), o[1] = digit(group, 12), o[2] = digit(group, 6), o[3] = digit(group, 0);
  }
  if (size_t rest = bytes.size() - i) {  // 1 or 2 bytes left: 2 or 3 digits, then '=' padding
    uint32_t group = uint32_t(bytes[i]) << 16 | (rest == 2 ? uint32_t(bytes[i + 1]) << 8 : 0u);
    o[0] = digit(group, 18), o[1] = digit(group, 12);
    if (rest == 2) o[2] = digit(group, 6);
  }
  return out;
}

std::variant<size_t, std::string> base64DecodedSize(std::string_view text) {
  if (text.size() % 4 != 0)
    return "base64 text has " + std::to_string(text.size()) + " characters, not a multiple of 4";
  size_t padding = 0;
  while (padding < 2 && padding < text.size() && text[text.size() - 1 - padding] == '=') ++padding;
  return text.size() / 4 * 3 - padding;
}

std::optional<std::string> base64Decode(std::string_view text, std::span<std::byte> out) {
  auto badCharacter = [&](size_t from) {
    size_t i = from;
    while (base64Digit(text[i]) >= 0) ++i;
    return "invalid base64 character '" + showChar(text[i]) + "' at offset " + std::to_string(i);
  };
  size_t groups = text.size() / 4, written = 0;
  // Every group but the last has four digits; the last may end in '=' padding.
  for (size_t g = 0; g + 1 < groups; ++g) {
    const char* p = text.data() + 4 * g;
    int a = base64Digit(p[0]), b = base64Digit(p[1]), c = base64Digit(p[2]), d = base64Digit(p[3]);
    if ((a | b | c | d) < 0) return badCharacter(4 * g);
    uint32_t group = uint32_t(a) << 18 | uint32_t(b) << 12 | uint32_t(c) << 6 | uint32_t(d);
    out[written++] = std::byte(group >> 16);
    out[written++] = std::byte(group >> 8);
    out[written++] = std::byte(group);
  }
  if (groups == 0) return std::nullopt;
  const char* p = text.data() + 4 * (groups - 1);
  size_t digits = p[3] != '=' ? 4 : p[2] != '=' ? 3 : 2;
  uint32_t group = 0;
  for (size_t k = 0; k < 4; ++k) {
    int d = k < digits ? base64Digit(p[k]) : 0;
    if (d < 0) return badCharacter(4 * (groups - 1));
    group = group << 6 | uint32_t(d);
  }
  for (size_t k = 0; k + 1 < digits && written < out.size(); ++k) out[written++] = std::byte(group >> (16 - 8 * k));
  return std::nullopt;
}

}  // namespace tessera::tsr
