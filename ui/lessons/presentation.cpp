#include "ui/lessons/presentation.h"

#include <QDockWidget>
#include <map>

#include "ui/graph/graph_view.h"
#include "ui/window/main_window.h"

namespace tessera::ui {

QString dockOfPanel(const QString& panel) {
  static const std::map<QString, QString> docks{{"pipeline", "pipelineDock"}, {"inspector", "inspectorDock"},
                                                {"overrides", "overridesDock"}, {"code", "levelsDock"},
                                                {"schedule", "scheduleDock"}, {"run", "runDock"}};
  auto it = docks.find(panel);
  return it == docks.end() ? QString() : it->second;
}

void Presentation::enter() {
  if (active_) return;
  active_ = true;
  state_ = window_.saveState();
  font_ = window_.font();
  wasFullScreen_ = window_.isFullScreen();
  QFont large = font_;
  large.setPointSizeF(font_.pointSizeF() * 1.6);  // readable from the back of a room
  window_.setFont(large);
  window_.showFullScreen();
}

void Presentation::leave() {
  if (!active_) return;
  active_ = false;
  window_.setFont(font_);
  if (!wasFullScreen_) window_.showNormal();
  window_.restoreState(state_);
}

void Presentation::showStep(const QString& panel) {
  if (!active_) return;
  const QString keep = dockOfPanel(panel);
  for (QDockWidget* d : window_.findChildren<QDockWidget*>()) {
    const bool shown = d->objectName() == "lessonsDock" || d->objectName() == keep;
    d->setVisible(shown);
    if (shown) d->raise();
  }
  window_.graphView()->fit();
}

}  // namespace tessera::ui
