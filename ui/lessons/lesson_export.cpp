#include "ui/lessons/lesson_export.h"

#include <QBuffer>
#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QImage>
#include <QRegularExpression>
#include <QThread>
#include <cstdio>

#include "io/atomic_file.h"
#include "ir/error.h"
#include "ui/code/code_controller.h"
#include "ui/graph/graph_view.h"
#include "ui/lessons/lesson_caption.h"
#include "ui/lessons/lesson_player.h"
#include "ui/session/session_controller.h"
#include "ui/session/session_files.h"
#include "ui/window/headless_render.h"
#include "ui/window/main_window.h"
#include "ui/window/run_docks.h"

namespace tessera::ui {
namespace {

bool settle(LessonPlayer& player, const QDeadlineTimer& deadline) {
  return waitUntil([&] { return player.settled(); }, deadline);
}

// The text of `level` for the selection's lines (a window of them), as the Levels panel shows it.
QString shownCode(const SessionController& c, const QString& level) {
  auto code = c.code()->kernels();
  auto ptx = c.code()->ptx();
  if (!c.compile() || !c.compile()->graph) return {};
  LevelText printed;  // graph and fused are printed here; the others are the code controller's
  const LevelText* text = nullptr;
  switch (driver::stageNamed(level.toStdString()).value_or(driver::Stage::Run)) {
    case Level::Graph:
      printed = graphLevel(*c.compile()->graph);
      text = &printed;
      break;
    case Level::Fused:
      printed = fusedLevel(*c.compile());
      text = &printed;
      break;
    case Level::Kernel: text = code ? &code->kernel : nullptr; break;
    case Level::Cuda: text = code ? &code->cuda : nullptr; break;
    case Level::Cpp: text = code ? &code->cpp : nullptr; break;
    case Level::Ptx: text = code && ptx ? &ptx->ptx : nullptr; break;
    case Level::Run: break;  // not a level (lessons refuse it)
  }
  if (!text) return {};
  const QStringList lines = text->text.split('\n');
  const std::vector<int> marked = text->linesFor(selectedNodes(*c.compile(), c.selection()));
  const int first = marked.empty() ? 0 : std::max(0, marked.front() - 2);
  const int last = std::min(int(lines.size()), first + 48);  // a page of it; the window has the rest
  return lines.mid(first, last - first).join('\n');
}

QString escaped(const QString& s) { return s.toHtmlEscaped(); }

}  // namespace

QString playToEnd(LessonPlayer& player, int timeoutMs, const std::function<void(int)>& page) {
  const QDeadlineTimer deadline(timeoutMs);
  const QString file = player.lesson().path;
  for (int i = 0; i < player.count(); ++i) {
    player.goTo(i);
    if (!settle(player, deadline)) return QString("%1: steps[%2]: timed out setting up the step").arg(file).arg(i);
    if (!player.error().isEmpty()) return player.error();
    if (player.current().wait.kind != LessonWait::None) {
      player.performWait();
      if (!settle(player, deadline)) return QString("%1: steps[%2].wait: timed out").arg(file).arg(i);
      if (!player.error().isEmpty()) return player.error();
      if (!player.waitMet())
        return QString("%1: steps[%2].wait: not met after the learner's action: %3").arg(file).arg(i).arg(player.waitStatus());
    }
    if (page) page(i);
  }
  return {};
}

LessonPage capturePage(LessonPlayer& player, QSize size) {
  MainWindow& w = player.window();
  const LessonStep& step = player.current();
  const LessonState st = lessonStateAt(player.lesson(), player.index());
  LessonPage page{step.title, markdownToHtml(fillFigures(step.caption, *w.controller())), step.wait.hint, {}, {}, {}};
  if (st.panel == "code") {
    page.codeLevel = st.level.isEmpty() ? "cuda" : st.level;
    page.code = shownCode(*w.controller(), page.codeLevel);
  }
  QCoreApplication::processEvents();
  const QImage image = st.panel == "graph" ? w.graphView()->renderWhole(size) : w.grab().toImage();
  QBuffer buffer(&page.png);
  buffer.open(QIODevice::WriteOnly);
  image.save(&buffer, "PNG");
  return page;
}

QString lessonHtml(const Lesson& lesson, const std::vector<LessonPage>& pages) {
  QString html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + escaped(lesson.title) +
                 "</title>\n<style>body{font:16px/1.5 sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
                 "img{max-width:100%;border:1px solid #ccc}pre{background:#f5f5f2;padding:.8em;overflow:auto;font-size:13px}"
                 "section{margin-bottom:3em}.hint{background:#eef5ff;padding:.5em .8em;border-left:4px solid #48c}</style>"
                 "</head><body>\n<h1>" + escaped(lesson.title) + "</h1>\n<p>" + escaped(lesson.summary) + "</p>\n";
  for (size_t i = 0; i < pages.size(); ++i) {
    const LessonPage& p = pages[i];
    QString caption = p.caption;
    caption.replace(QRegularExpression(R"(href="(node|panel):[^"]*")"), "href=\"#\"");  // links act in the window only
    html += QString("<section id=\"step-%1\"><h2>%1. %2</h2>\n%3\n").arg(i + 1).arg(escaped(p.title), caption);
    if (!p.hint.isEmpty()) html += "<p class=\"hint\"><b>Your turn:</b> " + escaped(p.hint) + "</p>\n";
    html += QString("<img alt=\"step %1\" src=\"data:image/png;base64,%2\">\n").arg(i + 1).arg(QString::fromLatin1(p.png.toBase64()));
    if (!p.code.isEmpty()) html += "<p>" + escaped(p.codeLevel) + ":</p><pre><code>" + escaped(p.code) + "</code></pre>\n";
    html += "</section>\n";
  }
  return html + "</body></html>\n";
}

int exportLesson(const LessonExport& r) {
  auto failWith = [](const QString& why) { return std::fprintf(stderr, "lesson: %s\n", qPrintable(why)), 2; };
  Lesson lesson;
  try {
    lesson = loadLesson(r.lesson);
  } catch (const Error& e) {
    return failWith(QString::fromStdString(e.what()));
  }
  if (!r.renderDir.isEmpty() && !QDir().mkpath(r.renderDir)) return failWith(r.renderDir + ": cannot create the folder");
  MainWindow w;
  w.sessionFiles()->setPrompts({});
  w.resize(r.size);
  w.show();
  if (!r.backend.isEmpty())
    if (const QString why = chooseBackend(w, r.backend); !why.isEmpty()) return failWith(why);
  LessonPlayer player(w);
  player.setLesson(lesson);
  std::vector<LessonPage> pages;
  QString writeError;
  QString why = playToEnd(player, r.timeoutMs, [&](int i) {
    pages.push_back(capturePage(player, r.size));
    const QString png = QDir(r.renderDir).filePath(QString("step-%1.png").arg(i + 1, 2, 10, QChar('0')));
    if (!r.renderDir.isEmpty() && writeError.isEmpty()) {
      try {
        writeFileAtomically(png.toStdString(), pages.back().png.toStdString());
      } catch (const Error& e) {
        writeError = QString::fromStdString(e.what());
      }
    }
  });
  if (why.isEmpty()) why = writeError;
  if (!why.isEmpty()) return failWith(why);
  try {
    if (!r.html.isEmpty()) writeFileAtomically(r.html.toStdString(), lessonHtml(lesson, pages).toStdString());
  } catch (const Error& e) {
    return failWith(QString::fromStdString(e.what()));
  }
  std::printf("%s: %d steps played%s%s\n", qPrintable(r.lesson), int(pages.size()),
              r.renderDir.isEmpty() ? "" : qPrintable(", pictures in " + r.renderDir), r.html.isEmpty() ? "" : qPrintable(", page " + r.html));
  return 0;
}

}  // namespace tessera::ui
