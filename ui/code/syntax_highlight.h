#pragma once
// Syntax highlighting for the Levels panel: one highlighter for Tessera's own texts (.tsr graph IR, the fused
// graph and kernel IR), one for C++ and CUDA C++, one for PTX. All three are a list of (pattern, format) rules
// applied in order, then line comments, then (C++ only) block comments that span lines.
#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>
#include <vector>

#include "ui/code/code_levels.h"

namespace tessera::ui {

class RuleHighlighter : public QSyntaxHighlighter {
  Q_OBJECT
 public:
  using QSyntaxHighlighter::QSyntaxHighlighter;

 protected:
  void addRule(const QString& pattern, const QTextCharFormat& format);
  void setLineComment(const QString& start, const QTextCharFormat& format);
  void setBlockComments(const QTextCharFormat& format);  // /* ... */
  void highlightBlock(const QString& text) override;

 private:
  struct Rule {
    QRegularExpression pattern;  // capture 1, when there is one, is the part to format
    QTextCharFormat format;
  };
  std::vector<Rule> rules_;
  QString lineComment_;
  QTextCharFormat commentFormat_;
  bool blockComments_ = false;
};

class IrHighlighter : public RuleHighlighter {
  Q_OBJECT
 public:
  explicit IrHighlighter(QTextDocument* document);
};

class CppHighlighter : public RuleHighlighter {
  Q_OBJECT
 public:
  explicit CppHighlighter(QTextDocument* document);
};

class PtxHighlighter : public RuleHighlighter {
  Q_OBJECT
 public:
  explicit PtxHighlighter(QTextDocument* document);
};

// The highlighter for a level's text, parented to the document.
RuleHighlighter* highlighterFor(Level level, QTextDocument* document);

}  // namespace tessera::ui
