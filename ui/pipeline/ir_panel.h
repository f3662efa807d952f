#pragma once
// The IR / diff dock: the .tsr text of the current step (big tensors elided), or its line diff against the
// previous step with added lines green and removed lines red (and marked + / -, so colour is not the only cue).
#include <QWidget>

class QPlainTextEdit;
class QCheckBox;

namespace tessera::ui {

class SessionController;

class IrPanel : public QWidget {
  Q_OBJECT
 public:
  IrPanel(SessionController* controller, QWidget* parent = nullptr);
  QPlainTextEdit* editor() const { return text_; }
  void setDiff(bool diff);
  void refresh();

 private:
  SessionController* controller_;
  QPlainTextEdit* text_;
  QCheckBox* diff_;
};

}  // namespace tessera::ui
