#include "fuzz_case.h"

#include <sstream>

#include "io/atomic_file.h"
#include "io/json_fields.h"
#include "ir/enum_names.h"
#include "ir/error.h"

namespace tessera::fuzz {

namespace {
const EnumNames<Outcome>& outcomeNames() {
  static const EnumNames<Outcome> names{{Outcome::Pass, "pass"},
                                         {Outcome::Invalid, "invalid"},
                                         {Outcome::Unsupported, "unsupported"},
                                         {Outcome::Mismatch, "mismatch"},
                                         {Outcome::Refused, "refused"},
                                         {Outcome::Failed, "failed"},
                                         {Outcome::Error, "error"},
                                         {Outcome::Crash, "crash"},
                                         {Outcome::Timeout, "timeout"}};
  return names;
}
const std::string kCaseLine = "# case: ";
}  // namespace

const std::string& outcomeName(Outcome o) { return enumName(outcomeNames(), o, "outcome"); }

nlohmann::json Verdict::toJson() const {
  return {{"outcome", outcomeName(outcome)}, {"detail", detail},           {"params", params},
          {"kernels", kernels},              {"fused_kernels", fusedKernels}, {"refused_params", refusedParams}};
}

Verdict Verdict::fromJson(const nlohmann::json& j) {
  Verdict v;
  v.outcome = enumNamed(outcomeNames(), j.at("outcome").get<std::string>(), "outcome");
  v.detail = j.at("detail").get<std::string>();
  v.params = j.at("params").get<std::map<std::string, kernel::TemplateParams>>();
  v.kernels = j.at("kernels").get<int>();
  v.fusedKernels = j.at("fused_kernels").get<int>();
  v.refusedParams = j.at("refused_params").get<int>();
  return v;
}

nlohmann::json caseToJson(const FuzzCase& c) {
  return {{"overrides", overrideListToJson(c.overrides)}, {"params", c.params}, {"input_seed", c.inputSeed}};
}

FuzzCase caseFromJson(const nlohmann::json& j, const std::string& where) {
  FuzzCase c;
  try {
    c.overrides = overridesFromJson(j.at("overrides"), where);
    c.params = j.at("params").get<std::map<std::string, kernel::TemplateParams>>();
    c.inputSeed = j.at("input_seed").get<uint64_t>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + ": the case line: " + e.what());
  }
  return c;
}

std::vector<Override> drawOverrides(const Graph& graph, std::mt19937_64& rng) {
  std::vector<std::pair<std::string, std::string>> edges;
  std::vector<std::string> nodes;
  for (const Node* n : graph.nodes()) {
    nodes.push_back(n->id());
    for (const Value* in : n->inputs())
      if (in && in->producer()) edges.emplace_back(in->producer()->id(), n->id());
  }
  std::vector<Override> out;
  int count = std::uniform_int_distribution<int>(0, 3)(rng);
  for (int i = 0; i < count && !nodes.empty(); ++i) {
    int kind = std::uniform_int_distribution<int>(0, 2)(rng);
    Override o;
    if (kind < 2 && !edges.empty()) {
      auto [p, c] = edges[std::uniform_int_distribution<size_t>(0, edges.size() - 1)(rng)];
      o.kind = kind == 0 ? OverrideKind::ForceFuse : OverrideKind::ForbidFuse;
      o.producer = p;
      o.consumer = c;
    } else {
      o.kind = OverrideKind::Split;
      o.group = nodes[std::uniform_int_distribution<size_t>(0, nodes.size() - 1)(rng)];
    }
    out.push_back(o);
  }
  return out;
}

std::string reproducerText(const FuzzCase& c, const Verdict& v, const std::string& backend) {
  std::string detail = v.detail;
  for (char& ch : detail)
    if (ch == '\n') ch = ' ';
  return "# diff_fuzz: " + outcomeName(v.outcome) + " on " + backend + ": " + detail + "\n" + kCaseLine +
         caseToJson(c).dump() + "\n" + c.tsr;
}

FuzzCase readReproducer(const std::string& path) {
  std::string text = readWholeFile(path, int64_t(1) << 24);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(kCaseLine, 0) != 0) continue;
    nlohmann::json j = nlohmann::json::parse(line.substr(kCaseLine.size()), nullptr, false);
    if (j.is_discarded()) throw Error(path + ": the case line is not JSON");
    FuzzCase c = caseFromJson(j, path);
    c.tsr = text;
    return c;
  }
  throw Error(path + ": no '" + kCaseLine + "{...}' line: not a diff_fuzz reproducer");
}

}  // namespace tessera::fuzz
