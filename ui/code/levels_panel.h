#pragma once
// The Levels dock: the last compile seen at every level — graph IR, fused graph, kernel IR, CUDA C++, C++ and
// PTX — one tab each, highlighted, beside a table of the kernels. The shared selection is marked in every level
// (a node: its line, its group, its kernel's statements, its source lines, its PTX instructions) and scrolled
// to; a click on a line selects the nodes it came from. Lowering, code generation and PTX run on workers
// through SessionController::code(), and only while the panel is shown (PTX only while its tab is).
#include <QWidget>
#include <array>
#include <memory>

#include "ui/code/code_levels.h"

class QLabel;
class QMainWindow;
class QProgressBar;
class QTabWidget;
class QTableView;

namespace tessera::ui {

class SessionController;
class CodeView;
class CodeKernelModel;
struct Selection;

class LevelsPanel : public QWidget {
  Q_OBJECT
 public:
  LevelsPanel(SessionController* controller, QWidget* parent = nullptr);
  CodeView* view(Level level) const { return views_[size_t(level)]; }
  Level level() const;
  void setLevel(Level level);
  CodeKernelModel* kernelModel() const { return model_; }
  QTableView* kernelTable() const { return table_; }
  QLabel* statusLabel() const { return status_; }
  // On screen with the level it shows still being computed (the kernels, or the PTX on the PTX tab).
  bool waiting() const;

 protected:
  void showEvent(QShowEvent* event) override;
  bool event(QEvent* event) override;

 private:
  // Shown and, in a tabbed dock area, the current tab: only then is there anything worth computing.
  bool onScreen() const;
  void onDockVisibility(bool visible);
  void onCompiled();
  void request();
  void showKernels(std::shared_ptr<const CodeResult> result);
  void showPtx(std::shared_ptr<const PtxResult> result);
  void onProgress(Level level, int done, int total);
  void markSelection(const Selection& selection);
  void onLineClicked(CodeView* view, int line);

  SessionController* controller_;
  QTabWidget* tabs_;
  std::array<CodeView*, kLevelCount> views_{};
  CodeKernelModel* model_;
  QTableView* table_;
  QLabel* status_;
  QProgressBar* progress_;
  std::shared_ptr<const CodeResult> shown_;
  CodeView* clicked_ = nullptr;
  bool dockVisible_ = true;  // from QDockWidget::visibilityChanged (false while another tab covers it)  // the view a line click came from: it keeps its scroll position
};

// For `tessera-cli render --view code`: the window's Levels panel brought forward at the CUDA tab (lowering
// starts), and whether that lowering is still running.
QWidget* levelsPanelFor(QMainWindow& window);
bool levelsBusy(QMainWindow& window);

}  // namespace tessera::ui
