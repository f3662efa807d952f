#include "ui/code/syntax_highlight.h"

#include <QColor>

namespace tessera::ui {
namespace {

QTextCharFormat fmt(QColor colour, bool bold = false, bool italic = false) {
  QTextCharFormat f;
  f.setForeground(colour);
  if (bold) f.setFontWeight(QFont::Bold);
  f.setFontItalic(italic);
  return f;
}

// One palette for all three, muted like the graph's hues.
const QColor kKeyword(0x1f, 0x4e, 0x8c), kType(0x2e, 0x7d, 0x6b), kOp(0x8a, 0x3f, 0x97), kNumber(0x9a, 0x5b, 0x13),
    kValue(0x6d, 0x4c, 0x1f), kComment(0x70, 0x78, 0x80), kPreproc(0x7b, 0x1f, 0x4e), kBuiltin(0xa0, 0x30, 0x20);

QString words(const QStringList& list) { return "\\b(" + list.join('|') + ")\\b"; }

}  // namespace

void RuleHighlighter::addRule(const QString& pattern, const QTextCharFormat& format) {
  rules_.push_back({QRegularExpression(pattern), format});
}

void RuleHighlighter::setLineComment(const QString& start, const QTextCharFormat& format) {
  lineComment_ = start;
  commentFormat_ = format;
}

void RuleHighlighter::setBlockComments(const QTextCharFormat& format) {
  blockComments_ = true;
  commentFormat_ = format;
}

void RuleHighlighter::highlightBlock(const QString& text) {
  for (const Rule& rule : rules_)
    for (auto it = rule.pattern.globalMatch(text); it.hasNext();) {
      const QRegularExpressionMatch m = it.next();
      const int part = m.lastCapturedIndex() >= 1 ? 1 : 0;
      setFormat(int(m.capturedStart(part)), int(m.capturedLength(part)), rule.format);
    }
  if (!lineComment_.isEmpty()) {
    // A comment start inside a string literal is rare in generated code; the first one wins.
    const int at = int(text.indexOf(lineComment_));
    if (at >= 0) setFormat(at, int(text.size()) - at, commentFormat_);
  }
  if (!blockComments_) return;
  // State 1: inside a /* */ comment that began on an earlier line.
  setCurrentBlockState(0);
  int start = previousBlockState() == 1 ? 0 : int(text.indexOf("/*"));
  while (start >= 0) {
    const int end = int(text.indexOf("*/", start + (previousBlockState() == 1 && start == 0 ? 0 : 2)));
    const int length = end < 0 ? int(text.size()) - start : end + 2 - start;
    if (end < 0) setCurrentBlockState(1);
    setFormat(start, length, commentFormat_);
    start = end < 0 ? -1 : int(text.indexOf("/*", start + length));
  }
}

IrHighlighter::IrHighlighter(QTextDocument* document) : RuleHighlighter(document) {
  setObjectName("irHighlighter");
  addRule(R"(\b-?\d+(\.\d+)?([eE][-+]?\d+)?\b)", fmt(kNumber));
  addRule(words({"graph", "input", "const", "node", "output", "kernel", "for", "in", "bind", "reduce", "unrolled",
                 "vectorized", "parallel", "alloc", "if", "sync", "block", "warp", "pipeline", "param", "reads",
                 "writes", "tmp", "out", "async", "select", "fused"}),
          fmt(kKeyword, true));
  addRule(R"(\b(bf16|f16|f32|f64|i8|i16|i32|i64|u8|u16|u32|u64|bool)\b)", fmt(kType));
  addRule(R"(\b(global|shared|register)\b)", fmt(kType, false, true));
  addRule(R"(\b(blockIdx|threadIdx)\.[xyz]\b)", fmt(kBuiltin));
  addRule(R"(%[A-Za-z0-9_./\-]+)", fmt(kValue));
  addRule(R"(= ([A-Z][A-Za-z0-9]*)\b)", fmt(kOp, true));  // node x = MatMul(...), fc1 = MatMul
  setLineComment("#", fmt(kComment, false, true));
}

CppHighlighter::CppHighlighter(QTextDocument* document) : RuleHighlighter(document) {
  setObjectName("cppHighlighter");
  addRule(R"(\b\d+(\.\d*)?([eE][-+]?\d+)?[fFuUlL]*\b|\b0x[0-9a-fA-F]+[uU]?\b)", fmt(kNumber));
  addRule(words({"for", "if", "else", "return", "const", "static", "inline", "extern", "struct", "typedef",
                 "using", "namespace", "template", "auto", "while", "do", "break", "continue", "sizeof",
                 "static_cast", "reinterpret_cast", "constexpr", "restrict", "__restrict__"}),
          fmt(kKeyword, true));
  addRule(words({"void", "float", "double", "int", "unsigned", "long", "short", "char", "bool", "int8_t", "int16_t",
                 "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "size_t", "__half",
                 "__nv_bfloat16", "half"}),
          fmt(kType));
  addRule(R"(\b(__global__|__device__|__host__|__shared__|__forceinline__|__launch_bounds__|__syncthreads|__syncwarp|__shfl_xor_sync|threadIdx|blockIdx|blockDim|gridDim)\b)",
          fmt(kBuiltin));
  addRule(R"("(\\.|[^"\\])*")", fmt(kNumber));
  addRule(R"(^\s*#\s*\w+.*$)", fmt(kPreproc));
  setLineComment("//", fmt(kComment, false, true));
  setBlockComments(fmt(kComment, false, true));
}

PtxHighlighter::PtxHighlighter(QTextDocument* document) : RuleHighlighter(document) {
  setObjectName("ptxHighlighter");
  addRule(R"(\b-?\d+(\.\d+)?\b|\b0[fFdD][0-9a-fA-F]+\b)", fmt(kNumber));
  addRule(R"(^\s+([a-z][a-z0-9_]*(\.[a-z0-9_]+)*))", fmt(kOp, true));  // the instruction: ld.global.nc.f32
  addRule(R"((?:^|\s)(\.[a-z_]+))", fmt(kKeyword, true));               // directives and state spaces
  addRule(R"(%[a-z]+[0-9]*(\.[xyz])?)", fmt(kValue));                   // registers and special registers
  addRule(R"(^\s*(\$?[A-Za-z_][A-Za-z0-9_$]*:))", fmt(kPreproc));        // labels
  setLineComment("//", fmt(kComment, false, true));
}

RuleHighlighter* highlighterFor(Level level, QTextDocument* document) {
  switch (level) {
    case Level::Cuda:
    case Level::Cpp: return new CppHighlighter(document);
    case Level::Ptx: return new PtxHighlighter(document);
    default: return new IrHighlighter(document);
  }
}

}  // namespace tessera::ui
