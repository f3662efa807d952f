#pragma once
// The Lessons dock: the shipped lessons, the steps of the one playing (bookmarks starred), the caption with its
// figures and links, what the step waits for, and Previous / Next / Restart / Show me. Keys while a lesson
// plays: Page Down and Page Up (a presenter's clicker sends them) go to the next and previous step, Ctrl+B
// bookmarks the step, F7 toggles presentation mode. The lesson and step are kept in the session file.
#include <QSet>
#include <QWidget>
#include <vector>

#include "ui/lessons/lesson.h"

class QComboBox;
class QLabel;
class QListWidget;
class QMenu;
class QPushButton;
class QTextBrowser;
class QShortcut;
class QUrl;

namespace tessera::ui {

class LessonPlayer;
class MainWindow;
class Presentation;

class LessonsDock : public QWidget {
  Q_OBJECT
 public:
  explicit LessonsDock(MainWindow& window);
  LessonPlayer* player() const { return player_; }
  // Loads a lesson file and shows its first step; false (with the error shown) when the file is wrong.
  bool open(const QString& path);
  QTextBrowser* captionView() const { return caption_; }
  QPushButton* nextButton() const { return next_; }
  QListWidget* stepList() const { return steps_; }
  const QSet<int>& bookmarks() const { return bookmarks_; }
  void toggleBookmark();
  void setPresenting(bool on);
  // Recording: the window's state appended as a step; saved as a lesson file (captions edited after).
  void recordStep();
  bool saveRecording(const QString& path);
  int recordedSteps() const { return int(recording_.steps.size()); }
  bool presenting() const;

 protected:
  void hideEvent(QHideEvent* event) override;  // the lesson put away: its spotlight goes too

 private:
  void buildKeys();
  void goTo(int index);
  void onStepShown(int index);
  void refreshSteps();
  void refreshWait();
  void onLink(const QUrl& url);
  void registerSessionPart();

  MainWindow& window_;
  LessonPlayer* player_;
  Presentation* presentation_;
  QComboBox* lessons_;
  QListWidget* steps_;
  QTextBrowser* caption_;
  QLabel* progress_;
  QLabel* wait_;
  QPushButton *previous_, *next_, *restart_, *showMe_;
  QSet<int> bookmarks_;
  Lesson recording_;
  QPushButton* record_;
  std::vector<QShortcut*> presenterKeys_;  // on while presenting (buildKeys)
};

// Help ▸ Lessons: the dock (made on first use) brought forward; added to `help` by the window.
void addLessonActions(MainWindow& window, QMenu& help);
LessonsDock* lessonsDock(MainWindow& window);

}  // namespace tessera::ui
