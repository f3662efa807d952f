#include "layers/scope_names.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace tessera {
namespace {

// A word of a parameter name and the separator before it ('\0' for the first).
struct Token {
  std::string text;
  char separator = '\0';
};

std::vector<Token> tokenize(std::string_view name) {
  std::vector<Token> tokens(1);
  for (char c : name) {
    if (c == '/' || c == '.' || c == '_' || c == ':') {
      tokens.push_back({"", c == ':' ? '/' : c});
      continue;
    }
    tokens.back().text += c;
  }
  return tokens;
}

bool isNumber(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// Words that name what a tensor is (a weight, a statistic, a shape) rather than the module holding it.
bool isParameterWord(const std::string& word) {
  static const std::array<std::string_view, 24> words = {
      "", "w", "b", "s", "weight", "weights", "bias", "biases", "scale", "bn", "rm", "riv", "running", "mean",
      "var", "variance", "gamma", "beta", "kernel", "shape", "moving", "param", "params", "const"};
  std::string lower(word);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return isNumber(lower) || std::find(words.begin(), words.end(), lower) != words.end();
}

}  // namespace

ScopePath scopeOfNodeId(std::string_view id) {
  ScopePath path;
  std::string segment;
  for (char c : id) {
    if (c != '/') {
      segment += c;
      continue;
    }
    if (!segment.empty()) path.push_back(segment);
    segment.clear();
  }
  // The last segment is the op label, a scope only when something follows it; no '/' at all: no scope.
  return path;
}

ScopePath scopeOfParameter(std::string_view name) {
  std::vector<Token> tokens = tokenize(name);
  // A number is dropped only at the end (Caffe2's `_0`, before `__SHAPE`): `conv1_1_w` keeps conv1_1.
  bool numberMayGo = true;
  while (!tokens.empty() && isParameterWord(tokens.back().text)) {
    const std::string& word = tokens.back().text;
    if (isNumber(word) && !numberMayGo) break;
    numberMayGo = word.empty() || isNumber(word) || word == "SHAPE" || word == "shape";
    tokens.pop_back();
  }
  ScopePath path;
  bool afterNumber = false;
  for (const Token& t : tokens) {
    if (t.text.empty()) continue;
    const bool splits = t.separator == '/' || t.separator == '.' || t.separator == '\0';
    if (isNumber(t.text) && !path.empty()) {
      path.push_back(path.back() + (t.separator == '/' ? '_' : t.separator) + t.text);  // res2 > res2_0
      afterNumber = true;
    } else if (splits || afterNumber || path.empty()) {
      path.push_back(t.text);
      afterNumber = false;
    } else {
      path.back() += t.separator + t.text;  // res_conv1: one segment
    }
  }
  return path;
}

ScopePath commonPrefix(const ScopePath& a, const ScopePath& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return ScopePath(a.begin(), a.begin() + long(n));
}

std::string joinScope(const ScopePath& path, size_t count) {
  std::string out;
  for (size_t i = 0; i < count && i < path.size(); ++i) {
    if (i) out += '/';
    out += path[i];
  }
  return out;
}

}  // namespace tessera
