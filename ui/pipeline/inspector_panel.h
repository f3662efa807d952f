#pragma once
// The Inspector dock: the selected node, value or group at the current step — attributes, shapes, dtypes,
// bytes, FLOPs, the fusion decisions involving it with rule and reason, and the group's estimated cost.
#include <QString>
#include <QTextBrowser>

namespace tessera::ui {

class SessionController;
struct Selection;

// The inspector's text for a selection (also used headless and by tests).
QString inspectorHtml(const SessionController& controller, const Selection& selection);

class InspectorPanel : public QTextBrowser {
  Q_OBJECT
 public:
  InspectorPanel(SessionController* controller, QWidget* parent = nullptr);
  void refresh();

 private:
  SessionController* controller_;
};

}  // namespace tessera::ui
