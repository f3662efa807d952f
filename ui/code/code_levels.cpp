#include "ui/code/code_levels.h"

#include <algorithm>

#include <QHash>
#include <QObject>
#include <QRegularExpression>

#include "frontend/text/tsr.h"
#include "frontend/text/tsr_syntax.h"
#include "fusion/report.h"
#include "kernel/printer.h"
#include "ui/session/session_controller.h"

namespace tessera::ui {
namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

QStringList qlist(const std::vector<std::string>& v) {
  QStringList out;
  for (const auto& s : v) out << q(s);
  return out;
}

// Appends `text` (whole lines) to `level`, each line mapped by `nodesOf(line index within text)`.
template <class F>
void appendLines(LevelText& level, const QString& text, F&& nodesOf) {
  QStringList lines = text.split('\n');
  if (!lines.isEmpty() && lines.back().isEmpty()) lines.removeLast();  // the text's final newline
  for (int i = 0; i < lines.size(); ++i) {
    level.text += lines[i] + '\n';
    level.lineNodes.push_back(nodesOf(i, lines[i]));
  }
}

void appendNote(LevelText& level, const QString& line) {
  level.text += line + '\n';
  level.lineNodes.emplace_back();
}

// The kernel printer ends a statement's line with "  # id, id": the ids that are nodes of the kernel.
QStringList kernelLineNodes(const QString& line, const QSet<QString>& kernelNodes) {
  const int hash = line.lastIndexOf("  # ");
  if (hash < 0) return {};
  QStringList ids;
  for (const QString& id : line.mid(hash + 4).split(", "))
    if (kernelNodes.contains(id)) ids << id;
  return ids;
}

int newlines(const std::string& s) { return int(std::count(s.begin(), s.end(), '\n')); }

const codegen::GeneratedKernel& generated(const KernelCode& k, codegen::Target t) {
  return t == codegen::Target::Cuda ? k.cuda : k.cpp;
}

// The number PTX's `.file N "name"` gives the program `name` (the kernel's own source, not a header), or -1.
int fileIndex(const QString& ptx, const QString& name) {
  static const QRegularExpression file(R"re(^\s*\.file\s+(\d+)\s+"([^"]*)")re", QRegularExpression::MultilineOption);
  for (auto it = file.globalMatch(ptx); it.hasNext();) {
    const QRegularExpressionMatch m = it.next();
    if (m.captured(2).endsWith(name)) return m.captured(1).toInt();
  }
  return -1;
}

// The source line (1-based) a `.loc FILE LINE COL` directive names in file `index`; 0 when it is not one.
int locLine(const QString& line, int index) {
  static const QRegularExpression loc(R"(^\s*\.loc\s+(\d+)\s+(\d+)\s)");
  const QRegularExpressionMatch m = loc.match(line);
  return m.hasMatch() && m.captured(1).toInt() == index ? m.captured(2).toInt() : 0;
}

}  // namespace

QString ptxProgramName(const KernelCode& k) { return q(k.cuda.entry) + ".cu"; }

QString levelName(Level level) { return QString::fromUtf8(driver::stageInfo(level).name.data(), driver::stageInfo(level).name.size()); }

std::vector<int> LevelText::linesFor(const QSet<QString>& nodes) const {
  std::vector<int> lines;
  if (nodes.isEmpty()) return lines;
  for (int i = 0; i < int(lineNodes.size()); ++i)
    for (const QString& id : lineNodes[size_t(i)])
      if (nodes.contains(id)) {
        lines.push_back(i);
        break;
      }
  return lines;
}

const KernelCode* CodeResult::find(const QString& kernelId) const {
  for (const KernelCode& k : kernels)
    if (q(k.compiled.spec.id) == kernelId) return &k;
  return nullptr;
}

LevelText graphLevel(const Graph& graph) {
  QHash<QString, QString> idOfName;  // the printer's spelling of a node id → the id
  for (const Node* n : graph.topoOrder()) idOfName.insert(q(tsr::formatName(n->id())), q(n->id()));
  static const QRegularExpression nodeLine(R"(^\s*node (.+?) = )");
  LevelText level;
  TsrPrintOptions options;
  options.elideAbove = 16;
  appendLines(level, q(printTsr(graph, options)), [&](int, const QString& line) -> QStringList {
    const QRegularExpressionMatch m = nodeLine.match(line);
    if (!m.hasMatch() || !idOfName.contains(m.captured(1))) return {};
    return {idOfName.value(m.captured(1))};
  });
  return level;
}

LevelText fusedLevel(const CompileResult& compile) {
  LevelText level;
  if (!compile.fusion) {
    level.note = QObject::tr("Fusion did not run (the pipeline stopped before `fuse` or it is disabled).");
    return level;
  }
  const FusedGroup* group = nullptr;
  appendLines(level, q(printFused(compile)), [&](int, const QString& line) -> QStringList {
    if (line.startsWith("kernel ")) {
      const QString id = line.section(' ', 1, 1);
      group = nullptr;
      for (const FusedGroup& g : compile.fusion->groups)
        if (q(g.id) == id) group = &g;
      QStringList all;
      if (group)
        for (const GroupNode& n : group->nodes) all << q(n.id);
      return all;
    }
    if (!group) return {};
    for (const GroupNode& n : group->nodes)
      if (line.startsWith(q("  " + n.id + " = " + n.op))) return {q(n.id)};
    return {};
  });
  return level;
}

LevelText kernelLevel(const std::vector<KernelCode>& kernels) {
  LevelText level;
  for (const KernelCode& k : kernels) {
    if (k.compiled.onHost()) {
      appendNote(level, QObject::tr("# kernel %1 %2").arg(q(k.compiled.spec.id), q(k.compiled.placement.describe())));
      continue;
    }
    const QStringList ids = qlist(k.compiled.kernel.nodeIds);
    const QSet<QString> kernelNodes(ids.begin(), ids.end());
    appendLines(level, q(kernel::printKernel(k.compiled.kernel)),
                [&](int, const QString& line) { return kernelLineNodes(line, kernelNodes); });
    appendNote(level, {});
  }
  return level;
}

LevelText sourceLevel(const std::vector<KernelCode>& kernels, codegen::Target target) {
  // Laid out as codegen::combineSources lays out one translation unit: the fullest prelude, then every body.
  LevelText level;
  const KernelCode* fullest = nullptr;
  for (const KernelCode& k : kernels)
    if (k.hasSource() && (!fullest || generated(k, target).prelude.size() > generated(*fullest, target).prelude.size()))
      fullest = &k;
  if (fullest) appendLines(level, q(generated(*fullest, target).prelude), [](int, const QString&) { return QStringList{}; });
  for (const KernelCode& k : kernels) {
    if (!k.hasSource()) {
      const QString why = k.host.isEmpty() ? QObject::tr("no source: %1").arg(k.error.simplified()) : k.host;
      appendNote(level, QObject::tr("// kernel %1 %2").arg(q(k.compiled.spec.id), why));
      continue;
    }
    const codegen::GeneratedKernel& g = generated(k, target);
    const int bodyStart = newlines(g.prelude);  // lineNodes covers prelude + body
    appendNote(level, {});
    appendLines(level, q(g.body), [&](int i, const QString&) {
      const size_t at = size_t(bodyStart + i);
      return at < g.lineNodes.size() ? qlist(g.lineNodes[at]) : QStringList{};
    });
  }
  return level;
}

LevelText ptxLevel(const std::vector<KernelCode>& kernels, const std::vector<QString>& ptx) {
  LevelText level;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const KernelCode& k = kernels[i];
    const QString id = q(k.compiled.spec.id);
    if (!k.hasSource()) {
      appendNote(level, QObject::tr("// kernel %1: no source to compile").arg(id));
      continue;
    }
    if (i >= ptx.size() || ptx[i].isEmpty()) {
      appendNote(level, QObject::tr("// kernel %1: compiling…").arg(id));
      continue;
    }
    appendNote(level, QObject::tr("// ---- kernel %1 (%2) ----").arg(id, q(k.cuda.entry)));
    const int file = fileIndex(ptx[i], ptxProgramName(k));
    int source = 0;  // the CUDA line the last .loc named; the instructions after it came from there
    appendLines(level, ptx[i], [&](int, const QString& line) -> QStringList {
      if (line.trimmed().startsWith(".loc")) source = locLine(line, file);
      if (line.startsWith('}')) source = 0;
      const bool instruction = line.startsWith('\t') && !line.trimmed().startsWith('.') && !line.trimmed().startsWith("//");
      if (!instruction || source <= 0 || source > int(k.cuda.lineNodes.size())) return {};
      return qlist(k.cuda.lineNodes[size_t(source - 1)]);
    });
    appendNote(level, {});
  }
  return level;
}

QSet<QString> selectedNodes(const CompileResult& compile, const Selection& s) {
  QSet<QString> nodes;
  const Graph* g = compile.graph.get();
  if (!g) return nodes;
  if (s.kind == Selection::Group && compile.fusion) {
    for (const FusedGroup& group : compile.fusion->groups)
      if (q(group.id) == s.id)
        for (const GroupNode& n : group.nodes) nodes.insert(q(n.id));
    return nodes;
  }
  if (s.kind == Selection::Value) {
    if (const Value* v = g->findValue(s.id.toStdString()); v && v->producer()) nodes.insert(q(v->producer()->id()));
    else if (!s.producer.isEmpty()) nodes.insert(s.producer);
    return nodes;
  }
  if (s.kind != Selection::Node) return nodes;
  const QStringList picked = s.nodes.isEmpty() ? QStringList{s.id} : s.nodes;
  for (const QString& id : picked) {
    const std::string sid = id.toStdString();
    if (g->findNode(sid)) {
      nodes.insert(id);
      continue;
    }
    // Gone from the final graph: folded into another node, or decomposed into nodes named "<id>.<part>".
    for (const auto& [host, folded] : compile.absorbed)
      if (std::find(folded.begin(), folded.end(), sid) != folded.end()) nodes.insert(q(host));
    for (const Node* n : g->topoOrder())
      if (q(n->id()).startsWith(id + '.')) nodes.insert(q(n->id()));
  }
  return nodes;
}

Selection selectionForLine(const CompileResult& compile, const QStringList& lineNodes) {
  if (lineNodes.isEmpty()) return {};
  if (lineNodes.size() == 1) return {Selection::Node, lineNodes.front(), {}, {}};
  if (compile.fusion)
    if (const FusedGroup* g = compile.fusion->groupOf(lineNodes.front().toStdString())) {
      QSet<QString> groupNodes;
      for (const GroupNode& n : g->nodes) groupNodes.insert(q(n.id));
      if (QSet<QString>(lineNodes.begin(), lineNodes.end()) == groupNodes) return {Selection::Group, q(g->id), {}, {}};
    }
  return {Selection::Node, lineNodes.front(), {}, {}, lineNodes};
}

}  // namespace tessera::ui
