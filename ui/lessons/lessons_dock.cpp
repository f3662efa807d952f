#include "ui/lessons/lessons_dock.h"

#include <QComboBox>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHideEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QPushButton>
#include <QShortcut>
#include <QTextBrowser>
#include <QUrl>
#include <QVBoxLayout>

#include "io/atomic_file.h"
#include "ir/error.h"
#include "ui/graph/graph_view.h"
#include "ui/lessons/lesson_record.h"
#include "ui/lessons/lesson_caption.h"
#include "ui/lessons/lesson_player.h"
#include "ui/lessons/presentation.h"
#include "ui/session/session_controller.h"
#include "ui/window/main_window.h"

namespace tessera::ui {

LessonsDock::LessonsDock(MainWindow& window)
    : QWidget(&window), window_(window), player_(new LessonPlayer(window, this)), presentation_(new Presentation(window)),
      lessons_(new QComboBox(this)), steps_(new QListWidget(this)), caption_(new QTextBrowser(this)),
      progress_(new QLabel(this)), wait_(new QLabel(this)), previous_(new QPushButton(tr("◀ Previous"), this)),
      next_(new QPushButton(tr("Next ▶"), this)), restart_(new QPushButton(tr("Restart"), this)),
      showMe_(new QPushButton(tr("Show me"), this)), record_(new QPushButton(tr("● Record step"), this)) {
  setObjectName("lessonsPanel");
  lessons_->addItem(tr("Choose a lesson…"));
  for (const QString& path : shippedLessons()) {
    try {
      lessons_->addItem(loadLesson(path).title, path);
    } catch (const Error& e) {
      lessons_->addItem(tr("(broken) %1").arg(QFileInfo(path).fileName()), path);
    }
  }
  caption_->setOpenLinks(false);
  caption_->setObjectName("lessonCaption");
  wait_->setWordWrap(true);
  showMe_->setToolTip(tr("Do what the step asks, as you would"));
  auto* buttons = new QHBoxLayout;
  for (QPushButton* b : {previous_, next_, restart_, showMe_}) buttons->addWidget(b);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(lessons_);
  layout->addWidget(progress_);
  layout->addWidget(steps_, 1);
  layout->addWidget(caption_, 3);
  layout->addWidget(wait_);
  layout->addLayout(buttons);
  auto* recording = new QHBoxLayout;
  auto* save = new QPushButton(tr("Save recording…"), this);
  record_->setToolTip(tr("Add the window's state as a step of a new lesson"));
  recording->addWidget(record_);
  recording->addWidget(save);
  layout->addLayout(recording);
  connect(record_, &QPushButton::clicked, this, &LessonsDock::recordStep);
  connect(save, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save the recorded lesson"), {}, tr("Lessons (*.json)"));
    if (!path.isEmpty()) saveRecording(path);
  });
  connect(lessons_, &QComboBox::activated, this, [this](int i) {
    if (i > 0) open(lessons_->itemData(i).toString());
  });
  connect(steps_, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) { goTo(steps_->row(item)); });
  connect(previous_, &QPushButton::clicked, this, [this] { goTo(player_->index() - 1); });
  connect(next_, &QPushButton::clicked, this, [this] { goTo(player_->index() + 1); });
  connect(restart_, &QPushButton::clicked, this, [this] { goTo(0); });
  connect(showMe_, &QPushButton::clicked, this, [this] {
    player_->performWait();
    refreshWait();
  });
  connect(caption_, &QTextBrowser::anchorClicked, this, &LessonsDock::onLink);
  connect(player_, &LessonPlayer::stepShown, this, &LessonsDock::onStepShown);
  connect(player_, &LessonPlayer::waitChanged, this, &LessonsDock::refreshWait);
  connect(player_, &LessonPlayer::failed, this, [this](const QString& why) { wait_->setText(tr("⚠ %1").arg(why)); });
  buildKeys();
  registerSessionPart();
  refreshWait();
}

void LessonsDock::buildKeys() {
  auto key = [this](QKeySequence seq, auto slot) {
    auto* s = new QShortcut(seq, &window_);
    s->setContext(Qt::WindowShortcut);
    connect(s, &QShortcut::activated, this, [this, slot] {
      if (player_->hasLesson()) slot();
    });
    return s;
  };
  key(QKeySequence(Qt::Key_PageDown), [this] {
    if (player_->waitMet()) goTo(player_->index() + 1);
  });
  key(QKeySequence(Qt::Key_PageUp), [this] { goTo(player_->index() - 1); });
  key(QKeySequence(Qt::CTRL | Qt::Key_B), [this] { toggleBookmark(); });
  key(QKeySequence(Qt::Key_F7), [this] { setPresenting(!presenting()); });
  // What presenters' clickers and slide habits send besides Page Up/Down; on only while presenting, since the
  // arrows and Space belong to the panels otherwise.
  auto presenterKey = [&](QKeySequence seq, auto slot) {
    presenterKeys_.push_back(key(seq, slot));
    presenterKeys_.back()->setEnabled(false);
  };
  for (Qt::Key k : {Qt::Key_Right, Qt::Key_Down, Qt::Key_Space})
    presenterKey(QKeySequence(k), [this] {
      if (player_->waitMet()) goTo(player_->index() + 1);
    });
  for (Qt::Key k : {Qt::Key_Left, Qt::Key_Up, Qt::Key_Backspace})
    presenterKey(QKeySequence(k), [this] { goTo(player_->index() - 1); });
}

// The buttons are off while the step is being set up, so a second click never skips a step.
void LessonsDock::goTo(int index) {
  player_->goTo(index);
  refreshWait();
}

bool LessonsDock::open(const QString& path) {
  try {
    Lesson lesson = loadLesson(path);
    bookmarks_.clear();
    player_->setLesson(std::move(lesson));
  } catch (const Error& e) {
    caption_->setPlainText(QString::fromStdString(e.what()));
    return false;
  }
  refreshSteps();
  return true;
}

void LessonsDock::refreshSteps() {
  steps_->clear();
  const Lesson& lesson = player_->lesson();
  for (int i = 0; i < int(lesson.steps.size()); ++i) {
    const LessonStep& s = lesson.steps[size_t(i)];
    steps_->addItem(QString("%1%2. %3%4").arg(bookmarks_.contains(i) ? "★ " : "").arg(i + 1).arg(s.title,
                                                                                             s.wait.kind ? tr(" (your turn)") : QString()));
  }
  steps_->setCurrentRow(player_->index());
}

void LessonsDock::onStepShown(int index) {
  const LessonStep& step = player_->current();
  progress_->setText(tr("<b>%1</b> — step %2 of %3").arg(player_->lesson().title).arg(index + 1).arg(player_->count()));
  QString text = "### " + step.title + "\n\n" + fillFigures(step.caption, *window_.controller());
  if (!step.wait.hint.isEmpty()) text += "\n\n**Your turn:** " + step.wait.hint;
  caption_->setMarkdown(text);
  steps_->setCurrentRow(index);
  presentation_->showStep(lessonStateAt(player_->lesson(), index).panel);
  refreshWait();
}

void LessonsDock::refreshWait() {
  const bool has = player_->hasLesson();
  const bool met = has && player_->waitMet();
  const int i = player_->index();
  previous_->setEnabled(has && i > 0);
  next_->setEnabled(met && i + 1 < player_->count());
  restart_->setEnabled(has);
  showMe_->setEnabled(has && player_->current().wait.kind != LessonWait::None && !met);
  if (!has) return wait_->setText(tr("Help ▸ Lessons: pick a lesson above."));
  if (!player_->error().isEmpty()) return wait_->setText(tr("⚠ %1").arg(player_->error()));
  if (player_->busy()) return wait_->setText(tr("Setting up the step…"));
  wait_->setText(met ? (i + 1 < player_->count() ? tr("✓ Next (Page Down) when ready.") : tr("✓ The end of the lesson."))
                     : player_->waitStatus());
  if (met && player_->current().wait.kind != LessonWait::None)  // the learner's figures, now that they acted
    caption_->setMarkdown("### " + player_->current().title + "\n\n" + fillFigures(player_->current().caption, *window_.controller()) +
                          "\n\n✓ " + tr("Done."));
}

// node:ID selects the node (the graph centres on it) and moves the spotlight to it; panel:NAME brings the panel
// forward.
void LessonsDock::onLink(const QUrl& url) {
  if (url.scheme() == "node") {
    window_.controller()->select({Selection::Node, url.path(), {}, {}});
    window_.graphView()->setSpotlight({url.path()});  // the halo follows the link the presenter followed
  }
  if (url.scheme() == "panel")
    if (auto* dock = window_.findChild<QDockWidget*>(dockOfPanel(url.path()))) {
      dock->show();
      dock->raise();
    }
}

void LessonsDock::hideEvent(QHideEvent* event) {
  if (!event->spontaneous()) window_.graphView()->setSpotlight({});
  QWidget::hideEvent(event);
}

void LessonsDock::toggleBookmark() {
  const int i = player_->index();
  if (!bookmarks_.remove(i)) bookmarks_.insert(i);
  refreshSteps();
  window_.controller()->sessionParts()->touch();
}

void LessonsDock::setPresenting(bool on) {
  for (QShortcut* k : presenterKeys_) k->setEnabled(on);
  if (on) presentation_->enter();
  else presentation_->leave();
  if (on && player_->hasLesson()) presentation_->showStep(lessonStateAt(player_->lesson(), player_->index()).panel);
}

bool LessonsDock::presenting() const { return presentation_->active(); }

// The session keeps the lesson, its step and its bookmarks ("view"."lesson", docs/lessons.md).
void LessonsDock::registerSessionPart() {
  window_.controller()->sessionParts()->add(
      "lesson",
      [this]() -> nlohmann::json {
        if (!player_->hasLesson()) return nullptr;
        nlohmann::json marks = nlohmann::json::array();
        for (int b : bookmarks_) marks.push_back(b);
        return {{"file", player_->lesson().path.toStdString()}, {"step", player_->index()}, {"bookmarks", marks}};
      },
      [this](const nlohmann::json& j) {
        if (!j.is_object() || !j.contains("file") || !j["file"].is_string()) return;
        if (!open(QString::fromStdString(j["file"].get<std::string>()))) return;
        for (const auto& b : j.value("bookmarks", nlohmann::json::array()))
          if (b.is_number_integer()) bookmarks_.insert(b.get<int>());
        refreshSteps();
        player_->goTo(j.value("step", 0));
      });
}

void LessonsDock::recordStep() {
  if (!window_.controller()->input()) return wait_->setText(tr("Open a model first, then record its steps."));
  recording_.steps.push_back(captureStep(window_, tr("Step %1").arg(recording_.steps.size() + 1)));
  record_->setText(tr("● Record step (%1)").arg(recording_.steps.size()));
}

bool LessonsDock::saveRecording(const QString& path) {
  if (recording_.steps.empty()) return false;
  recording_.path = QFileInfo(path).absoluteFilePath();
  if (recording_.title.isEmpty()) recording_.title = QFileInfo(path).completeBaseName();
  try {
    writeFileAtomically(path.toStdString(), lessonToJson(recording_));
  } catch (const Error& e) {
    wait_->setText(tr("⚠ %1").arg(QString::fromStdString(e.what())));
    return false;
  }
  wait_->setText(tr("Saved %n step(s) to %1; edit the captions there.", nullptr, int(recording_.steps.size())).arg(path));
  return true;
}

LessonsDock* lessonsDock(MainWindow& window) {
  if (auto* dock = window.findChild<LessonsDock*>()) return dock;
  auto* d = new QDockWidget(QObject::tr("Lessons"), &window);
  d->setObjectName("lessonsDock");
  auto* panel = new LessonsDock(window);
  d->setWidget(panel);
  window.addDockWidget(Qt::LeftDockWidgetArea, d);
  return panel;
}

void addLessonActions(MainWindow& window, QMenu& help) {
  // Made now, hidden, so that its keys work and a session's lesson part finds its owner when a file opens.
  lessonsDock(window)->parentWidget()->hide();
  QAction* a = help.addAction(QObject::tr("&Lessons…"), &window, [&window] {
    LessonsDock* panel = lessonsDock(window);
    auto* dock = qobject_cast<QDockWidget*>(panel->parentWidget());
    dock->show();
    dock->raise();
  });
  a->setObjectName("lessonsAction");
  a->setShortcut(QKeySequence(Qt::Key_F1));
}

}  // namespace tessera::ui
