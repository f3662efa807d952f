#pragma once
// The File menu's session and export actions (Save Ctrl+S, Save As Ctrl+Shift+S, embed the model, Export ▸
// graph as SVG / PNG / DOT, results as CSV / JSON, run as Chrome trace). The file dialogs are here; the work is
// in SessionFiles and the export_* functions, which tests call directly.
class QMenu;

namespace tessera::ui {

class MainWindow;

// Adds the actions to `file` (after what is there); the Save action is named "saveAction" for the toolbar.
void addSessionActions(MainWindow& window, QMenu& file);

}  // namespace tessera::ui
