// libFuzzer target for the overrides JSON (core/fusion/overrides.h). Any text must either parse or throw
// tessera::Error; what parses must print and parse back to the same overrides, and compiling a small graph
// under them must end with a status for every one (applied, refused or stale), never a crash.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "frontend/text/tsr.h"
#include "fusion/compile.h"
#include "fusion/overrides.h"
#include "ir/error.h"

namespace {
// A graph with every kind of fusion edge the rules look at: gemm with an epilogue, a reduction, a fork.
const char* kGraph = R"(graph g {
  input %x: f32[4,8]
  input %w: f32[8,8]
  node mm = MatMul(%x, %w) -> %m: f32[4,8]
  node relu = Relu(%m) -> %r: f32[4,8]
  node sm = Softmax(%r) {axis=-1} -> %s: f32[4,8]
  node add = Add(%s, %r) -> %a: f32[4,8]
  node tr = Transpose(%a) {perm=[1, 0]} -> %t: f32[8,4]
  output %t, %r
})";

const tessera::Graph& graph() {
  static const tessera::Graph g = tessera::parseTsr(kGraph, "overrides-fuzz.tsr");
  return g;
}

[[noreturn]] void failed(const std::string& why, const std::string& text) {
  std::fprintf(stderr, "%s\n--- overrides:\n%s\n", why.c_str(), text.c_str());
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<tessera::Override> overrides;
  try {
    overrides = tessera::parseOverrides(text, "fuzz.json");
  } catch (const tessera::Error&) {
    return 0;
  }
  std::string printed = tessera::overridesToJson(overrides);
  try {
    if (tessera::overridesToJson(tessera::parseOverrides(printed, "printed.json")) != printed)
      failed("the second print differs", printed);
  } catch (const tessera::Error& e) {
    failed(std::string("the printed overrides do not parse: ") + e.what(), printed);
  }
  tessera::CompileOptions options;
  options.overrides = overrides;
  tessera::CompileResult r;
  try {
    r = tessera::compileGraph(graph().clone(), options);
  } catch (const tessera::Error&) {
    return 0;  // e.g. disable-pass naming an unknown pass: refused with a message
  }
  if (r.overrides.size() != overrides.size()) failed("a status is missing for an override", printed);
  return 0;
}
