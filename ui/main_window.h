#pragma once
// The explorer window. For now: the model's nodes as a table, File → Open (Ctrl+O), recent files, drag and drop,
// and a status bar; the full layout of shared/UI.md grows from here.
#include <QMainWindow>

namespace tessera::ui {

class SessionController;
class NodeTableModel;
struct LoadedModel;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  SessionController* controller() const { return controller_; }
  NodeTableModel* nodeModel() const { return nodes_; }
  void openModel(const QString& path);

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void buildMenus();
  void onModelLoaded(const LoadedModel& result);
  void rememberRecent(const QString& path);
  void rebuildRecentMenu();

  SessionController* controller_;
  NodeTableModel* nodes_;
  class QMenu* recentMenu_ = nullptr;
};

}  // namespace tessera::ui
