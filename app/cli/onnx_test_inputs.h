#pragma once
// Names of an ONNX model's graph inputs that are not initializers, in order: how the backend tests'
// input_N.pb files map to inputs before the model is imported.
#include <string>
#include <vector>

namespace tessera::cli {
std::vector<std::string> onnxFeedNames(const std::string& modelPath);
}
