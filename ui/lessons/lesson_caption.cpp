#include "ui/lessons/lesson_caption.h"

#include <QRegularExpression>
#include <QTextDocument>
#include <functional>
#include <map>

#include "ui/code/code_controller.h"
#include "ui/run/run_controller.h"
#include "ui/session/session_controller.h"

namespace tessera::ui {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

const KernelCode* kernelOf(const SessionController& c, const QString& node) {
  auto code = c.code()->kernels();
  if (!code || code->compile != c.compile()) return nullptr;
  for (const KernelCode& k : code->kernels)
    for (const std::string& id : k.compiled.spec.nodeIds)
      if (q(id) == node) return &k;
  return nullptr;
}

QString passFigure(const SessionController& c, const QString& pass) {
  if (!c.compile()) return {};
  for (const Step& s : c.compile()->steps) {
    if (q(s.pass) != pass) continue;
    QStringList stats;
    for (const auto& [name, value] : s.statistics) stats << QString("%1 = %2").arg(q(name)).arg(value);
    return QString("%1: %2 added, %3 removed, %4 rewritten%5")
        .arg(s.changed ? "changed" : "unchanged")
        .arg(s.added.size()).arg(s.removed.size()).arg(s.rewritten.size())
        .arg(stats.isEmpty() ? QString() : " (" + stats.join(", ") + ")");
  }
  return {};
}

QString kernelFigure(const SessionController& c, const QString& node) {
  const KernelCode* k = kernelOf(c, node);
  if (!k) return {};
  QStringList nodes;
  for (const std::string& id : k->compiled.spec.nodeIds) nodes << q(id);
  return QString("%1 (%2: %3)").arg(q(k->compiled.spec.id), q(k->compiled.spec.kind), nodes.join(", "));
}

QString paramsFigure(const SessionController& c, const QString& node) {
  const KernelCode* k = kernelOf(c, node);
  if (!k) return {};
  QStringList params;
  for (const auto& [name, value] : k->compiled.kernel.params) params << QString("%1 = %2").arg(q(name)).arg(value);
  return params.join(", ");
}

QString measuredFigure(const SessionController& c, const QString& node) {
  auto run = c.runs()->lastRun();
  if (!run) return {};
  for (const execute::KernelReport& k : run->report.kernels)
    for (const std::string& id : k.nodes)
      if (q(id) == node && k.ms >= 0)
        return QString("%1 ms measured on %2 (predicted %3 ms)")
            .arg(k.ms, 0, 'g', 3).arg(run->backend).arg(k.predictedMs >= 0 ? QString::number(k.predictedMs, 'g', 3) : "—");
  return {};
}

// The last tune's line for the kernel of `node`: candidates, measured, best against the default and the cost
// model's pick (tune::TuneReport::toJson's fields).
QString tunedFigure(const SessionController& c, const QString& node) {
  const KernelCode* k = kernelOf(c, node);
  const nlohmann::json& report = c.runs()->lastTune();
  if (!k || !report.contains("kernels") || !report["kernels"].is_array()) return {};
  for (const nlohmann::json& e : report["kernels"]) {
    if (e.value("group", "") != k->compiled.spec.id || e.value("best_ms", -1.0) < 0) continue;
    auto ms = [&](const char* field) {
      const double v = e.value(field, -1.0);
      return v < 0 ? QString("—") : QString::number(v, 'g', 3) + " ms";
    };
    return QString("%1 candidates, %2 measured: best %3 (the template's default %4, the cost model's pick %5)")
        .arg(e.value("candidates", 0)).arg(e.value("candidates_measured", 0)).arg(ms("best_ms"), ms("default_ms"), ms("model_pick_ms"));
  }
  return {};
}

QString overridesFigure(const SessionController& c) {
  if (!c.compile() || c.compile()->overrides.empty()) return "no overrides";
  QStringList lines;
  for (const OverrideStatus& s : c.compile()->overrides)
    lines << QString("`%1` %2%3%4").arg(q(overrideToJson(s.override).dump()), q(overrideStateName(s.status)),
                                       s.rule.empty() ? QString() : " by rule `" + q(s.rule) + "`",
                                       s.detail.empty() ? QString() : ": " + q(s.detail));
  return lines.join("; ");
}

QString figure(const SessionController& c, const QString& name, const QString& arg) {
  auto shown = c.graphAt(c.currentStep());
  const auto fusion = c.compile() ? c.compile()->fusion : nullptr;
  if (name == "nodes") return shown ? QString::number(shown->numNodes()) : QString();
  if (name == "kernels") return fusion ? QString::number(fusion->groups.size()) : QString();
  if (name == "steps") return QString::number(c.stepCount());
  if (name == "step") return c.stepTitle(c.currentStep());
  if (name == "pass") return passFigure(c, arg);
  if (name == "kernel") return kernelFigure(c, arg);
  if (name == "params") return paramsFigure(c, arg);
  if (name == "predicted") return kernelOf(c, arg) ? kernelOf(c, arg)->predicted : QString();
  if (name == "measured") return measuredFigure(c, arg);
  if (name == "tuned") return tunedFigure(c, arg);
  if (name == "overrides") return overridesFigure(c);
  if (name == "run") return c.runs()->lastRun() ? runSummary(*c.runs()->lastRun()) : QString();
  if (name == "backend") return c.runs()->backend().name;
  if (name == "device") return c.code()->kernels() ? q(c.code()->kernels()->device.name) : QString();
  return {};
}

}  // namespace

QString fillFigures(const QString& markdown, const SessionController& c, QStringList* unknown) {
  static const QRegularExpression placeholder(R"(\{([a-z]+)(?::([^{}\s]+))?\})");
  QString out;
  qsizetype from = 0;
  for (auto it = placeholder.globalMatch(markdown); it.hasNext();) {
    const QRegularExpressionMatch m = it.next();
    out += markdown.mid(from, m.capturedStart() - from);
    QString value = figure(c, m.captured(1), m.captured(2));
    if (value.isEmpty()) {
      value = QString("⟨no figure %1⟩").arg(m.captured(0));
      if (unknown) *unknown << m.captured(0);
    }
    out += value;
    from = m.capturedEnd();
  }
  return out + markdown.mid(from);
}

QStringList nodeLinks(const QString& markdown) {
  static const QRegularExpression link(R"(\]\(node:([^)\s]+)\))");
  QStringList ids;
  for (auto it = link.globalMatch(markdown); it.hasNext();) {
    const QString id = it.next().captured(1);
    if (!ids.contains(id)) ids << id;
  }
  return ids;
}

QString markdownToHtml(const QString& markdown) {
  QTextDocument doc;
  doc.setMarkdown(markdown);
  const QString html = doc.toHtml();
  const qsizetype body = html.indexOf("<body");
  const qsizetype start = html.indexOf('>', body) + 1;
  const qsizetype end = html.lastIndexOf("</body>");
  return body < 0 || end < start ? html : html.mid(start, end - start);
}

}  // namespace tessera::ui
