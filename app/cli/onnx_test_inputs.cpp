#include "app/cli/onnx_test_inputs.h"

#include <onnx/onnx_pb.h>

#include <fstream>
#include <set>
#include <sstream>

#include "ir/error.h"

namespace tessera::cli {

std::vector<std::string> onnxFeedNames(const std::string& modelPath) {
  std::ifstream in(modelPath, std::ios::binary);
  if (!in) fail(modelPath + ": cannot open");
  std::stringstream buf;
  buf << in.rdbuf();
  std::string bytes = buf.str();
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) fail(modelPath + ": not a valid ONNX model");
  std::set<std::string> inits;
  for (const auto& t : model.graph().initializer()) inits.insert(t.name());
  std::vector<std::string> names;
  for (const auto& v : model.graph().input())
    if (!inits.count(v.name())) names.push_back(v.name());
  return names;
}

}  // namespace tessera::cli
