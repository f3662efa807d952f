#include "ui/window/session_actions.h"

#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <functional>

#include "ui/graph/export_graph.h"
#include "ui/run/export_results.h"
#include "ui/window/main_window.h"
#include "ui/session/session_controller.h"
#include "ui/session/session_files.h"

namespace tessera::ui {
namespace {

// The name a dialog proposes: the document's, with `suffix`.
QString proposedName(const MainWindow& w, const QString& suffix) {
  const QString doc = w.sessionFiles()->documentPath();
  if (doc.isEmpty()) return "untitled" + suffix;
  const QFileInfo info(doc);
  return info.absolutePath() + "/" + info.completeBaseName() + suffix;
}

bool saveAs(MainWindow& w) {
  const QString path = QFileDialog::getSaveFileName(&w, QObject::tr("Save session"), proposedName(w, ".tessera"),
                                                    QObject::tr("Tessera sessions (*.tessera)"));
  return !path.isEmpty() && w.sessionFiles()->saveAs(path.endsWith(".tessera") ? path : path + ".tessera");
}

// One Export entry: asks for a file with `filter`, then writes it with `write`, reporting a failure.
void addExport(MainWindow& w, QMenu& menu, const QString& text, const QString& suffix, const QString& filter,
               std::function<QString(const QString&)> write) {
  QObject::connect(menu.addAction(text), &QAction::triggered, &w, [&w, text, suffix, filter, write] {
    const QString path = QFileDialog::getSaveFileName(&w, text, proposedName(w, suffix), filter);
    if (path.isEmpty()) return;
    const QString error = write(path);
    if (!error.isEmpty()) w.sessionFiles()->prompts().showError(QObject::tr("Export failed"), error);
    else w.showStatus(QObject::tr("Exported %1").arg(path));
  });
}

nlohmann::json lastRun(const MainWindow& w) { return w.controller()->sessionParts()->save("last_run"); }

void addExports(MainWindow& w, QMenu& menu) {
  addExport(w, menu, QObject::tr("Graph as &SVG…"), ".svg", "SVG (*.svg)", [&w](const QString& p) { return exportGraphSvg(*w.graphView(), p); });
  addExport(w, menu, QObject::tr("Graph as &PNG…"), ".png", "PNG (*.png)", [&w](const QString& p) { return exportGraphPng(*w.graphView(), p); });
  addExport(w, menu, QObject::tr("Graph as &DOT…"), ".dot", "Graphviz (*.dot *.gv)", [&w](const QString& p) { return exportGraphDot(*w.graphView(), p); });
  menu.addSeparator();
  addExport(w, menu, QObject::tr("Results as &CSV…"), ".csv", "CSV (*.csv)", [&w](const QString& p) { return exportRunCsv(lastRun(w), p); });
  addExport(w, menu, QObject::tr("Results as &JSON…"), ".json", "JSON (*.json)", [&w](const QString& p) { return exportRunJson(lastRun(w), p); });
  addExport(w, menu, QObject::tr("Run as Chrome &trace…"), ".trace.json", "Chrome trace (*.json)",
            [&w](const QString& p) { return exportChromeTrace(lastRun(w), p); });
}

}  // namespace

void addSessionActions(MainWindow& w, QMenu& file) {
  QAction* save = file.addAction(QObject::tr("&Save"), &w, [&w] {
    if (!w.sessionFiles()->save()) saveAs(w);
  });
  save->setShortcut(QKeySequence::Save);
  save->setObjectName("saveAction");
  file.addAction(QObject::tr("Save &As…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S), &w, [&w] { saveAs(w); });
  QAction* embed = file.addAction(QObject::tr("&Embed the model in the session"));
  embed->setCheckable(true);
  QObject::connect(embed, &QAction::toggled, &w, [&w](bool on) { w.sessionFiles()->setEmbedModel(on); });
  addExports(w, *file.addMenu(QObject::tr("&Export")));
}

}  // namespace tessera::ui
