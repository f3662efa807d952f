#pragma once
// File > Export > Results and Run: the last run's report (RunReport::toJson form, as the session stores it) as
// the report JSON itself, the per-kernel table as CSV, or a Chrome trace (chrome://tracing, Perfetto).
// Each returns an empty string on success, else one line naming the file and the problem.
#include <QString>
#include <nlohmann/json.hpp>

namespace tessera::ui {

QString exportRunJson(const nlohmann::json& report, const QString& path);
QString exportRunCsv(const nlohmann::json& report, const QString& path);
QString exportChromeTrace(const nlohmann::json& report, const QString& path);

}  // namespace tessera::ui
