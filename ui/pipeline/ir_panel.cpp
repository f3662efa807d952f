#include "ui/pipeline/ir_panel.h"

#include <QCheckBox>
#include <QFontDatabase>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QVBoxLayout>

#include "frontend/text/tsr.h"
#include "ui/models/line_diff.h"
#include "ui/session/session_controller.h"

namespace tessera::ui {
namespace {

class DiffHighlighter : public QSyntaxHighlighter {
 public:
  using QSyntaxHighlighter::QSyntaxHighlighter;
  bool enabled = false;

 protected:
  void highlightBlock(const QString& line) override {
    if (!enabled || line.isEmpty()) return;
    QTextCharFormat f;
    if (line.startsWith("+ ")) f.setBackground(QColor(0xdc, 0xf5, 0xdc));
    else if (line.startsWith("- ")) f.setBackground(QColor(0xfb, 0xdc, 0xdc)), f.setForeground(QColor(0x90, 0x20, 0x20));
    else return;
    setFormat(0, int(line.size()), f);
  }
};

QString irText(const std::shared_ptr<const Graph>& g) {
  if (!g) return {};
  TsrPrintOptions options;
  options.elideAbove = 16;
  return QString::fromStdString(printTsr(*g, options));
}

}  // namespace

IrPanel::IrPanel(SessionController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller), text_(new QPlainTextEdit(this)), diff_(new QCheckBox(tr("Diff against the previous step"), this)) {
  setObjectName("irPanel");
  text_->setObjectName("irText");
  text_->setReadOnly(true);
  text_->setLineWrapMode(QPlainTextEdit::NoWrap);
  text_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  diff_->setObjectName("irDiff");
  diff_->setChecked(true);
  auto* highlighter = new DiffHighlighter(text_->document());
  highlighter->setObjectName("diffHighlighter");
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(diff_);
  layout->addWidget(text_, 1);
  connect(diff_, &QCheckBox::toggled, this, &IrPanel::refresh);
  connect(controller_, &SessionController::stepChanged, this, &IrPanel::refresh);
}

void IrPanel::setDiff(bool diff) { diff_->setChecked(diff); }

void IrPanel::refresh() {
  auto* highlighter = findChild<DiffHighlighter*>("diffHighlighter");
  const int step = controller_->currentStep();
  const QString now = irText(controller_->graphAt(step));
  const bool diff = diff_->isChecked() && step > 0;
  highlighter->enabled = diff;
  if (!diff) {
    text_->setPlainText(now);
    return;
  }
  const QString before = irText(controller_->graphAt(step - 1));
  text_->setPlainText(diffText(diffLines(before.split('\n'), now.split('\n'))));
  // Start at the first change.
  const QTextCursor first = text_->document()->find(QRegularExpression("^[+-] "));
  if (!first.isNull()) {
    text_->setTextCursor(first);
    text_->centerCursor();
  }
}

}  // namespace tessera::ui
