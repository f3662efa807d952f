#include "ui/pipeline/inspector_panel.h"

#include <QLocale>

#include "ops/registry.h"
#include "ops/stats.h"
#include "ui/code/code_controller.h"
#include "ui/session/session_controller.h"

namespace tessera::ui {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }
QString num(int64_t n) { return QLocale().toString(qlonglong(n)); }

template <class T>
QString listOf(const std::vector<T>& v) {
  QStringList parts;
  for (size_t i = 0; i < v.size() && i < 16; ++i) {
    if constexpr (std::is_same_v<T, std::string>) parts << QString::fromStdString(v[i]);
    else parts << QString::number(v[i]);
  }
  if (v.size() > 16) parts << "…";
  return "[" + parts.join(", ") + "]";
}

QString attrText(const Attribute& a) {
  switch (a.kind()) {
    case AttrKind::Int: return QString::number(a.i());
    case AttrKind::Float: return QString::number(a.f());
    case AttrKind::String: return QString::fromStdString(a.s());
    case AttrKind::Ints: return listOf(a.ints());
    case AttrKind::Floats: return listOf(a.floats());
    case AttrKind::Strings: return listOf(a.strings());
    case AttrKind::Tensor: return QString::fromStdString("tensor " + a.t().type().toString());
  }
  return {};
}

QString row(const QString& key, const QString& value) {
  return "<tr><td style='color:#666;padding-right:8px'>" + key + "</td><td>" + value + "</td></tr>";
}

QString valueRow(const Value* v) {
  if (!v) return row("", "<i>absent</i>");
  QString role = v->initializer() ? " (weight)" : v->isGraphInput() ? " (input)" : "";
  return row("%" + q(v->name()) + role, q(v->type().toString()) + " · " + num(v->type().bytes()) + " B");
}

QString decisionsHtml(const FusionResult& fusion, const QString& nodeId, const QString& consumer = {}) {
  QString html;
  for (const FusionDecision& d : fusion.decisions) {
    const QString p = QString::fromStdString(d.producer), c = QString::fromStdString(d.consumer);
    const bool match = consumer.isEmpty() ? (p == nodeId || c == nodeId) : (p == nodeId && c == consumer);
    if (!match) continue;
    const QString colour = d.fused ? "#2e7d32" : "#a04000";
    html += QString("<li><b style='color:%1'>%2</b> %3 → %4 <code>[%5]</code>%6<br><span style='color:#444'>%7</span></li>")
                .arg(colour, q(d.verdict()), p.toHtmlEscaped(), c.toHtmlEscaped(), q(d.rule),
                     d.forced ? " <i>(forced)</i>" : "", q(d.reason));
  }
  return html.isEmpty() ? QString() : "<h4>Fusion decisions</h4><ul style='margin-left:-20px'>" + html + "</ul>";
}

// What the group became once CodeController lowered it: the generated function, its loops and launch shape.
QString kernelRows(const SessionController& c, const std::string& groupId) {
  auto code = c.code()->kernels();
  if (!code || code->compile != c.compile()) return row("kernel", "<i>" + QObject::tr("lowering…") + "</i>");
  const KernelCode* k = code->find(QString::fromStdString(groupId));
  if (!k) return {};
  if (k->compiled.onHost())  // why it runs on the host: the placement's rule and reason (core/runtime/execute)
    return row("runs on", "<b>" + QObject::tr("the host") + "</b> <code>[" +
                              q(execute::hostRuleName(k->compiled.placement.rule)) + "]</code><br><span style='color:#444'>" +
                              q(k->compiled.placement.reason) + "</span>");
  if (!k->error.isEmpty()) return row("kernel", "<span style='color:#a03020'>✗ " + k->error.toHtmlEscaped() + "</span>");
  const codegen::LaunchDims& l = k->cuda.launch;
  return row("kernel", "<code>" + q(k->cuda.entry) + "</code>") + row("loops", QString::number(k->loops)) +
         row("predicted", k->predicted.toHtmlEscaped() + " <span style='color:#666'>(H200, cost model)</span>") +
         (k->bound.isEmpty() ? QString() : row("bound", k->bound)) +
         row("launch", QString("grid %1×%2×%3 · block %4×%5×%6")
                           .arg(l.grid[0]).arg(l.grid[1]).arg(l.grid[2]).arg(l.block[0]).arg(l.block[1]).arg(l.block[2]));
}

QString nodeHtml(const SessionController& c, const Node& n) {
  QString html = "<h3>" + q(n.op()) + " <span style='color:#666'>" + q(n.id()) + "</span></h3>";
  if (const OpSchema* s = OpRegistry::instance().find(n.op()))
    html += "<p style='color:#444'>" + q(s->summary) + " · " + q(std::string(opCategoryName(s->category))) + "</p>";
  else  // an opaque node (ops/registry.h): drawn with what its model declares
    html += "<p style='color:#444'>" + QObject::tr("an op Tessera does not know%1: its types are the model's, it runs on the host and has no reference semantics")
                                           .arg(splitOpName(n.op()).first.empty() ? QString() : QObject::tr(" (domain %1)").arg(q(splitOpName(n.op()).first))) + "</p>";
  html += "<table>";
  int64_t bytesIn = 0, bytesOut = 0;
  for (const Value* v : n.inputs()) bytesIn += v ? v->type().bytes() : 0;
  for (const Value* v : n.outputs()) bytesOut += v ? v->type().bytes() : 0;
  html += row("FLOPs", num(nodeFlops(n)));
  html += row("bytes", QString("%1 in · %2 out").arg(num(bytesIn), num(bytesOut)));
  if (auto compile = c.compile(); compile && compile->fusion)
    if (const FusedGroup* g = compile->fusion->groupOf(n.id()))
      html += row("group", QString::fromStdString(g->id + " · " + std::string(groupKindName(g->kind)))) + kernelRows(c, g->id);
  html += "</table><h4>Inputs</h4><table>";
  for (const Value* v : n.inputs()) html += valueRow(v);
  html += "</table><h4>Outputs</h4><table>";
  for (const Value* v : n.outputs()) html += valueRow(v);
  html += "</table>";
  if (!n.attrs().empty()) {
    html += "<h4>Attributes</h4><table>";
    for (const auto& [name, a] : n.attrs()) html += row(q(name), attrText(a).toHtmlEscaped());
    html += "</table>";
  }
  if (auto compile = c.compile(); compile && compile->fusion) html += decisionsHtml(*compile->fusion, QString::fromStdString(n.id()));
  return html;
}

QString valueHtml(const SessionController& c, const Graph& g, const Selection& s) {
  const Value* v = g.findValue(s.id.toStdString());
  if (!v) return "<p>" + QObject::tr("%1 is not in this step").arg(s.id.toHtmlEscaped()) + "</p>";
  QString html = "<h3>%" + q(v->name()) + "</h3><table>" + row("type", q(v->type().toString())) +
                 row("elements", num(v->type().numElements())) + row("bytes", num(v->type().bytes())) +
                 row("producer", v->producer() ? q(v->producer()->id()) : "—") +
                 row("consumers", QString::number(v->uses().size())) + "</table>";
  if (auto compile = c.compile(); compile && compile->fusion && !s.producer.isEmpty())
    html += decisionsHtml(*compile->fusion, s.producer, s.consumer);
  return html;
}

QString groupHtml(const SessionController& c, const QString& id) {
  auto compile = c.compile();
  if (!compile || !compile->fusion) return {};
  for (const FusedGroup& g : compile->fusion->groups) {
    if (QString::fromStdString(g.id) != id) continue;
    QString html = "<h3>" + q(g.id) + " · " + q(std::string(groupKindName(g.kind))) + "</h3><table>" +
                   row("nodes", QString::number(g.nodes.size())) +
                   row("estimated", QString::number(g.estimatedUs, 'f', 2) + " µs") + kernelRows(c, g.id) +
                   row("reads", q([&] { std::string s; for (auto& v : g.inputs) s += "%" + v + " "; return s; }())) +
                   row("writes", q([&] { std::string s; for (auto& v : g.outputs) s += "%" + v + " "; return s; }())) + "</table><h4>Nodes</h4><ul>";
    for (const GroupNode& n : g.nodes) html += "<li>" + q(n.op) + " <span style='color:#666'>" + q(n.id) + "</span></li>";
    html += "</ul>";
    if (!g.nodes.empty()) html += decisionsHtml(*compile->fusion, QString::fromStdString(g.nodes.back().id));
    return html;
  }
  return "<p>" + QObject::tr("No group %1 in the last compile").arg(id.toHtmlEscaped()) + "</p>";
}

}  // namespace

QString inspectorHtml(const SessionController& c, const Selection& s) {
  auto g = c.graphAt(c.currentStep());
  if (!g || s.kind == Selection::None) return "<p style='color:#777'>" + QObject::tr("Select a node, an edge or a group.") + "</p>";
  switch (s.kind) {
    case Selection::Node: {
      const Node* n = g->findNode(s.id.toStdString());
      if (!n && c.currentStep() > 0) n = c.graphAt(c.currentStep() - 1)->findNode(s.id.toStdString());
      return n ? nodeHtml(c, *n) : "<p>" + QObject::tr("%1 is not in this step").arg(s.id.toHtmlEscaped()) + "</p>";
    }
    case Selection::Value: return valueHtml(c, *g, s);
    case Selection::Group: return groupHtml(c, s.id);
    case Selection::None: break;
  }
  return {};
}

InspectorPanel::InspectorPanel(SessionController* controller, QWidget* parent) : QTextBrowser(parent), controller_(controller) {
  setObjectName("inspector");
  connect(controller_, &SessionController::selectionChanged, this, &InspectorPanel::refresh);
  connect(controller_, &SessionController::stepChanged, this, &InspectorPanel::refresh);
  connect(controller_, &SessionController::compiled, this, &InspectorPanel::refresh);
  connect(controller_->code(), &CodeController::kernelsReady, this, &InspectorPanel::refresh);
  refresh();
}

void InspectorPanel::refresh() {
  const Selection& s = controller_->selection();
  // The kernel rows need the lowering; ask for it only when a node or group is shown (kernelsReady refreshes).
  if (isVisible() && (s.kind == Selection::Node || s.kind == Selection::Group)) {
    auto code = controller_->code()->kernels();
    if (!code || code->compile != controller_->compile()) controller_->code()->requestKernels();
  }
  setHtml(inspectorHtml(*controller_, s));
}

}  // namespace tessera::ui
