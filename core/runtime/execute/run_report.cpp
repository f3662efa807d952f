#include "runtime/execute/run_report.h"

#include <utility>

#include "io/json_fields.h"
#include "ir/enum_names.h"
#include "ir/error.h"

namespace tessera::execute {

namespace {

// The one list of status names: the JSON's and everything printed.
const EnumNames<KernelStatus>& statusNames() {
  static const EnumNames<KernelStatus> names = {
      {KernelStatus::Ok, "ok"},
      {KernelStatus::Mismatch, "mismatch"},
      {KernelStatus::Unchecked, "unchecked"},
      {KernelStatus::NotCompiled, "not compiled"},
      {KernelStatus::NotRun, "not run"},
      {KernelStatus::Failed, "failed"},
      {KernelStatus::Cancelled, "cancelled"},
  };
  return names;
}

// A run report's field (io/json_fields.h); its errors start "run report: ".
template <typename T>
void readField(const nlohmann::json& j, const char* key, const std::string& where, T& out) {
  readJsonField(j, key, "run report: " + where, out);
}

KernelReport kernelFromJson(const nlohmann::json& k, const std::string& where) {
  if (!k.is_object()) fail("run report: " + where + ": expected an object, got " + k.type_name());
  KernelReport kr;
  const std::string at = where + ".";
  readField(k, "group", at, kr.group);
  readField(k, "ms", at, kr.ms);
  readField(k, "predicted_ms", at, kr.predictedMs);
  readField(k, "gbps", at, kr.gbps);
  readField(k, "gflops", at, kr.gflops);
  readField(k, "verified", at, kr.verified);
  readField(k, "max_rel_err", at, kr.maxRelErr);
  readField(k, "max_abs_err", at, kr.maxAbsErr);
  readField(k, "nodes", at, kr.nodes);
  readField(k, "cached", at, kr.cached);
  readField(k, "compile_ms", at, kr.compileMs);
  readField(k, "message", at, kr.message);
  readField(k, "precision", at, kr.precision);
  readField(k, "host", at, kr.host);
  std::string status = kernelStatusName(kr.status);
  readField(k, "status", at, status);
  try {
    kr.status = parseKernelStatus(status);
  } catch (const Error& e) {
    fail("run report: " + at + "status: " + e.what());
  }
  return kr;
}

}  // namespace

const std::string& kernelStatusName(KernelStatus s) { return enumName(statusNames(), s, "kernel status"); }

KernelStatus parseKernelStatus(const std::string& name) { return enumNamed(statusNames(), name, "kernel status"); }

nlohmann::json RunReport::toJson() const {
  nlohmann::json ks = nlohmann::json::array();
  for (const auto& k : kernels) {
    nlohmann::json j = {{"group", k.group},         {"ms", k.ms},           {"predicted_ms", k.predictedMs}, {"gbps", k.gbps},
                        {"gflops", k.gflops},       {"verified", k.verified}, {"max_rel_err", k.maxRelErr},
                        {"max_abs_err", k.maxAbsErr},
                        {"status", kernelStatusName(k.status)}, {"nodes", k.nodes},
                        {"cached", k.cached},       {"compile_ms", k.compileMs}};
    if (!k.message.empty()) j["message"] = k.message;
    if (!k.precision.empty()) j["precision"] = k.precision;
    if (!k.host.empty()) j["host"] = k.host;
    ks.push_back(j);
  }
  nlohmann::json j = {{"backend", backend}, {"device", device}, {"ran", ran}, {"kernels", ks},
                      {"total_ms", totalMs}, {"build_ms", buildMs}, {"baseline_total_ms", baselineTotalMs},
                      {"outputs_verified", outputsVerified}, {"messages", messages}};
  if (!cannotRun.empty()) j["cannot_run"] = cannotRun;
  if (!stopped.empty()) j["stopped"] = stopped;
  return j;
}

RunReport RunReport::fromJson(const nlohmann::json& j) {
  if (!j.is_object()) fail(std::string("run report: expected an object, got ") + j.type_name());
  RunReport r;
  readField(j, "backend", "", r.backend);
  readField(j, "device", "", r.device);
  readField(j, "ran", "", r.ran);
  readField(j, "cannot_run", "", r.cannotRun);
  readField(j, "total_ms", "", r.totalMs);
  readField(j, "build_ms", "", r.buildMs);
  readField(j, "baseline_total_ms", "", r.baselineTotalMs);
  readField(j, "outputs_verified", "", r.outputsVerified);
  readField(j, "messages", "", r.messages);
  readField(j, "stopped", "", r.stopped);
  auto ks = j.find("kernels");
  if (ks == j.end() || ks->is_null()) return r;
  if (!ks->is_array()) fail(std::string("run report: kernels: expected a list, got ") + ks->type_name());
  for (size_t i = 0; i < ks->size(); ++i) r.kernels.push_back(kernelFromJson((*ks)[i], "kernels[" + std::to_string(i) + "]"));
  return r;
}

}  // namespace tessera::execute
