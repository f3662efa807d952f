#include "ui/run_result.h"

#include <QObject>
#include <algorithm>

namespace tessera::ui {

double rooflineShare(const execute::KernelReport& k, const DevicePeaks& p) {
  if (k.ms <= 0 || !p.known()) return -1;
  return std::max(k.gflops / p.gflops, k.gbps / p.gbps);
}

double arithmeticIntensity(const execute::KernelReport& k) { return k.gbps > 0 ? k.gflops / k.gbps : 0; }

std::string kernelKey(const execute::KernelReport& k) {
  std::string key;
  for (const auto& n : k.nodes) key += (key.empty() ? "" : ",") + n;
  return key;
}

nlohmann::json runToJson(const RunResult& run) {
  nlohmann::json j = run.report.toJson();
  j["peaks"] = {{"name", run.peaks.name.toStdString()}, {"gbps", run.peaks.gbps}, {"gflops", run.peaks.gflops},
                {"source", run.peaks.source.toStdString()}};
  j["kinds"] = run.kinds;
  return j;
}

RunResult runFromJson(const nlohmann::json& j) {
  RunResult r;
  execute::RunReport& rep = r.report;
  rep.backend = j.value("backend", "");
  rep.device = j.value("device", "");
  rep.ran = j.value("ran", false);
  rep.totalMs = j.value("total_ms", 0.0);
  rep.baselineTotalMs = j.value("baseline_total_ms", -1.0);
  rep.outputsVerified = j.value("outputs_verified", false);
  rep.cannotRun = j.value("cannot_run", "");
  for (const auto& k : j.value("kernels", nlohmann::json::array())) {
    execute::KernelReport kr;
    kr.group = k.value("group", "");
    kr.ms = k.value("ms", -1.0);
    kr.predictedMs = k.value("predicted_ms", -1.0);
    kr.gbps = k.value("gbps", 0.0);
    kr.gflops = k.value("gflops", 0.0);
    kr.verified = k.value("verified", false);
    kr.maxRelErr = k.value("max_rel_err", 0.0);
    kr.maxAbsErr = k.value("max_abs_err", 0.0);
    kr.precision = k.value("precision", "");
    kr.status = execute::parseKernelStatus(k.value("status", "not run"));
    kr.message = k.value("message", "");
    kr.nodes = k.value("nodes", std::vector<std::string>{});
    rep.kernels.push_back(std::move(kr));
  }
  const nlohmann::json peaks = j.value("peaks", nlohmann::json::object());
  r.peaks = {QString::fromStdString(peaks.value("name", "")), peaks.value("gbps", 0.0), peaks.value("gflops", 0.0),
             QString::fromStdString(peaks.value("source", ""))};
  r.kinds = j.value("kinds", std::map<std::string, std::string>{});
  r.backend = QString::fromStdString(rep.backend);
  return r;
}

QString runSummary(const RunResult& run) {
  if (!run.error.isEmpty()) return QObject::tr("%1: %2").arg(run.backend, run.error);
  const execute::RunReport& r = run.report;
  if (!r.ran) return QObject::tr("%1: cannot run (%2)").arg(run.backend, QString::fromStdString(r.cannotRun));
  QString s = QObject::tr("%1 · %2 ms").arg(run.backend).arg(r.totalMs, 0, 'f', 3);
  if (r.baselineTotalMs > 0)
    s += QObject::tr(" · unfused %1 ms (%2× %3)")
             .arg(r.baselineTotalMs, 0, 'f', 3)
             .arg(r.totalMs > 0 ? std::max(r.baselineTotalMs / r.totalMs, r.totalMs / r.baselineTotalMs) : 0, 0, 'f', 2)
             .arg(r.baselineTotalMs >= r.totalMs ? QObject::tr("faster") : QObject::tr("slower"));
  const auto failed = std::count_if(r.kernels.begin(), r.kernels.end(), [](const auto& k) { return !k.verified; });
  s += failed == 0 && r.outputsVerified ? QObject::tr(" · all verified ✓")
                                        : QObject::tr(" · %n kernel(s) not verified ✗", nullptr, int(failed));
  return s;
}

}  // namespace tessera::ui
