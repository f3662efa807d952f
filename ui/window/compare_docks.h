#pragma once
// How branches, the compare view and the tensor panel join the main window: the Compare dock (bottom) and the
// Tensor dock (beside the Inspector), the Branch menu (new Ctrl+Shift+N, rename, delete, switch, compare
// Ctrl+Shift+C), the branch box in the toolbar, Run > Keep tensor values and View > Accuracy overlay
// (Ctrl+Shift+A), and the headless `render --view compare`.
#include <QString>

class QMenu;
class QToolBar;
class QWidget;

namespace tessera::ui {

class MainWindow;
class CompareView;

void addCompareDocks(MainWindow& window);
// The Branch menu (after the View menu) and the two run/view toggles, in `run` and `view`.
void addBranchMenu(MainWindow& window, QMenu& run, QMenu& view);
void addBranchBar(MainWindow& window, QToolBar& bar);
// render --view compare: the first branch against the last (the session needs two); busy while it compares.
QWidget* compareViewFor(MainWindow& window);
bool compareBusy(MainWindow& window);
// render --view tensor: runs with values kept, then shows the selected node's first output (default: the first
// kernel's output); busy while it runs.
QWidget* tensorPanelFor(MainWindow& window);
bool tensorBusy(MainWindow& window);
// Compares the current branch with `other` (the first branch that is not current when empty) and shows it.
void compareWith(MainWindow& window, const QString& other = {});

}  // namespace tessera::ui
