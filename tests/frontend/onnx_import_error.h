#pragma once
// Test helper: what importing ONNX bytes says when it fails, and the check the import tests make of it.
#include <QtTest>

#include <string>

#include "frontend/onnx/onnx_import.h"
#include "ir/error.h"

namespace tessera::testing {

// The error message of importing `bytes` as "model.onnx", or "" when the import succeeds.
inline QString importError(const std::string& bytes, const OnnxImportOptions& options = {}) {
  try {
    importOnnxBytes(bytes, "model.onnx", options);
    return {};
  } catch (const Error& e) {
    return QString::fromStdString(e.what());
  }
}

}  // namespace tessera::testing

// The import fails with a message that contains `fragment` and names the file.
#define EXPECT_ERROR(bytes, fragment)                                                              \
  do {                                                                                              \
    QString message_ = tessera::testing::importError(bytes);                                        \
    QVERIFY2(message_.contains(fragment), qPrintable("got: '" + message_ + "'"));                   \
    QVERIFY2(message_.startsWith("model.onnx"), qPrintable("no file name: " + message_));           \
  } while (0)
