// Statements of the .tsr form (graph, input, const, node, output) into a Graph, then type inference with the
// line of each node. Values must be defined before they are used, so the file order is a topological order.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <iterator>
#include <unordered_map>

#include "frontend/text/tsr.h"
#include "io/atomic_file.h"
#include "frontend/text/tsr_lexer.h"
#include "frontend/text/tsr_syntax.h"
#include "frontend/text/tsr_values.h"
#include "ir/error.h"
#include "ops/infer.h"
#include "ops/registry.h"

namespace tessera {

namespace {
using namespace tsr;

struct ParsedNode {
  Node* node;
  int line;
  std::vector<std::optional<TensorType>> declared;  // output types as written, when written
};

class Parser {
 public:
  Parser(std::string_view text, const std::string& fileName, const TsrParseOptions& options)
      : ts_(text, fileName), options_(options) {}
  Graph parse();

 private:
  void parseStatement();
  void parseInput();
  void parseConst();
  void parseNode();
  void parseOutput();
  Token takeNewValueName();
  Value* takeValueUse(std::string_view what);
  void inferTypesByLine();
  void typeOpaqueNode(const ParsedNode& p);

  TokenStream ts_;
  TsrParseOptions options_;
  Graph graph_;
  std::unordered_map<std::string, int> valueLines_, nodeLines_;  // where each name was defined
  std::vector<ParsedNode> nodes_;
};

std::string valueText(const std::string& name) { return singleQuoted(formatValueRef(name)); }

Graph Parser::parse() {
  if (!ts_.atName("graph")) ts_.failExpected("'graph'");
  ts_.take();
  if (!ts_.at(Tok::Name) && !ts_.at(Tok::String)) ts_.failExpected("a graph name");
  graph_.setName(ts_.take().text);  // may be empty: ONNX graphs often have no name
  ts_.expect(Tok::LBrace, "'{' after the graph name");
  while (!ts_.at(Tok::RBrace)) parseStatement();
  ts_.take();
  if (!ts_.at(Tok::End)) ts_.failExpected("end of file after '}'");
  inferTypesByLine();
  return std::move(graph_);
}

void Parser::parseStatement() {
  if (ts_.atName("input")) return parseInput();
  if (ts_.atName("const")) return parseConst();
  if (ts_.atName("node")) return parseNode();
  if (ts_.atName("output")) return parseOutput();
  ts_.failExpected("'input', 'const', 'node', 'output' or '}'");
}

Token Parser::takeNewValueName() {
  const Token& t = ts_.peek();
  if (t.kind != Tok::ValueRef) ts_.failExpected("a value name (%name)");
  if (t.text.empty()) ts_.failAt(t, "a value name must not be empty");
  if (auto it = valueLines_.find(t.text); it != valueLines_.end())
    ts_.failAt(t, "value " + valueText(t.text) + " is already defined at line " + std::to_string(it->second));
  valueLines_[t.text] = t.line;
  return ts_.take();
}

Value* Parser::takeValueUse(std::string_view what) {
  const Token& t = ts_.peek();
  if (t.kind != Tok::ValueRef) ts_.failExpected(what);
  Value* v = graph_.findValue(t.text);
  if (!v || !valueLines_.count(t.text)) ts_.failAt(t, "undefined value " + valueText(t.text));
  ts_.take();
  return v;
}

void Parser::parseInput() {
  ts_.take();
  Token name = takeNewValueName();
  ts_.expect(Tok::Colon, "':' after the value name");
  TensorType type = parseTensorType(ts_);
  Value* v = graph_.addInput(name.text, type);
  if (ts_.accept(Tok::Equals))  // an input with a default value (an ONNX initializer listed as input)
    graph_.setInitializer(v, parseTensorData(ts_, type, "input " + valueText(name.text), options_.maxTensorBytes));
}

void Parser::parseConst() {
  ts_.take();
  Token name = takeNewValueName();
  ts_.expect(Tok::Colon, "':' after the value name");
  TensorType type = parseTensorType(ts_);
  ts_.expect(Tok::Equals, "'=' and the data");
  std::string what = "const " + valueText(name.text);
  graph_.addInitializer(name.text, parseTensorData(ts_, type, what, options_.maxTensorBytes));
}

void Parser::parseNode() {
  int line = ts_.take().line;
  Token id = ts_.expectName("a node id");
  if (auto it = nodeLines_.find(id.text); it != nodeLines_.end())
    ts_.failAt(id, "node '" + id.text + "' is already defined at line " + std::to_string(it->second));
  ts_.expect(Tok::Equals, "'=' after the node id");
  Token op = ts_.expectName("an op name");
  ts_.expect(Tok::LParen, "'(' after the op name");
  std::vector<Value*> inputs;
  if (!ts_.accept(Tok::RParen)) {
    do {
      if (ts_.atName("_")) {
        ts_.take();
        inputs.push_back(nullptr);
      } else {
        inputs.push_back(takeValueUse("an input value (%name) or '_'"));
      }
    } while (ts_.accept(Tok::Comma));
    ts_.expect(Tok::RParen, "',' or ')'");
  }
  Attributes attrs;
  if (ts_.at(Tok::LBrace)) attrs = parseAttributes(ts_, options_.maxTensorBytes);
  ts_.expect(Tok::Arrow, "'->' and the node's outputs");
  std::vector<std::string> names;
  ParsedNode parsed{nullptr, line, {}};
  do {
    names.push_back(takeNewValueName().text);
    parsed.declared.push_back(ts_.accept(Tok::Colon) ? std::optional(parseTensorType(ts_)) : std::nullopt);
  } while (ts_.accept(Tok::Comma));
  nodeLines_[id.text] = line;
  parsed.node = graph_.addNode(op.text, inputs, names, std::move(attrs), id.text);
  nodes_.push_back(std::move(parsed));
}

void Parser::parseOutput() {
  ts_.take();
  do graph_.addOutput(takeValueUse("an output value (%name)"));
  while (ts_.accept(Tok::Comma));
}

// A node whose op Tessera does not know is opaque (ops/registry.h): its written output types are its types.
void Parser::typeOpaqueNode(const ParsedNode& p) {
  Node& n = *p.node;
  for (size_t i = 0; i < n.numOutputs(); ++i) {
    if (!p.declared[i])
      ts_.failAtLine(p.line, "node '" + n.id() + "': unknown op '" + n.op() + "': write the type of each of its outputs (" +
                                 valueText(n.output(i)->name()) + " has none); Tessera infers types only for the "
                                 "ops it knows");
    n.output(i)->setType(*p.declared[i]);
  }
}

// inferTypes(), node by node, so that an error can name the node's line.
void Parser::inferTypesByLine() {
  ConstantTable constants;
  for (const ParsedNode& p : nodes_) {
    Node& n = *p.node;
    std::vector<TensorType> types;
    if (!isKnownOp(n.op())) typeOpaqueNode(p);
    try {
      types = inferNode(n, constants);
    } catch (const Error& e) {
      ts_.failAtLine(p.line, e.what());
    }
    for (size_t i = 0; i < types.size(); ++i) {
      if (p.declared[i] && *p.declared[i] != types[i])
        ts_.failAtLine(p.line, "node '" + n.id() + "' (" + n.op() + "): " +
                                   (types.size() > 1 ? "output " + valueText(n.output(i)->name()) + " " : "") +
                                   "declared " + p.declared[i]->toString() + " but the op gives " +
                                   types[i].toString());
      n.output(i)->setType(types[i]);
    }
    try {
      propagateConstants(n, constants);
    } catch (const Error& e) {
      ts_.failAtLine(p.line, e.what());
    }
  }
}

}  // namespace

Graph parseTsr(std::string_view text, const std::string& fileName, const TsrParseOptions& options) {
  return Parser(text, fileName, options).parse();
}

Graph parseTsrFile(const std::string& path, const TsrParseOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(path + ": is a directory, not a .tsr file");
  constexpr int64_t kMaxTsrBytes = int64_t(1) << 31;  // the ONNX form's limit: a larger text is not a model
  return parseTsr(readWholeFile(path, kMaxTsrBytes), path, options);
}

}  // namespace tessera
