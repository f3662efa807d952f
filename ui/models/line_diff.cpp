#include "ui/models/line_diff.h"

#include "compare/line_diff.h"

namespace tessera::ui {
namespace {

std::vector<std::string> toStd(const QStringList& lines) {
  std::vector<std::string> out;
  out.reserve(size_t(lines.size()));
  for (const QString& l : lines) out.push_back(l.toStdString());
  return out;
}

}  // namespace

std::vector<DiffLine> diffLines(const QStringList& before, const QStringList& after) {
  std::vector<DiffLine> out;
  for (const compare::DiffLine& d : compare::diffLines(toStd(before), toStd(after)))
    out.push_back({DiffLine::Kind(d.kind), QString::fromStdString(d.text)});
  return out;
}

QString diffText(const std::vector<DiffLine>& diff) {
  QString text;
  for (const DiffLine& d : diff) {
    text += d.kind == DiffLine::Added ? QStringLiteral("+ ") : d.kind == DiffLine::Removed ? QStringLiteral("- ") : QStringLiteral("  ");
    text += d.text;
    text += '\n';
  }
  return text;
}

}  // namespace tessera::ui
