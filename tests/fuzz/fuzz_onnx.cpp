// libFuzzer target for the ONNX frontend: model import, and TensorProto parsing of the same bytes.
// Any exception other than tessera::Error, any sanitizer report, and any imported graph that does not survive
// export → import is a bug.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "frontend/onnx/onnx_import.h"
#include "ir/error.h"

namespace {
void checkRoundTrip(const tessera::Graph& g) {
  try {
    tessera::Graph back = tessera::importOnnxBytes(tessera::exportOnnxBytes(g), "exported.onnx");
    if (back.numNodes() != g.numNodes() || back.outputs().size() != g.outputs().size()) {
      std::fprintf(stderr, "round trip changed the graph\n");
      std::abort();
    }
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "an imported graph failed to round-trip: %s\n", e.what());
    std::abort();
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    tessera::Graph g = tessera::importOnnxBytes(bytes, "fuzz.onnx");
    checkRoundTrip(g);
  } catch (const tessera::Error&) {
  }
  try {
    tessera::parseTensorProto(bytes, "fuzz.pb");
  } catch (const tessera::Error&) {
  }
  using tessera::ValueKind;
  for (ValueKind kind : {ValueKind::Sequence, ValueKind::Optional, ValueKind::OptionalSequence}) {
    try {  // the backend tests' SequenceProto and OptionalProto data files
      tessera::parseValueProto(bytes, "fuzz.pb", tessera::TensorType::container(kind, tessera::DType::F32));
    } catch (const tessera::Error&) {
    }
  }
  return 0;
}
