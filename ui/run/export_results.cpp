#include "ui/run/export_results.h"

#include <functional>

#include "runtime/execute/run_export.h"
#include "ui/common/export_file.h"

namespace tessera::ui {
namespace {

// Formats with `format` (which throws for a report without kernels) and writes the text.
QString writeText(const QString& path, const std::function<std::string()>& format) {
  std::string text;
  try {
    text = format();
  } catch (const std::exception& e) {
    return QObject::tr("%1: %2").arg(path, e.what());
  }
  return writeFileAtomically(path, [&text](QIODevice& out) { return out.write(text.data(), qint64(text.size())) == qint64(text.size()); });
}

}  // namespace

QString exportRunJson(const nlohmann::json& report, const QString& path) {
  return writeText(path, [&report] {
    execute::kernelTableCsv(report);  // the same check as the other formats: a report with kernels
    return report.dump(2) + "\n";
  });
}

QString exportRunCsv(const nlohmann::json& report, const QString& path) {
  return writeText(path, [&report] { return execute::kernelTableCsv(report); });
}

QString exportChromeTrace(const nlohmann::json& report, const QString& path) {
  return writeText(path, [&report] { return execute::chromeTrace(report).dump(1) + "\n"; });
}

}  // namespace tessera::ui
