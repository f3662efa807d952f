// tessera-cli lesson: a lesson played to its end without a display (ui/lessons/lesson_export.h): every step set
// up, the learner's actions performed and checked; its pictures as PNG and the whole lesson as one HTML page.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "app/cli/commands.h"

#ifdef TESSERA_HAS_GUI
#include "app/cli/headless_app.h"

#include "ui/lessons/lesson_export.h"
#endif

namespace tessera::cli {
namespace {

struct LessonArgs {
  std::string lesson, renderDir, html, backend;
  int width = 1600, height = 1000;
};

#ifdef TESSERA_HAS_GUI
int playLesson(const LessonArgs& args) {
  auto app = headlessApp();
  ui::LessonExport r;
  r.lesson = QString::fromStdString(args.lesson);
  r.renderDir = QString::fromStdString(args.renderDir);
  r.html = QString::fromStdString(args.html);
  r.size = QSize(args.width, args.height);
  r.backend = QString::fromStdString(args.backend);
  return ui::exportLesson(r);
}
#else
int playLesson(const LessonArgs&) {
  std::fprintf(stderr, "error: lesson: this tessera-cli was built without the window (TESSERA_BUILD_GUI=OFF)\n");
  return 2;
}
#endif

}  // namespace

void addLessonCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand("lesson", "Play a lesson to its end (no display needed): check it, render its steps, export it as HTML");
  auto args = std::make_shared<LessonArgs>();
  cmd->add_option("LESSON", args->lesson, "Lesson file (lessons/*.json, docs/lessons.md)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--render", args->renderDir, "Folder for each step's picture (step-01.png, ...)");
  cmd->add_option("--html", args->html, "Write the lesson as one self-contained HTML page");
  cmd->add_option("--backend", args->backend, "Where the steps run when the lesson names no backend: cpu (the default) or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--width", args->width, "Picture width in pixels")->check(CLI::Range(320, 8192))->capture_default_str();
  cmd->add_option("--height", args->height, "Picture height in pixels")->check(CLI::Range(240, 8192))->capture_default_str();
  cmd->callback([args, &exitCode] { exitCode = playLesson(*args); });
}

}  // namespace tessera::cli
