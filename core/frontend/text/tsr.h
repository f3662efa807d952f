#pragma once
// The .tsr text form: readable, line-oriented, and an exact round trip (print → parse → print is identical).
// The grammar is documented in docs/tsr-format.md.
#include <string>
#include <string_view>

#include "ir/graph.h"

namespace tessera {

struct TsrPrintOptions {
  // Replace the data of tensors with more than `elideAbove` elements by a placeholder; for views only,
  // the result does not parse. Negative: print everything.
  int64_t elideAbove = -1;
};

struct TsrParseOptions {
  // Largest tensor (in bytes) that the text may create: const data, generators, tensor attributes.
  // The fuzzer lowers it; generators like zeros allocate what the type asks for.
  int64_t maxTensorBytes = Tensor::kMaxTensorBytes;
};

std::string printTsr(const Graph& graph, const TsrPrintOptions& options = {});
// Writes atomically: a temporary file next to `path`, then a rename. Errors name the path.
void writeTsrFile(const Graph& graph, const std::string& path);
// Throws Error "file:line:column: expected X, found Y" on a syntax error, "file:line: node 'id' (Op): …" on a
// type error. Type inference (ops/infer.h) runs over the parsed graph; declared output types must match it.
Graph parseTsr(std::string_view text, const std::string& fileName = "<input>", const TsrParseOptions& options = {});
Graph parseTsrFile(const std::string& path, const TsrParseOptions& options = {});

}  // namespace tessera
