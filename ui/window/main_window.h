#pragma once
// The explorer window (layout and keys from shared/UI.md): the graph in the centre; Pipeline, Overrides,
// Inspector, IR / diff, Nodes and Log as docks whose arrangement is remembered; File, Edit, View and Run
// menus; a status bar with the model, backend, device and last compile, and progress with a cancel button.
#include <QByteArray>
#include <QMainWindow>
#include <memory>

#include "ir/graph.h"

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QToolButton;

namespace tessera::ui {

class SessionController;
class NodeTableModel;
class GraphView;
class PipelinePanel;
class IrPanel;
class InspectorPanel;
class OverridesPanel;
class SessionFiles;
struct LoadedModel;
struct Selection;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  SessionController* controller() const { return controller_; }
  NodeTableModel* nodeModel() const { return nodes_; }
  GraphView* graphView() const { return graph_; }
  PipelinePanel* pipelinePanel() const { return pipeline_; }
  IrPanel* irPanel() const { return ir_; }
  InspectorPanel* inspector() const { return inspector_; }
  OverridesPanel* overridesPanel() const { return overrides_; }
  QLineEdit* searchBox() const { return search_; }
  SessionFiles* sessionFiles() const { return files_; }
  // Opens a model (.onnx, .tsr) or a session (.tessera).
  void openModel(const QString& path);
  // The status bar: a transient message; the backend and device; the last run (the run panel feeds these).
  void showStatus(const QString& message, int timeoutMs = 5000);
  void setBackendStatus(const QString& backend, const QString& device);
  void setLastRunStatus(const QString& text);
  // True once the compile and the layout of the current step are both done.
  bool idle() const;

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void closeEvent(QCloseEvent* event) override;

 private:
  // F11: hides every dock (the graph fills the window), or brings them back as they were.
  void toggleGraphOnly();
  void buildDocks();
  void buildMenus();
  void buildFileMenu();
  void buildEditMenu();
  void buildViewMenu();
  void buildRunMenu();
  void buildToolBar();
  void buildStatusBar();
  void onModelLoaded(const LoadedModel& result);
  void onSelectionChanged(const Selection& selection);
  void showCurrentStep();
  void log(const QString& line);
  void rememberRecent(const QString& path);
  void rebuildRecentMenu();

  SessionController* controller_;
  NodeTableModel* nodes_;
  GraphView* graph_;
  PipelinePanel* pipeline_;
  IrPanel* ir_;
  InspectorPanel* inspector_;
  OverridesPanel* overrides_;
  QPlainTextEdit* log_;
  SessionFiles* files_;
  QLineEdit* search_ = nullptr;
  class QMenu* recentMenu_ = nullptr;
  class QMenu* viewMenu_ = nullptr;
  QLabel* modelLabel_ = nullptr;
  QLabel* backendLabel_ = nullptr;
  QLabel* lastRunLabel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QToolButton* cancel_ = nullptr;
  std::shared_ptr<const Graph> shownModel_;  // to tell a newly opened model from a recompile
  QByteArray graphOnlyState_;  // the docks as they were before F11; empty: not in graph-only mode
};

}  // namespace tessera::ui
