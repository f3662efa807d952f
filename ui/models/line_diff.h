#pragma once
// The IR panel's line diff in Qt strings: core/compare/line_diff.h's, converted.
#include <QString>
#include <QStringList>
#include <vector>

namespace tessera::ui {

struct DiffLine {
  enum Kind { Same, Added, Removed };
  Kind kind = Same;
  QString text;
};

std::vector<DiffLine> diffLines(const QStringList& before, const QStringList& after);
// "+ line" / "- line" / "  line", one per DiffLine.
QString diffText(const std::vector<DiffLine>& diff);

}  // namespace tessera::ui
