// libFuzzer target for the .tsr parser. Any input must either parse or throw tessera::Error (never crash,
// hang or allocate without bound), and whatever parses must print and parse back to the same text.
// Run: fuzz_tsr -max_total_time=60 -dict=tsr.dict CORPUS (run_fuzz_tsr.sh does this with the samples as seeds).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "frontend/text/tsr.h"
#include "ir/error.h"

namespace {
// Keeps tensors small: a megabyte of base64 takes seconds under the sanitizers and hides real timeouts.
const tessera::TsrParseOptions kOptions{.maxTensorBytes = 64 << 10};

[[noreturn]] void roundTripFailed(const std::string& why, const std::string& printed) {
  std::fprintf(stderr, "round trip failed: %s\n--- printed:\n%s\n", why.c_str(), printed.c_str());
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string printed;
  try {
    printed = tessera::printTsr(tessera::parseTsr(text, "fuzz.tsr", kOptions));
  } catch (const tessera::Error&) {
    return 0;  // rejected with a message: fine
  }
  try {
    std::string again = tessera::printTsr(tessera::parseTsr(printed, "printed.tsr", kOptions));
    if (again != printed) roundTripFailed("the second print differs:\n" + again, printed);
  } catch (const tessera::Error& e) {
    roundTripFailed(std::string("the printed text does not parse: ") + e.what(), printed);
  }
  return 0;
}
