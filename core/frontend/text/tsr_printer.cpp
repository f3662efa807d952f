// Printing a Graph as .tsr: inputs, consts in graph order, nodes in topological order, outputs.
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "frontend/text/tsr.h"
#include "ir/graph.h"
#include "frontend/text/tsr_syntax.h"
#include "ir/error.h"

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

namespace tessera {

namespace {
using namespace tsr;

// Constant data up to this many elements prints as a list of values, larger data as base64.
constexpr int64_t kMaxListElements = 64;

std::string valueRef(const Value* v) { return formatValueRef(v->name()); }

std::string typedValue(const Value* v) { return valueRef(v) + ": " + v->type().toString(); }

// The list form, or nullopt when an element has no exact literal (then base64 keeps the bytes).
std::optional<std::string> listData(const Tensor& t) {
  std::string out = "[";
  for (int64_t i = 0; i < t.numElements(); ++i) {
    std::optional<std::string> element = formatElement(t, i);
    if (!element) return std::nullopt;
    if (i) out += ", ";
    out += *element;
  }
  return out + "]";
}

// Strings print as a list of quoted strings, whatever their count (they have no base64 form).
std::string stringData(const Tensor& t, const TsrPrintOptions& options) {
  int64_t n = t.numElements();
  if (options.elideAbove >= 0 && n > options.elideAbove) return "<" + std::to_string(n) + " elements>";
  std::string out = "[";
  for (int64_t i = 0; i < n; ++i) out += (i ? ", " : "") + quoteString(t.strings()[size_t(i)]);
  return out + "]";
}

std::string tensorData(const Tensor& t, const TsrPrintOptions& options) {
  if (t.holdsStrings()) return stringData(t, options);
  int64_t n = t.numElements();
  if (int64_t(t.byteSize()) != t.type().bytes())  // a default-constructed Tensor has a type but no bytes
    fail("printTsr: a tensor of type " + t.type().toString() + " has " + std::to_string(t.byteSize()) +
         " bytes of data");
  if (options.elideAbove >= 0 && n > options.elideAbove)
    return std::string("<").append(std::to_string(n)).append(" elements>");
  if (n <= kMaxListElements)
    if (std::optional<std::string> list = listData(t)) return *list;
  return "base64\"" + base64Encode(t.bytes()) + "\"";  // the base64 alphabet needs no escapes
}

template <class T, class F>
std::string listOf(const char* emptyForm, const std::vector<T>& items, F format) {
  if (items.empty()) return emptyForm;
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + format(items[i]);
  return out + "]";
}

std::string attributeValue(const Attribute& a, const TsrPrintOptions& options) {
  auto asInt = [](int64_t v) { return std::to_string(v); };
  auto asString = [](const std::string& s) { return quoteString(s); };
  switch (a.kind()) {
    case AttrKind::Int: return asInt(a.i());
    case AttrKind::Float: return formatDouble(a.f());
    case AttrKind::String: return asString(a.s());
    case AttrKind::Ints: return listOf("ints[]", a.ints(), asInt);
    case AttrKind::Floats: return listOf("floats[]", a.floats(), formatDouble);
    case AttrKind::Strings: return listOf("strings[]", a.strings(), asString);
    case AttrKind::Tensor: return "tensor<" + a.t().type().toString() + "> " + tensorData(a.t(), options);
    // The text form has no syntax for subgraphs yet: the body is named, and the parser refuses the word.
    case AttrKind::Graph: return "graph<" + std::to_string(a.g().numNodes()) + " nodes>";
  }
  return "";
}

std::string nodeLine(const Node& n, const TsrPrintOptions& options) {
  std::string s = "  node " + formatName(n.id()) + " = " + formatName(n.op()) + "(";
  for (size_t i = 0; i < n.numInputs(); ++i) s += (i ? ", " : "") + (n.input(i) ? valueRef(n.input(i)) : "_");
  s += ")";
  if (!n.attrs().empty()) {
    s += " {";
    bool first = true;
    for (const auto& [name, value] : n.attrs()) {  // std::map: sorted by name
      s += (first ? "" : ", ") + formatName(name) + "=" + attributeValue(value, options);
      first = false;
    }
    s += "}";
  }
  s += " ->";
  for (size_t i = 0; i < n.numOutputs(); ++i) s += (i ? ", " : " ") + typedValue(n.output(i));
  return s + "\n";
}

// A fresh name next to `path`, so that the rename stays on one file system and writers do not collide.
std::string temporaryPath(const std::string& path) {
  static std::atomic<unsigned> counter{0};
#if defined(__unix__) || defined(__APPLE__)
  long pid = long(::getpid());
#else
  long pid = 0;
#endif
  return path + ".tmp-" + std::to_string(pid) + "-" + std::to_string(counter++);
}

void writeAll(const std::string& text, const std::string& tmp, const std::string& path) {
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail(path + ": cannot write: " + std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0;
#if defined(__unix__) || defined(__APPLE__)
  ok = ok && ::fsync(fileno(f)) == 0;  // the data reaches the disk before the rename makes it visible
#endif
  int error = ok ? 0 : errno;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (!ok) {
    std::remove(tmp.c_str());
    fail(path + ": cannot write: " + std::strerror(error));
  }
}
}  // namespace

std::string printTsr(const Graph& graph, const TsrPrintOptions& options) {
  std::string s = "graph " + formatName(graph.name()) + " {\n";
  for (const Value* v : graph.inputs()) {
    s += "  input " + typedValue(v);
    if (const Tensor* data = v->initializer()) s += " = " + tensorData(*data, options);
    s += "\n";
  }
  for (const Value* v : graph.initializers())
    if (!v->isGraphInput()) s += "  const " + typedValue(v) + " = " + tensorData(*v->initializer(), options) + "\n";
  for (const Node* n : graph.topoOrder()) s += nodeLine(*n, options);
  if (!graph.outputs().empty()) {
    s += "  output";
    for (size_t i = 0; i < graph.outputs().size(); ++i) s += (i ? ", " : " ") + valueRef(graph.outputs()[i]);
    s += "\n";
  }
  return s + "}\n";
}

void writeTsrFile(const Graph& graph, const std::string& path) {
  std::string text = printTsr(graph);
  std::string tmp = temporaryPath(path);
  writeAll(text, tmp, path);
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    fail(path + ": cannot replace the file: " + ec.message());
  }
}

}  // namespace tessera
