#pragma once
// The Run panel: the backend (reference, cpu, cuda with its device or why it cannot run), Run (F5) and Tune
// (Ctrl+T) with progress and cancel, a summary against the unfused baseline and the previous run, and the
// results as a table, a bar chart of time per kernel and a roofline. Everything goes through RunController.
#include <QWidget>
#include <memory>

class QAction;
class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTableView;
class QTabWidget;

namespace tessera::ui {

class SessionController;
class RunController;
class RunTableModel;
class KernelTimesChart;
class RooflineChart;
struct RunResult;

class RunPanel : public QWidget {
  Q_OBJECT
 public:
  RunPanel(SessionController* controller, QWidget* parent = nullptr);
  RunTableModel* model() const { return model_; }
  QTableView* table() const { return table_; }
  QComboBox* backendBox() const { return backend_; }
  QPushButton* runButton() const { return run_; }
  QPushButton* tuneButton() const { return tune_; }
  KernelTimesChart* timesChart() const { return times_; }
  RooflineChart* roofline() const { return roofline_; }
  QTabWidget* tabs() const { return tabs_; }
  QString summary() const;
  // Run (F5) and Tune (Ctrl+T) as actions for the menus and the toolbar.
  QAction* runAction() const { return runAction_; }
  QAction* tuneAction() const { return tuneAction_; }

 private:
  void setUpWidgets();
  void layOut();
  void connectRuns();
  void fillBackends();
  void chooseBackend(int index);  // an entry of the list, or "Add remote worker…"
  void showRun(std::shared_ptr<const RunResult> run);
  void updateButtons();
  QString comparison(const RunResult& run) const;

  SessionController* controller_;
  RunController* runs_;
  QComboBox* backend_;
  QPushButton *run_, *tune_, *cancel_, *reconnect_;
  QProgressBar *runProgress_, *tuneProgress_;
  QLabel* summary_;
  QLabel* notes_;
  QTabWidget* tabs_;
  QTableView* table_;
  RunTableModel* model_;
  KernelTimesChart* times_;
  RooflineChart* roofline_;
  QAction *runAction_, *tuneAction_;
};

}  // namespace tessera::ui
