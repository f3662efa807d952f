#include "runtime/execute/run_export.h"

#include <cstdio>

#include "ir/error.h"

namespace tessera::execute {
namespace {

const nlohmann::json& kernelsOf(const nlohmann::json& report) {
  if (!report.is_object() || !report.contains("kernels") || !report["kernels"].is_array())
    fail("run report: no 'kernels' array (nothing has run)");
  return report["kernels"];
}

// RFC 4180: quote a field holding a comma, quote or line break, doubling inner quotes.
std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string number(double v, const char* format = "%.6g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string joinNodes(const nlohmann::json& k) {
  std::string out;
  for (const auto& n : k.value("nodes", nlohmann::json::array())) out += (out.empty() ? "" : " ") + n.get<std::string>();
  return out;
}

}  // namespace

std::string kernelTableCsv(const nlohmann::json& report) {
  std::string out = "group,status,verified,ms,gbps,gflops,max_rel_err,nodes\n";
  for (const auto& k : kernelsOf(report))
    out += csvField(k.value("group", "")) + "," + csvField(k.value("status", "")) + "," +
           (k.value("verified", false) ? "true" : "false") + "," + number(k.value("ms", -1.0)) + "," +
           number(k.value("gbps", 0.0)) + "," + number(k.value("gflops", 0.0)) + "," +
           number(k.value("max_rel_err", 0.0), "%.3g") + "," + csvField(joinNodes(k)) + "\n";
  return out;
}

nlohmann::json chromeTrace(const nlohmann::json& report) {
  nlohmann::json events = nlohmann::json::array();
  const std::string device = report.value("backend", "") + " · " + report.value("device", "");
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 1}, {"args", {{"name", device}}}});
  double ts = 0;  // µs: the kernels run back to back in the report's (execution) order
  int notRun = 0;
  for (const auto& k : kernelsOf(report)) {
    const double ms = k.value("ms", -1.0);
    if (ms < 0) {
      ++notRun;
      continue;
    }
    const double dur = ms * 1000;
    events.push_back({{"name", k.value("group", "")},
                      {"cat", "kernel"},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", 1},
                      {"ts", ts},
                      {"dur", dur},
                      {"args",
                       {{"group", k.value("group", "")},
                        {"nodes", k.value("nodes", nlohmann::json::array())},
                        {"GB/s", k.value("gbps", 0.0)},
                        {"GFLOP/s", k.value("gflops", 0.0)},
                        {"status", k.value("status", "")},
                        {"verified", k.value("verified", false)}}}});
    ts += dur;
  }
  return {{"traceEvents", events},
          {"displayTimeUnit", "ms"},
          {"otherData",
           {{"backend", report.value("backend", "")},
            {"device", report.value("device", "")},
            {"total_ms", report.value("total_ms", 0.0)},
            {"baseline_total_ms", report.value("baseline_total_ms", -1.0)},
            {"not_run", notRun}}}};
}

}  // namespace tessera::execute
