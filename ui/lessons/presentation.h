#pragma once
// Presentation mode, for teaching and demos: the window full screen with large fonts, the graph in the centre
// and only the docks the step uses (the Lessons dock and the step's panel); leaving it restores the window.
#include <QByteArray>
#include <QFont>
#include <QString>

namespace tessera::ui {

class MainWindow;

class Presentation {
 public:
  explicit Presentation(MainWindow& window) : window_(window) {}
  void enter();
  void leave();
  bool active() const { return active_; }
  // Shows only the Lessons dock and the dock of `panel` (lessonPanels(); "graph": none).
  void showStep(const QString& panel);

 private:
  MainWindow& window_;
  bool active_ = false;
  QByteArray state_;
  QFont font_;
  bool wasFullScreen_ = false;
};

// The dock that shows a lesson panel ("" for the graph, which is the window's centre).
QString dockOfPanel(const QString& panel);

}  // namespace tessera::ui
