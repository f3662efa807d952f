#pragma once
// The Schedule panel: for the kernel of the selection (a node or value selects its group's kernel), its loop
// nest as a tree, a picture of its tiling on the device, and an editor for its template's parameters. An edit
// is a schedule override pushed through the session's undo stack; the kernel is lowered again, regenerated and,
// after a first run, run again in the background. A refused combination shows the schedule's error instead.
#include <QWidget>
#include <memory>

#include "cost/device.h"
#include "kernel/templates/templates.h"

class QComboBox;
class QFormLayout;
class QLabel;
class QListWidget;
class QPushButton;
class QTreeView;

namespace tessera::ui {

class SessionController;
class ScheduleLoopModel;
class SchedulePicture;
struct CodeResult;
struct KernelCode;

class SchedulePanel : public QWidget {
  Q_OBJECT
 public:
  SchedulePanel(SessionController* controller, QWidget* parent = nullptr);
  ScheduleLoopModel* loopModel() const { return loops_; }
  SchedulePicture* picture() const { return picture_; }
  QTreeView* loopView() const { return tree_; }
  QString kernelId() const { return kernelId_; }
  QComboBox* paramBox(const QString& name) const;  // null when the kernel has no such parameter
  QString error() const;                           // the last refused edit, "" when none
  // What choosing a value in a parameter's box does: true when the override was pushed.
  bool editParam(const QString& name, int64_t value);
  // Drops this kernel's schedule override (undoable): back to the template's defaults.
  void resetSchedule();
  // The trace stepper: the loop nest after the first `steps` primitives of the kernel's trace (0: as lowered;
  // -1 or the trace's length: the whole schedule), replayed on a fresh lowering. Returns false (the error
  // shown) when there is no kernel or the prefix does not replay.
  bool showTraceStep(int steps);
  int traceStep() const { return traceStep_; }  // -1: the whole schedule
  QListWidget* traceList() const { return trace_; }

 private:
  void refresh();
  void showKernel(const KernelCode& k);
  void buildEditor(const KernelCode& k);
  void listTrace(const KernelCode& k);
  QString groupOfSelection() const;
  const KernelCode* currentKernel() const;
  const cost::Device& device();

  SessionController* controller_;
  QLabel* title_;
  QTreeView* tree_;
  ScheduleLoopModel* loops_;
  QListWidget* trace_;
  int traceStep_ = -1;
  std::string tracedKey_;  // the trace listed (its kernel's nodes and steps): a refresh of it keeps the step shown
  SchedulePicture* picture_;
  QWidget* editor_;
  QFormLayout* form_;
  QLabel* error_;
  QPushButton* reset_;
  QString kernelId_;
  std::shared_ptr<const CodeResult> code_;
  std::unique_ptr<cost::Device> device_;
};

}  // namespace tessera::ui
