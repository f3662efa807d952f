#pragma once
// How the Run and Schedule panels join the main window: their docks, their actions in a menu or toolbar, and
// the run's results on the graph (the timing overlay) and in the status bar (backend, device, last run).
class QDockWidget;
class QString;
class QWidget;

namespace tessera::ui {

class MainWindow;

// The Run dock tabbed with `bottomNeighbour`, the Schedule dock beside the Inspector, and the graph overlay.
void addRunDocks(MainWindow& window, QDockWidget* bottomNeighbour);
// Run (F5) and Tune (Ctrl+T), added to a menu or a toolbar (after addRunDocks).
void addRunActions(MainWindow& window, QWidget& menuOrToolBar);
// Run > Host memory limit…: asks for the limit (RunController::setHostMemoryLimit), again while it is not a size.
void askHostMemoryLimit(MainWindow& window);
// Run > CPU threads…: asks how many threads the cpu backend's kernels run with (RunController::setCpuThreads).
void askCpuThreads(MainWindow& window);
// The headless views (ui/window/headless_render.h). run: the Run panel, after a run on the chosen backend (busy until
// it is done); schedule: the Schedule panel on the selection's kernel (busy until it is lowered).
QWidget* runPanelFor(MainWindow& window);
bool runBusy(MainWindow& window);
QWidget* schedulePanelFor(MainWindow& window);
bool scheduleBusy(MainWindow& window);
// Chooses a backend by name; returns why it cannot be chosen ("" when it was).
QString chooseBackend(MainWindow& window, const QString& name);
// The status bar's backend, device and last run follow the run controller (after the status bar exists).
void connectRunStatus(MainWindow& window);

}  // namespace tessera::ui
