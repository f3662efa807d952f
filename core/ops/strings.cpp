// String ops: StringConcat, StringSplit, StringNormalizer, RegexFullMatch (ai.onnx.ml's LabelEncoder, which maps
// strings too, is in ml.cpp). They run on the host only (string tensors hold std::strings, not bytes).
// StringSplit's and StringNormalizer's output shapes follow the strings, so they need their input's value to
// type their outputs: a constant, or the sample inputs the graph is specialized on (ops/specialize.h).
#include <algorithm>
#include <cctype>
#include <regex>

#include "ops/broadcast.h"
#include "ops/families.h"
#include "ops/op_support.h"
#include "ops/registry.h"

namespace tessera {
namespace {
using namespace ops;

const OpTraits kStrings{.strings = true};

void requireStrings(const InferContext& ctx, size_t i) {
  if (ctx.input(i).dtype != DType::String)
    ctx.error("input " + std::to_string(i) + " is " + ctx.input(i).toString() + "; " + ctx.node().op() +
              " takes strings");
}

// --- StringConcat: elementwise a + b, broadcasting.

void inferConcat(InferContext& ctx) {
  requireStrings(ctx, 0);
  requireStrings(ctx, 1);
  std::optional<Shape> shape = broadcastShapes({ctx.input(0).shape, ctx.input(1).shape});
  if (!shape)
    ctx.error("shapes " + shapeToString(ctx.input(0).shape) + " and " + shapeToString(ctx.input(1).shape) +
              " do not broadcast");
  ctx.outputs[0] = {DType::String, *shape};
}

std::vector<Tensor> evalConcat(const Node&, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
  const Shape& shape = types[0].shape;
  std::vector<int64_t> ia = broadcastIndexMap(in[0]->shape(), shape), ib = broadcastIndexMap(in[1]->shape(), shape);
  std::vector<std::string> out(ia.size());
  for (size_t k = 0; k < ia.size(); ++k) out[k] = in[0]->strings()[size_t(ia[k])] + in[1]->strings()[size_t(ib[k])];
  return {Tensor::strings(shape, std::move(out))};
}

// --- StringSplit: each string split on `delimiter` (as Python's str.split(sep): consecutive delimiters give
// empty strings), or, with no delimiter or an empty one, on runs of whitespace (str.split(): no empty strings);
// at most `maxsplit` splits, the rest of the string the last part. Output 0 pads each row of parts with "" to the
// longest row; output 1 counts each string's parts.

bool isSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::vector<std::string> splitString(const std::string& s, const std::string& delimiter, int64_t maxsplit) {
  std::vector<std::string> parts;
  if (delimiter.empty()) {
    size_t i = 0;
    while (true) {
      while (i < s.size() && isSpace(s[i])) ++i;
      if (i == s.size()) break;
      if (maxsplit >= 0 && int64_t(parts.size()) == maxsplit) {  // the rest, its trailing whitespace dropped
        size_t end = s.size();
        while (end > i && isSpace(s[end - 1])) --end;
        parts.push_back(s.substr(i, end - i));
        break;
      }
      size_t j = i;
      while (j < s.size() && !isSpace(s[j])) ++j;
      parts.push_back(s.substr(i, j - i));
      i = j;
    }
    return parts;
  }
  size_t start = 0;
  while (true) {
    size_t at = maxsplit >= 0 && int64_t(parts.size()) == maxsplit ? std::string::npos : s.find(delimiter, start);
    if (at == std::string::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, at - start));
    start = at + delimiter.size();
  }
}

struct SplitPlan {
  std::string delimiter;
  int64_t maxsplit = -1;  // -1: no limit
};

SplitPlan splitPlan(const Node& node) {
  SplitPlan p;
  p.delimiter = node.attrString("delimiter", "");
  if (node.attr("maxsplit")) {
    p.maxsplit = node.attrInt("maxsplit", -1);
    if (p.maxsplit < 0) failNode(node, "attribute maxsplit = " + std::to_string(p.maxsplit) + " must be >= 0");
  }
  return p;
}

std::vector<std::vector<std::string>> splitAll(const Node& node, const Tensor& x) {
  SplitPlan p = splitPlan(node);
  std::vector<std::vector<std::string>> rows;
  for (const std::string& s : x.strings()) rows.push_back(splitString(s, p.delimiter, p.maxsplit));
  return rows;
}

int64_t widest(const std::vector<std::vector<std::string>>& rows) {
  size_t w = 0;
  for (const auto& r : rows) w = std::max(w, r.size());
  return int64_t(w);
}

void inferSplit(InferContext& ctx) {
  requireStrings(ctx, 0);
  Shape lengths = ctx.input(0).shape, parts = lengths;
  parts.push_back(widest(splitAll(ctx.node(), ctx.requireConstant(0, "input"))));
  ctx.outputs[0] = {DType::String, parts};
  ctx.outputs[1] = {DType::I64, lengths};
}

std::vector<Tensor> evalSplit(const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
  std::vector<std::vector<std::string>> rows = splitAll(node, *in[0]);
  const int64_t width = types[0].shape.back();
  if (widest(rows) != width)
    failNode(node, "the strings split into " + std::to_string(widest(rows)) + " parts, the graph was typed for " +
                       std::to_string(width));
  std::vector<std::string> out;
  std::vector<int64_t> counts;
  for (auto& r : rows) {
    counts.push_back(int64_t(r.size()));
    r.resize(size_t(width));
    for (std::string& s : r) out.push_back(std::move(s));
  }
  return {Tensor::strings(types[0].shape, std::move(out)), Tensor::fromInts(DType::I64, types[1].shape, counts)};
}

// --- StringNormalizer: drops the stopwords (case-insensitively unless is_case_sensitive = 1), then changes
// the case of what is left (LOWER, UPPER or NONE; ASCII letters). X is [C] or [1, C]; when every string is a
// stopword the output is one empty string, [1] or [1, 1].

std::string withCase(std::string s, const std::string& action) {
  if (action == "LOWER")
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (action == "UPPER")
    for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> normalized(const Node& node, const Tensor& x) {
  const std::string action = node.attrString("case_change_action", "NONE");
  if (action != "LOWER" && action != "UPPER" && action != "NONE")
    failNode(node, "attribute case_change_action = '" + action + "' is not LOWER, UPPER or NONE");
  const bool sensitive = node.attrInt("is_case_sensitive", 0) != 0;
  const Attribute* stop = node.attr("stopwords");
  std::vector<std::string> stopwords = stop && stop->kind() == AttrKind::Strings ? stop->strings() : std::vector<std::string>{};
  if (!sensitive)
    for (std::string& w : stopwords) w = withCase(w, "LOWER");
  std::vector<std::string> out;
  for (const std::string& s : x.strings()) {
    const std::string key = sensitive ? s : withCase(s, "LOWER");
    if (std::find(stopwords.begin(), stopwords.end(), key) == stopwords.end()) out.push_back(withCase(s, action));
  }
  if (out.empty()) out.push_back("");
  return out;
}

void inferNormalizer(InferContext& ctx) {
  requireStrings(ctx, 0);
  const Shape& x = ctx.input(0).shape;
  if (!(x.size() == 1 || (x.size() == 2 && x[0] == 1)))
    ctx.error("input 0 is " + ctx.input(0).toString() + "; StringNormalizer takes [C] or [1, C]");
  int64_t kept = int64_t(normalized(ctx.node(), ctx.requireConstant(0, "input")).size());
  ctx.outputs[0] = {DType::String, x.size() == 1 ? Shape{kept} : Shape{1, kept}};
}

std::vector<Tensor> evalNormalizer(const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
  std::vector<std::string> out = normalized(node, *in[0]);
  if (int64_t(out.size()) != types[0].numElements())
    failNode(node, std::to_string(out.size()) + " strings are left, the graph was typed for " +
                       std::to_string(types[0].numElements()));
  return {Tensor::strings(types[0].shape, std::move(out))};
}

// --- RegexFullMatch: whether each string matches `pattern` whole. ONNX names RE2's syntax; std::regex's
// ECMAScript grammar shares the common part (classes, \w \d \s \b, groups, alternation, counted repeats).

std::regex compiledPattern(const Node& node) {
  const std::string pattern = node.attrString("pattern", "");
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    failNode(node, "attribute pattern '" + pattern + "' is not a regular expression here: " + e.what());
  }
}

void inferRegex(InferContext& ctx) {
  requireStrings(ctx, 0);
  if (!ctx.node().attr("pattern")) ctx.error("needs attribute 'pattern'");
  compiledPattern(ctx.node());
  ctx.outputs[0] = {DType::Bool, ctx.input(0).shape};
}

std::vector<Tensor> evalRegex(const Node& node, const std::vector<const Tensor*>& in, const std::vector<TensorType>& types) {
  std::regex re = compiledPattern(node);
  std::vector<int64_t> match;
  for (const std::string& s : in[0]->strings()) match.push_back(std::regex_match(s, re));
  return {Tensor::fromInts(DType::Bool, types[0].shape, match)};
}

}  // namespace

void registerStringOps(OpRegistry& r) {
  addOp(r, {"StringConcat", OpCategory::Other, "y = a + b, strings joined elementwise (broadcasting)", 2, 2, 1, 1, {},
            inferConcat, evalConcat}, kStrings);
  addOp(r, {"StringSplit", OpCategory::Other, "each string split on a delimiter (or whitespace), parts padded with \"\"; and their counts",
            1, 1, 2, 2, {}, inferSplit, evalSplit}, kStrings);
  addOp(r, {"StringNormalizer", OpCategory::Other, "stopwords removed, then the case changed", 1, 1, 1, 1, {},
            inferNormalizer, evalNormalizer}, kStrings);
  addOp(r, {"RegexFullMatch", OpCategory::Other, "whether each string matches the pattern whole", 1, 1, 1, 1, {},
            inferRegex, evalRegex}, kStrings);
}

}  // namespace tessera
