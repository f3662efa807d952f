#include "frontend/text/tsr_values.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "frontend/text/tsr_syntax.h"
#include "ir/error.h"
#include "ir/random.h"

namespace tessera::tsr {

namespace {

bool isFloatName(const Token& t) { return t.kind == Tok::Name && (t.text == "inf" || t.text == "nan"); }

int64_t takeInt(TokenStream& ts, std::string_view what) {
  const Token& t = ts.peek();
  if (t.kind != Tok::Number || looksLikeFloat(t.text)) ts.failExpected(what);
  std::optional<int64_t> v = parseInt(t.text);
  if (!v) ts.failAt(t, "integer '" + t.text + "' is out of range");
  ts.take();
  return *v;
}

double takeDouble(TokenStream& ts, std::string_view what) {
  const Token& t = ts.peek();
  if (t.kind != Tok::Number && !isFloatName(t)) ts.failExpected(what);
  std::optional<double> v = parseDouble(t.text);
  if (!v) ts.failAt(t, "number '" + t.text + "' is out of range");
  ts.take();
  return *v;
}

// ---- tensor data ----

// The bytes of one element written as a number or true/false.
void takeElement(TokenStream& ts, DType dtype, std::byte* out) {
  const Token& t = ts.peek();
  if (t.kind != Tok::Number && t.kind != Tok::Name) ts.failExpected("a value");
  if (std::optional<std::string> error = encodeElement(dtype, t.text, out)) ts.failAt(t, *error);
  ts.take();
}

// A string tensor's data: a list of quoted strings.
Tensor parseStringList(TokenStream& ts, const TensorType& type, const std::string& what) {
  Token open = ts.expect(Tok::LBracket, "'[' and quoted strings (a str tensor's data)");
  std::vector<std::string> values;
  if (!ts.accept(Tok::RBracket)) {
    do values.push_back(ts.expect(Tok::String, "a quoted string").text);
    while (ts.accept(Tok::Comma));
    ts.expect(Tok::RBracket, "',' or ']'");
  }
  int64_t count = int64_t(values.size()), n = type.numElements();
  if (count != n)
    ts.failAt(open, what + " has type " + type.toString() + " (" + std::to_string(n) + " elements) but " +
                        std::to_string(count) + (count == 1 ? " string is" : " strings are") + " given");
  return Tensor::strings(type.shape, std::move(values));
}

Tensor parseList(TokenStream& ts, const TensorType& type, const std::string& what) {
  Token open = ts.take();  // '['
  size_t size = dtypeSize(type.dtype);
  std::vector<std::byte> bytes;  // grows with the text, so its size is bounded by the input
  if (!ts.accept(Tok::RBracket)) {
    do {
      bytes.resize(bytes.size() + size);
      takeElement(ts, type.dtype, bytes.data() + bytes.size() - size);
    } while (ts.accept(Tok::Comma));
    ts.expect(Tok::RBracket, "',' or ']'");
  }
  int64_t count = int64_t(bytes.size() / size), n = type.numElements();
  if (count != n)
    ts.failAt(open, what + " has type " + type.toString() + " (" + std::to_string(n) + " elements) but " +
                        std::to_string(count) + (count == 1 ? " value is" : " values are") + " given");
  Tensor t(type.dtype, type.shape);
  if (!bytes.empty()) std::memcpy(t.mutableBytes().data(), bytes.data(), bytes.size());
  return t;
}

// The sub-byte dtypes hold one value a byte: a byte that is no value of the dtype (0x0f for i4, which holds
// -1 as 0xff) would read as something it cannot hold. The index of the first such byte, if any.
std::optional<size_t> firstStrayByte(const Tensor& t) {
  if (!packedBits(t.dtype())) return std::nullopt;
  auto bytes = t.bytes();
  Tensor one(t.dtype(), {});
  for (size_t i = 0; i < bytes.size(); ++i) {
    one.mutableBytes()[0] = bytes[i];
    if (isFloat(t.dtype())) one.setDouble(0, one.getDouble(0));  // f4e2m1: the code of its value
    else one.setInt(0, one.getInt(0));                           // the integer wrapped to its width
    if (one.bytes()[0] != bytes[i]) return i;
  }
  return std::nullopt;
}

Tensor parseBase64(TokenStream& ts, const TensorType& type, const std::string& what) {
  ts.take();  // base64
  Token text = ts.expect(Tok::String, "a quoted base64 string after 'base64'");
  std::variant<size_t, std::string> size = base64DecodedSize(text.text);
  if (auto* error = std::get_if<std::string>(&size)) ts.failAt(text, *error);
  if (int64_t(std::get<size_t>(size)) != type.bytes())
    ts.failAt(text, what + ": base64 data has " + std::to_string(std::get<size_t>(size)) + " bytes but " +
                        type.toString() + " needs " + std::to_string(type.bytes()));
  Tensor t(type.dtype, type.shape);
  if (std::optional<std::string> error = base64Decode(text.text, t.mutableBytes())) ts.failAt(text, *error);
  if (std::optional<size_t> stray = firstStrayByte(t))
    ts.failAt(text, what + ": base64 byte " + std::to_string(*stray) + " (" +
                        std::to_string(unsigned(t.bytes()[*stray])) + ") is no " + std::string(dtypeName(type.dtype)) +
                        " value (one a byte: the code, or the integer in two's complement)");
  return t;
}

Tensor filled(const TensorType& type, const std::byte* element) {
  Tensor t(type.dtype, type.shape);
  size_t size = dtypeSize(type.dtype);
  std::span<std::byte> bytes = t.mutableBytes();
  for (size_t offset = 0; offset < bytes.size(); offset += size) std::memcpy(bytes.data() + offset, element, size);
  return t;
}

// Takes `key =` and returns the token after it (the value, not yet taken), for errors about the value.
Token takeKey(TokenStream& ts, const std::string& key) {
  if (!ts.atName(key)) ts.failExpected("'" + key + "'");
  ts.take();
  ts.expect(Tok::Equals, "'=' after '" + key + "'");
  return ts.peek();
}

Tensor parseRandom(TokenStream& ts, const TensorType& type) {
  ts.expect(Tok::LParen, "'(' after 'random'");
  Token seedToken = takeKey(ts, "seed");
  int64_t seed = takeInt(ts, "an integer seed");
  if (seed < 0) ts.failAt(seedToken, "seed must not be negative");
  ts.expect(Tok::Comma, "','");
  Token scaleToken = takeKey(ts, "scale");
  double scale = takeDouble(ts, "a number for scale");
  // Integer dtypes truncate the draws to int64, so the range must stay inside it.
  double limit = isFloat(type.dtype) ? HUGE_VAL : 1e18;
  if (!(scale >= 0 && scale < limit))
    ts.failAt(scaleToken, "scale must be a finite number >= 0" + std::string(isFloat(type.dtype) ? "" : " and < 1e18"));
  ts.expect(Tok::RParen, "')'");
  return randomUniform(type, uint64_t(seed), -scale, scale);
}

Tensor parseGenerator(TokenStream& ts, const TensorType& type) {
  Token name = ts.take();
  std::byte element[8] = {};
  if (name.text == "zeros") return Tensor(type.dtype, type.shape);
  if (name.text == "ones") {
    encodeElement(type.dtype, "1", element);
    return filled(type, element);
  }
  if (name.text == "fill") {
    ts.expect(Tok::LParen, "'(' after 'fill'");
    takeElement(ts, type.dtype, element);
    ts.expect(Tok::RParen, "')'");
    return filled(type, element);
  }
  return parseRandom(ts, type);
}

// ---- attributes ----

// '[' element (',' element)* ']' as raw tokens; each is a number, a name or a string.
std::vector<Token> takeListTokens(TokenStream& ts) {
  std::vector<Token> items;
  ts.expect(Tok::LBracket, "'['");
  if (ts.accept(Tok::RBracket)) return items;
  do {
    const Token& t = ts.peek();
    if (t.kind != Tok::Number && t.kind != Tok::Name && t.kind != Tok::String) ts.failExpected("a list element");
    items.push_back(ts.take());
  } while (ts.accept(Tok::Comma));
  ts.expect(Tok::RBracket, "',' or ']'");
  return items;
}

Attribute listAttribute(TokenStream& ts, AttrKind kind, const std::vector<Token>& items) {
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  for (const Token& t : items) {
    if (kind == AttrKind::Strings) {
      if (t.kind != Tok::String) ts.failAt(t, "expected a string, found " + describe(t));
      strings.push_back(t.text);
      continue;
    }
    bool number = t.kind == Tok::Number || isFloatName(t);
    if (!number) ts.failAt(t, "expected a number, found " + describe(t));
    if (kind == AttrKind::Ints && looksLikeFloat(t.text)) ts.failAt(t, "expected an integer, found " + describe(t));
    std::optional<int64_t> i = kind == AttrKind::Ints ? parseInt(t.text) : std::nullopt;
    std::optional<double> f = kind == AttrKind::Floats ? parseDouble(t.text) : std::nullopt;
    if (!i && !f) ts.failAt(t, "number '" + t.text + "' is out of range");
    if (i) ints.push_back(*i);
    if (f) floats.push_back(*f);
  }
  if (kind == AttrKind::Ints) return ints;
  if (kind == AttrKind::Floats) return floats;
  return strings;
}

// An untyped list takes its kind from its elements: strings, or floats when any number is a float.
Attribute untypedList(TokenStream& ts) {
  Token open = ts.peek();
  std::vector<Token> items = takeListTokens(ts);
  if (items.empty()) ts.failAt(open, "an empty list needs its type: ints[], floats[] or strings[]");
  AttrKind kind = items[0].kind == Tok::String ? AttrKind::Strings : AttrKind::Ints;
  for (const Token& t : items)
    if (kind == AttrKind::Ints && (isFloatName(t) || (t.kind == Tok::Number && looksLikeFloat(t.text))))
      kind = AttrKind::Floats;
  return listAttribute(ts, kind, items);
}

Attribute tensorAttribute(TokenStream& ts, const std::string& name, int64_t maxTensorBytes) {
  ts.take();  // tensor
  ts.expect(Tok::Less, "'<' after 'tensor'");
  TensorType type = parseTensorType(ts);
  ts.expect(Tok::Greater, "'>' after the tensor type");
  return parseTensorData(ts, type, "attribute '" + name + "'", maxTensorBytes);
}

Attribute parseAttributeValue(TokenStream& ts, const std::string& name, int64_t maxTensorBytes) {
  const Token& t = ts.peek();
  if (t.kind == Tok::Number || isFloatName(t)) {
    if (t.kind == Tok::Number && !looksLikeFloat(t.text)) return takeInt(ts, "an integer");
    return takeDouble(ts, "a number");
  }
  if (t.kind == Tok::String) return ts.take().text;
  if (t.kind == Tok::LBracket) return untypedList(ts);
  if (t.kind == Tok::Name && t.text == "tensor") return tensorAttribute(ts, name, maxTensorBytes);
  for (auto [word, kind] : {std::pair{"ints", AttrKind::Ints}, std::pair{"floats", AttrKind::Floats},
                            std::pair{"strings", AttrKind::Strings}}) {
    if (!ts.atName(word)) continue;
    ts.take();
    if (!ts.at(Tok::LBracket)) ts.failExpected("'[' after '" + std::string(word) + "'");
    return listAttribute(ts, kind, takeListTokens(ts));
  }
  ts.failExpected("an attribute value");
}

}  // namespace

namespace {
// "seq<f32>", "opt<f32>", "opt<seq<f32>>": a sequence or optional (ir/shape.h), whose type is its element dtype.
TensorType parseContainerType(TokenStream& ts) {
  bool optional = ts.atName("opt");
  ts.take();
  ts.expect(Tok::Less, optional ? "'<' after 'opt'" : "'<' after 'seq'");
  bool sequence = !optional || ts.atName("seq");
  if (optional && sequence) {
    ts.take();
    ts.expect(Tok::Less, "'<' after 'seq'");
  }
  Token dtypeToken = ts.peek();
  std::optional<DType> dtype = dtypeToken.kind == Tok::Name ? parseDType(dtypeToken.text) : std::nullopt;
  if (!dtype) ts.failAt(dtypeToken, "expected the element dtype of a sequence or optional");
  ts.take();
  ts.expect(Tok::Greater, "'>' after the element dtype");
  if (optional && sequence) ts.expect(Tok::Greater, "'>' closing 'opt<seq<'");
  ValueKind kind = optional ? (sequence ? ValueKind::OptionalSequence : ValueKind::Optional) : ValueKind::Sequence;
  return TensorType::container(kind, *dtype);
}
}  // namespace

TensorType parseTensorType(TokenStream& ts) {
  if (ts.atName("seq") || ts.atName("opt")) return parseContainerType(ts);
  Token dtypeToken = ts.peek();
  if (dtypeToken.kind != Tok::Name) ts.failExpected("a dtype");
  std::optional<DType> dtype = parseDType(dtypeToken.text);
  if (!dtype) {
    std::string known;
    for (DType t : kAllDTypes) known += (known.empty() ? "" : ", ") + std::string(dtypeName(t));
    known += ", " + std::string(dtypeName(DType::String));
    ts.failAt(dtypeToken, "unknown dtype '" + dtypeToken.text + "' (the dtypes are " + known + ")");
  }
  ts.take();
  ts.expect(Tok::LBracket, "'[' after the dtype");
  Shape shape;
  if (!ts.accept(Tok::RBracket)) {
    do {
      const Token& dim = ts.peek();
      if (dim.kind == Tok::Number && dim.text.starts_with("-") && !looksLikeFloat(dim.text))
        ts.failAt(dim, "dimension " + dim.text + " is negative");
      shape.push_back(takeInt(ts, "a dimension"));
    } while (ts.accept(Tok::Comma));
    ts.expect(Tok::RBracket, "',' or ']'");
  }
  TensorType type{*dtype, shape};
  try {
    numElements(shape);
  } catch (const Error& e) {
    ts.failAt(dtypeToken, e.what());
  }
  return type;
}

Tensor parseTensorData(TokenStream& ts, const TensorType& type, const std::string& what, int64_t maxBytes) {
  const Token& t = ts.peek();
  if (!type.isTensor()) ts.failAt(t, what + ": a " + type.toString() + " has no data syntax; only tensors hold data here");
  if (type.numElements() > maxBytes / int64_t(dtypeSize(type.dtype)))
    ts.failAt(t, what + ": " + type.toString() + " is larger than the limit of " + std::to_string(maxBytes) +
                     " bytes");
  if (type.dtype == DType::String) return parseStringList(ts, type, what);
  if (t.kind == Tok::LBracket) return parseList(ts, type, what);
  if (ts.atName("base64")) return parseBase64(ts, type, what);
  if (ts.atName("zeros") || ts.atName("ones") || ts.atName("fill") || ts.atName("random"))
    return parseGenerator(ts, type);
  if (t.kind == Tok::Less) ts.failAt(t, "elided data '<N elements>' cannot be read back; print the graph in full");
  ts.failExpected("tensor data ('[', base64\"...\", zeros, ones, fill(...) or random(...))");
}

Attributes parseAttributes(TokenStream& ts, int64_t maxTensorBytes) {
  Attributes attrs;
  ts.expect(Tok::LBrace, "'{'");
  if (ts.accept(Tok::RBrace)) return attrs;
  do {
    Token name = ts.expectName("an attribute name");
    if (attrs.count(name.text)) ts.failAt(name, "attribute '" + name.text + "' is given twice");
    ts.expect(Tok::Equals, "'=' after the attribute name");
    attrs[name.text] = parseAttributeValue(ts, name.text, maxTensorBytes);
  } while (ts.accept(Tok::Comma));
  ts.expect(Tok::RBrace, "',' or '}'");
  return attrs;
}

}  // namespace tessera::tsr
