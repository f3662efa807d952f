#pragma once
// One level's text in the Levels panel: read-only, monospaced, with the lines of the current selection marked
// (a tinted background and bold text, so colour is not the only cue) and scrolled into view. A click on
// a line reports it, so the panel can select the nodes the line came from.
#include <QPlainTextEdit>
#include <vector>

#include "ui/code/code_levels.h"

namespace tessera::ui {

class RuleHighlighter;

class CodeView : public QPlainTextEdit {
  Q_OBJECT
 public:
  CodeView(Level level, QWidget* parent = nullptr);
  Level level() const { return level_; }
  // Replaces the text; the marked lines are cleared.
  void setLevelText(const LevelText& text);
  const LevelText& levelText() const { return text_; }
  // Marks these 0-based lines and (with `scroll`) brings the first into view; none clears the marks.
  void markLines(const std::vector<int>& lines, bool scroll = true);
  const std::vector<int>& markedLines() const { return marked_; }
  // Moves the cursor to a line and reports it, as a click there would.
  void clickLine(int line);

 signals:
  void lineClicked(int line);

 protected:
  void mouseReleaseEvent(QMouseEvent* event) override;

 private:
  Level level_;
  LevelText text_;
  std::vector<int> marked_;
  RuleHighlighter* highlighter_;
};

}  // namespace tessera::ui
