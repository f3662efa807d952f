// libFuzzer target for the session loader (core/session). Any bytes must either load or throw tessera::Error
// naming the file (never crash, hang, or let another exception out), and what loads must save and load back
// to the same JSON. Run: fuzz_session -dict=session.dict CORPUS (run_fuzz_json.sh does this).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "ir/error.h"
#include "session/session.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;  // not JSON: loadSession's own syntax error, tested elsewhere
  nlohmann::json saved;
  try {
    saved = tessera::sessionToJson(tessera::sessionFromJson(j, "fuzz.tessera"));
  } catch (const tessera::Error&) {
    return 0;  // refused with a message: fine
  }
  try {
    nlohmann::json again = tessera::sessionToJson(tessera::sessionFromJson(saved, "saved.tessera"));
    if (again != saved) {
      std::fprintf(stderr, "round trip differs:\n%s\n---\n%s\n", saved.dump(1).c_str(), again.dump(1).c_str());
      std::abort();
    }
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "a saved session does not load: %s\n%s\n", e.what(), saved.dump(1).c_str());
    std::abort();
  }
  return 0;
}
