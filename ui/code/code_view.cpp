#include "ui/code/code_view.h"

#include <QFontDatabase>
#include <QMouseEvent>
#include <QTextBlock>

#include "ui/code/syntax_highlight.h"

namespace tessera::ui {
namespace {
// Above this many lines the text is shown plain: highlighting runs over the whole document at once.
constexpr int kHighlightLineLimit = 60000;
}  // namespace

CodeView::CodeView(Level level, QWidget* parent) : QPlainTextEdit(parent), level_(level) {
  setObjectName(levelName(level) + "Text");
  setReadOnly(true);
  setLineWrapMode(QPlainTextEdit::NoWrap);
  setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
  highlighter_ = highlighterFor(level, document());
}

void CodeView::setLevelText(const LevelText& text) {
  text_ = text;
  marked_.clear();
  setExtraSelections({});
  // Re-attaching a highlighter defers its work to the event loop: only switch when the size class changes.
  QTextDocument* wanted = int(text.lineNodes.size()) <= kHighlightLineLimit ? document() : nullptr;
  if (highlighter_->document() != wanted) highlighter_->setDocument(wanted);
  setPlainText(text.text.isEmpty() ? text.note : text.text);
}

void CodeView::markLines(const std::vector<int>& lines, bool scroll) {
  marked_ = lines;
  QList<QTextEdit::ExtraSelection> marks;
  for (int line : lines) {
    const QTextBlock block = document()->findBlockByNumber(line);
    if (!block.isValid()) continue;
    QTextEdit::ExtraSelection mark;
    mark.format.setBackground(QColor(0xff, 0xf0, 0xb3));
    mark.format.setProperty(QTextFormat::FullWidthSelection, true);
    mark.format.setFontWeight(QFont::Bold);
    mark.cursor = QTextCursor(block);
    mark.cursor.movePosition(QTextCursor::EndOfBlock, QTextCursor::KeepAnchor);
    marks << mark;
  }
  setExtraSelections(marks);
  if (lines.empty() || !scroll) return;
  // The first marked line in the middle of the view, so its context shows.
  const QTextBlock first = document()->findBlockByNumber(lines.front());
  if (!first.isValid()) return;
  QTextCursor cursor(first);
  setTextCursor(cursor);
  centerCursor();
}

void CodeView::clickLine(int line) {
  const QTextBlock block = document()->findBlockByNumber(line);
  if (!block.isValid()) return;
  setTextCursor(QTextCursor(block));
  emit lineClicked(line);
}

void CodeView::mouseReleaseEvent(QMouseEvent* event) {
  QPlainTextEdit::mouseReleaseEvent(event);
  // A drag selects text to copy; only a plain click picks a line.
  if (event->button() == Qt::LeftButton && !textCursor().hasSelection())
    emit lineClicked(cursorForPosition(event->position().toPoint()).blockNumber());
}

}  // namespace tessera::ui
