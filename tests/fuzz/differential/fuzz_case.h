#pragma once
// One differential-fuzzing case: a graph (as .tsr text), the fusion overrides and template parameters it is
// compiled with, and the seed of its random inputs; what came of running it (a Verdict); and the reproducer
// file, a .tsr whose leading comment holds the rest of the case, so the file opens in the window as it is.
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fusion/overrides.h"
#include "ir/graph.h"
#include "kernel/templates/templates.h"

namespace tessera::fuzz {

struct FuzzCase {
  std::string tsr;
  std::vector<Override> overrides;
  // Template parameters by node id: a kernel takes those of its first node that has an entry (so they survive
  // a regrouping while the case is minimized), keeping the names its template has and values in their space.
  std::map<std::string, kernel::TemplateParams> params;
  uint64_t inputSeed = 0;
  // Draw parameters for kernels that find no entry (seeded by paramSeed); the verdict reports what was drawn.
  bool drawParams = false;
  uint64_t paramSeed = 0;
};

// Worst first after Pass: a case that fails is one of Mismatch .. Timeout.
enum class Outcome {
  Pass,         // every kernel ran and matched the reference
  Invalid,      // the reference interpreter refused the case (the generator's fault, not the compiler's)
  Unsupported,  // a single-node kernel has no lowering for these attributes (a gap, counted, not a failure)
  Mismatch,     // a kernel's or a graph output's values differ beyond the tolerance
  Refused,      // a group of several nodes that fusion formed could not be lowered, generated or compiled
  Failed,       // a kernel failed while running (an index check, a launch)
  Error,        // the compile (a pass, lowering, the driver) threw for a valid graph
  Crash,        // the process running the case died of a signal
  Timeout,      // it ran past its time
};
const std::string& outcomeName(Outcome o);
inline bool isFailure(Outcome o) { return o >= Outcome::Mismatch; }

struct Verdict {
  Outcome outcome = Outcome::Pass;
  std::string detail;  // one line: the kernel, its nodes and what went wrong
  std::map<std::string, kernel::TemplateParams> params;  // what the kernels used, by their first node
  int kernels = 0, fusedKernels = 0, refusedParams = 0;  // refusedParams: drawn combinations a template refused
  nlohmann::json toJson() const;
  static Verdict fromJson(const nlohmann::json& j);
};

nlohmann::json caseToJson(const FuzzCase& c);
FuzzCase caseFromJson(const nlohmann::json& j, const std::string& where);

// Random overrides for `graph`: none to three force-fuse, forbid-fuse or split entries on its edges and nodes.
std::vector<Override> drawOverrides(const Graph& graph, std::mt19937_64& rng);

// The reproducer: "# diff_fuzz: OUTCOME on BACKEND: DETAIL", "# case: {json}", then the graph's .tsr text.
std::string reproducerText(const FuzzCase& c, const Verdict& v, const std::string& backend);
// Reads one back (throws Error naming the file when its case line is missing or wrong).
FuzzCase readReproducer(const std::string& path);

}  // namespace tessera::fuzz
