#pragma once
// A line diff for the IR panel: common prefix and suffix trimmed, then a longest-common-subsequence table over
// the middle (bounded: past kMaxCells the middle is shown as all removed then all added).
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
