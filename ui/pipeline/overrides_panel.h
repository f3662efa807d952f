#pragma once
// The Overrides dock: the active overrides with their status (stale and refused ones flagged with the rule),
// a button to remove one, and a checkbox per pass of the pipeline (unchecking adds a disable-pass override).
#include <QWidget>

class QListWidget;
class QTableView;

namespace tessera::ui {

class SessionController;
class OverridesModel;

class OverridesPanel : public QWidget {
  Q_OBJECT
 public:
  OverridesPanel(SessionController* controller, QWidget* parent = nullptr);
  OverridesModel* model() const { return model_; }
  QListWidget* passes() const { return passes_; }

 private:
  void refresh();
  void removeSelected();

  SessionController* controller_;
  OverridesModel* model_;
  QTableView* view_;
  QListWidget* passes_;
};

}  // namespace tessera::ui
