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

// The fields that are one member each, listed once so that toJson and fromJson cannot drift apart: f(key,
// member) for every field, then g(key, member) for the strings written only when not empty. The status (a
// name) and the kernels (a list) are handled beside.
constexpr auto kKernelFields = [](auto& k, auto&& f, auto&& g) {
  f("group", k.group);
  f("ms", k.ms);
  f("predicted_ms", k.predictedMs);
  f("gbps", k.gbps);
  f("gflops", k.gflops);
  f("verified", k.verified);
  f("max_rel_err", k.maxRelErr);
  f("max_abs_err", k.maxAbsErr);
  f("nodes", k.nodes);
  f("cached", k.cached);
  f("once", k.once);
  f("compile_ms", k.compileMs);
  g("message", k.message);
  g("precision", k.precision);
  g("host", k.host);
};

constexpr auto kReportFields = [](auto& r, auto&& f, auto&& g) {
  f("backend", r.backend);
  f("device", r.device);
  f("ran", r.ran);
  f("total_ms", r.totalMs);
  f("once_ms", r.onceMs);
  f("build_ms", r.buildMs);
  f("kept_bytes", r.keptBytes);
  f("baseline_total_ms", r.baselineTotalMs);
  f("whole_ms", r.wholeMs);
  f("graph_ms", r.graphMs);
  f("outputs_verified", r.outputsVerified);
  f("messages", r.messages);
  g("cannot_run", r.cannotRun);
  g("stopped", r.stopped);
  g("worker", r.worker);
  g("whole_note", r.wholeNote);
};

// The JSON object of `v`'s fields; the optional strings only when not empty.
template <typename Fields, typename Value>
nlohmann::json fieldsToJson(const Value& v, Fields fields) {
  nlohmann::json j = nlohmann::json::object();
  fields(
      v, [&](const char* key, const auto& member) { j[key] = member; },
      [&](const char* key, const std::string& member) {
        if (!member.empty()) j[key] = member;
      });
  return j;
}

// Reads `v`'s fields from `j`; a missing one keeps its default.
template <typename Fields, typename Value>
void fieldsFromJson(const nlohmann::json& j, const std::string& where, Value& v, Fields fields) {
  auto read = [&](const char* key, auto& member) { readField(j, key, where, member); };
  fields(v, read, read);
}

KernelReport kernelFromJson(const nlohmann::json& k, const std::string& where) {
  if (!k.is_object()) fail("run report: " + where + ": expected an object, got " + k.type_name());
  KernelReport kr;
  const std::string at = where + ".";
  fieldsFromJson(k, at, kr, kKernelFields);
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
    nlohmann::json j = fieldsToJson(k, kKernelFields);
    j["status"] = kernelStatusName(k.status);
    ks.push_back(j);
  }
  nlohmann::json j = fieldsToJson(*this, kReportFields);
  j["kernels"] = ks;
  return j;
}

RunReport RunReport::fromJson(const nlohmann::json& j) {
  if (!j.is_object()) fail(std::string("run report: expected an object, got ") + j.type_name());
  RunReport r;
  fieldsFromJson(j, "", r, kReportFields);
  auto ks = j.find("kernels");
  if (ks == j.end() || ks->is_null()) return r;
  if (!ks->is_array()) fail(std::string("run report: kernels: expected a list, got ") + ks->type_name());
  for (size_t i = 0; i < ks->size(); ++i) r.kernels.push_back(kernelFromJson((*ks)[i], "kernels[" + std::to_string(i) + "]"));
  return r;
}

}  // namespace tessera::execute
