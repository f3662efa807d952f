#pragma once
// The compare view: two branches of the session side by side, or a branch against another model or session file (core/compare computes it on a worker, the same
// Comparison `tessera-cli compare` prints). Two graphs with synchronized selection, pan and layer expansion
// (nodes matched by id, name, provenance or mapping); B's graph marks what B added (green), changed (amber)
// and dropped (dashed red ghosts); the runs joined per group change with a chart of the deltas; the text diffs of
// every level (graph, fused, kernel IR, CUDA, C++; PTX when that level is picked, as it compiles every kernel with
// NVRTC); the summary.
#include <QWidget>
#include <memory>

#include "compare/compare.h"
#include "ui/common/background_job.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QTableWidget;

namespace tessera::ui {

class SessionController;
class GraphView;
class DeltaChart;

class CompareView : public QWidget {
  Q_OBJECT
 public:
  explicit CompareView(SessionController* controller, QWidget* parent = nullptr);

  // Compares branch `a` with branch `b` (names from SessionController::branchNames) on a worker.
  void compareBranches(const QString& a, const QString& b);
  // Compares branch `a` with a model or session file (`PATH` or `SESSION.tessera#BRANCH`, as `tessera-cli
  // compare` takes): another export of the model, a colleague's session. B's run is the one stored, if any.
  void compareWithFile(const QString& a, const QString& ref);
  // The user's node mapping, "A_NODE=B_NODE, ..." (tried before ids, names and provenance).
  QLineEdit* mappingEdit() const { return mapping_; }
  // The pass step each side is compared at: "last" (the whole pipeline, kernels and runs) or a pass of the
  // current compile, where that side's pipeline stops (one branch against itself steps apart, as the CLI's
  // --step-a/--step-b).
  QComboBox* stepPick(bool sideB) const { return sideB ? stepB_ : stepA_; }
  bool busy() const { return busy_; }
  std::shared_ptr<const compare::Comparison> comparison() const { return result_; }
  GraphView* left() const { return left_; }
  GraphView* right() const { return right_; }
  QTableWidget* deltaTable() const { return table_; }
  // The text diffs of the level picked in levelPick() ("all levels": each one after the other).
  QPlainTextEdit* diffText() const { return diff_; }
  QComboBox* levelPick() const { return levelPick_; }
  // Selects node `id` of side A (b: of side B) and its match on the other side; false when `id` is not there.
  bool selectNode(const QString& id, bool sideB);
  QString error() const { return error_; }

 signals:
  void compared();  // comparison() changed (or error() says why not)

 private:
  QWidget* makeLowerTabs();
  void refreshBranches();
  void refreshSteps();
  void startCompare(compare::Side a, compare::Side b, std::vector<std::string> notes);
  void fail(const QString& why);
  void chooseFile();
  void accept(std::shared_ptr<const compare::Comparison> c);
  void showGraphs(const compare::Comparison& c);
  void showTable(const compare::Comparison& c);
  void showDiff();
  void pickLevel();
  void syncPan(GraphView* from, GraphView* to);
  void syncLayers(GraphView* from, GraphView* to);

  SessionController* controller_;
  QComboBox *pickA_, *pickB_, *levelPick_, *stepA_, *stepB_;
  QLineEdit* mapping_;
  QString fileB_;  // the last file compared as B ("" when B is a branch): PTX recompares it
  std::shared_ptr<const Graph> modelB_;  // B's model as read (its value names), the session's for a branch
  QLabel* summary_;
  GraphView *left_, *right_;
  QTableWidget* table_;
  DeltaChart* chart_;
  QPlainTextEdit* diff_;
  std::shared_ptr<const compare::Comparison> result_;
  QString error_;
  bool busy_ = false, syncing_ = false, withPtx_ = false;
  BackgroundJob<std::shared_ptr<const compare::Comparison>> job_;
};

}  // namespace tessera::ui
