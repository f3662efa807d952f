#pragma once
// The Pipeline dock: the steps list, a slider and ◀ ▶ buttons, all bound to the controller's current step.
#include <QWidget>

class QSlider;
class QTableView;
class QLabel;

namespace tessera::ui {

class SessionController;
class PipelineModel;

class PipelinePanel : public QWidget {
  Q_OBJECT
 public:
  PipelinePanel(SessionController* controller, QWidget* parent = nullptr);
  PipelineModel* model() const { return model_; }
  QTableView* view() const { return view_; }
  QSlider* slider() const { return slider_; }

 private:
  void onCompiled();
  void onStepChanged(int step);

  SessionController* controller_;
  PipelineModel* model_;
  QTableView* view_;
  QSlider* slider_;
  QLabel* caption_;
};

}  // namespace tessera::ui
