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

std::string printTsr(const Graph& graph, const TsrPrintOptions& options = {});
void writeTsrFile(const Graph& graph, const std::string& path);
// Throws Error "file:line:column: expected …" on a syntax error, or naming the node on a type error.
Graph parseTsr(std::string_view text, const std::string& fileName = "<input>");
Graph parseTsrFile(const std::string& path);

}  // namespace tessera
