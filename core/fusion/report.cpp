#include "fusion/report.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "frontend/text/tsr.h"

namespace tessera {
namespace {

std::string ms(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f ms", x);
  return buf;
}

std::string join(const std::vector<std::string>& names, const char* prefix = "") {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + std::string(prefix) + n;
  return out.empty() ? "-" : out;
}

nlohmann::json stepJson(const Step& s, const ReportJsonOptions& options) {
  nlohmann::json stats = nlohmann::json::object();
  for (const auto& [name, value] : s.statistics) stats[name] = value;
  nlohmann::json j{{"pass", s.pass},       {"changed", s.changed}, {"ms", s.wallMs},
                   {"added", s.added},     {"removed", s.removed}, {"rewritten", s.rewritten},
                   {"stats", stats}};
  if (s.failed) j["error"] = s.error;
  if (s.graph && (options.irAfter.count("*") || options.irAfter.count(s.pass)))
    j["ir"] = printTsr(*s.graph, {.elideAbove = options.elideAbove});
  return j;
}

}  // namespace

std::string stepHeader(const Step& s) {
  std::string h = "step " + std::to_string(s.index) + " " + s.pass + ": ";
  if (s.failed) return h + "failed, " + ms(s.wallMs) + ": " + s.error;
  h += s.changed ? "changed" : "unchanged";
  h += ", +" + std::to_string(s.added.size()) + " -" + std::to_string(s.removed.size()) + " ~" +
       std::to_string(s.rewritten.size()) + " nodes, " + ms(s.wallMs);
  for (const auto& [name, value] : s.statistics)
    if (value) h += ", " + name + "=" + std::to_string(value);
  return h;
}

std::string printFused(const CompileResult& result) {
  if (!result.fusion) return "fusion did not run\n";
  const FusionResult& f = *result.fusion;
  size_t nodes = 0;
  for (const FusedGroup& g : f.groups) nodes += g.nodes.size();
  std::string out = "fused graph " + (result.graph ? result.graph->name() : std::string("?")) + ": " +
                    std::to_string(f.groups.size()) + " kernels for " + std::to_string(nodes) + " nodes\n";
  for (const FusedGroup& g : f.groups) {
    char est[32];
    std::snprintf(est, sizeof est, "%.1f", g.estimatedUs);
    out += "kernel " + g.id + " " + std::string(groupKindName(g.kind)) + " (" + std::to_string(g.nodes.size()) +
           (g.nodes.size() == 1 ? " node" : " nodes") + ", ~" + est + " us)\n";
    out += "  reads  " + join(g.inputs, "%") + "\n  writes " + join(g.outputs, "%") + "\n";
    for (const GroupNode& n : g.nodes) {
      out += "  " + n.id + " = " + n.op;
      if (auto it = result.absorbed.find(n.id); it != result.absorbed.end())
        out += "  (folded: " + join(it->second) + ")";
      out += "\n";
    }
  }
  return out;
}

std::string explainFusion(const FusionResult& f) {
  std::string out;
  for (const FusionDecision& d : f.decisions)
    out += (d.fused ? "fused     " : "separate  ") + d.producer + " -> " + d.consumer + "  [" + d.rule + "] " +
           d.reason + "\n";
  return out;
}

std::string describeOverrides(const std::vector<OverrideStatus>& overrides) {
  std::string out;
  for (const OverrideStatus& st : overrides) {
    const Override& o = st.override;
    std::string what = std::string(overrideKindName(o.kind)) + " ";
    if (o.kind == OverrideKind::Split) what += o.group;
    else if (o.kind == OverrideKind::DisablePass) what += o.pass;
    else what += o.producer + " -> " + o.consumer;
    out += "override " + what + ": " + overrideStateName(st.status) + (st.rule.empty() ? "" : " [" + st.rule + "]") +
           (st.detail.empty() ? "" : " " + st.detail) + "\n";
  }
  return out;
}

std::string describeMemory(const MemoryPlan& p) {
  return "memory: " + std::to_string(p.plannedBytes) + " bytes planned in " + std::to_string(p.bufferBytes.size()) +
         " buffers (naive " + std::to_string(p.naiveBytes) + ", live peak " + std::to_string(p.peakLiveBytes) +
         ", " + std::to_string(p.inPlace.size()) + " in place)\n";
}

std::string compileReportJson(const CompileResult& r, const ReportJsonOptions& options) {
  nlohmann::json steps = nlohmann::json::array(), groups = nlohmann::json::array(),
                 decisions = nlohmann::json::array(), overrides = nlohmann::json::array();
  for (const Step& s : r.steps) steps.push_back(stepJson(s, options));
  if (r.fusion) {
    for (const FusedGroup& g : r.fusion->groups) {
      nlohmann::json nodes = nlohmann::json::array();
      for (const GroupNode& n : g.nodes) nodes.push_back({{"id", n.id}, {"op", n.op}});
      groups.push_back({{"id", g.id}, {"kind", std::string(groupKindName(g.kind))}, {"nodes", nodes}});
    }
    for (const FusionDecision& d : r.fusion->decisions)
      decisions.push_back({{"producer", d.producer}, {"consumer", d.consumer}, {"verdict", d.verdict()},
                           {"rule", d.rule}, {"reason", d.reason}});
  }
  for (const OverrideStatus& st : r.overrides) overrides.push_back(overrideStatusToJson(st));
  nlohmann::json j{{"steps", steps},
                   {"groups", groups},
                   {"decisions", decisions},
                   {"overrides", overrides},
                   {"memory",
                    {{"peak_bytes", r.memory.plannedBytes},
                     {"naive_bytes", r.memory.naiveBytes},
                     {"live_peak_bytes", r.memory.peakLiveBytes}}}};
  if (!r.error.empty()) j["error"] = r.error;
  return j.dump(2) + "\n";
}

}  // namespace tessera
