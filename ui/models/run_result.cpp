#include "ui/models/run_result.h"

#include <QObject>
#include <algorithm>

namespace tessera::ui {

double bandwidthRoof(const execute::KernelReport& k, const DevicePeaks& p) {
  const double bytes = k.gbps * 1e6 * k.ms;  // GB/s x ms
  return p.cacheGbps > 0 && bytes <= p.cacheBytes ? p.cacheGbps : p.gbps;
}

double rooflineShare(const execute::KernelReport& k, const DevicePeaks& p) {
  if (k.ms <= 0 || !p.known()) return -1;
  return std::max(k.gflops / p.gflops, k.gbps / bandwidthRoof(k, p));
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
                {"source", run.peaks.source.toStdString()}, {"cache_gbps", run.peaks.cacheGbps},
                {"cache_bytes", run.peaks.cacheBytes}};
  j["kinds"] = run.kinds;
  return j;
}

RunResult runFromJson(const nlohmann::json& j) {
  RunResult r;
  r.report = execute::RunReport::fromJson(j);  // the ui adds only its own fields: peaks and kinds
  const execute::RunReport& rep = r.report;
  const nlohmann::json peaks = j.value("peaks", nlohmann::json::object());
  r.peaks = {QString::fromStdString(peaks.value("name", "")), peaks.value("gbps", 0.0), peaks.value("gflops", 0.0),
             QString::fromStdString(peaks.value("source", "")), peaks.value("cache_gbps", 0.0),
             peaks.value("cache_bytes", 0.0)};
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
  else if (run.baselinePending)
    s += QObject::tr(" · unfused baseline: timing…");
  if (r.onceMs > 0) s += QObject::tr(" · once at load %1 ms").arg(r.onceMs, 0, 'f', 3);
  if (r.wholeMs >= 0) s += QObject::tr(" · whole run %1 ms").arg(r.wholeMs, 0, 'f', 3);
  if (r.graphMs >= 0) s += QObject::tr(" (as one CUDA graph %1 ms)").arg(r.graphMs, 0, 'f', 3);
  if (r.keptBytes > 0) s += QObject::tr(" · weights kept from the last run (%1 MB)").arg(r.keptBytes / 1e6, 0, 'f', 1);
  const auto failed = std::count_if(r.kernels.begin(), r.kernels.end(), [](const auto& k) { return !k.verified; });
  s += failed == 0 && r.outputsVerified ? QObject::tr(" · all verified ✓")
                                        : QObject::tr(" · %n kernel(s) not verified ✗", nullptr, int(failed));
  if (!r.stopped.empty()) s += QObject::tr(" · %1").arg(QString::fromStdString(r.stopped));
  return s;
}

}  // namespace tessera::ui
