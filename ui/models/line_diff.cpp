#include "ui/models/line_diff.h"

#include <algorithm>
#include <cstdint>

namespace tessera::ui {
namespace {
constexpr int64_t kMaxCells = 16'000'000;  // 64 MB of uint32 at most
}

std::vector<DiffLine> diffLines(const QStringList& before, const QStringList& after) {
  qsizetype head = 0;
  while (head < before.size() && head < after.size() && before[head] == after[head]) ++head;
  qsizetype tail = 0;
  while (tail < before.size() - head && tail < after.size() - head &&
         before[before.size() - 1 - tail] == after[after.size() - 1 - tail])
    ++tail;
  std::vector<DiffLine> out;
  for (qsizetype i = 0; i < head; ++i) out.push_back({DiffLine::Same, before[i]});
  const qsizetype n = before.size() - head - tail, m = after.size() - head - tail;
  if (int64_t(n + 1) * int64_t(m + 1) > kMaxCells) {
    for (qsizetype i = 0; i < n; ++i) out.push_back({DiffLine::Removed, before[head + i]});
    for (qsizetype j = 0; j < m; ++j) out.push_back({DiffLine::Added, after[head + j]});
  } else {
    // lcs[i][j]: length of the LCS of before[head+i..] and after[head+j..].
    std::vector<uint32_t> lcs(size_t((n + 1) * (m + 1)), 0);
    auto at = [&](qsizetype i, qsizetype j) -> uint32_t& { return lcs[size_t(i * (m + 1) + j)]; };
    for (qsizetype i = n - 1; i >= 0; --i)
      for (qsizetype j = m - 1; j >= 0; --j)
        at(i, j) = before[head + i] == after[head + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    qsizetype i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && before[head + i] == after[head + j]) {
        out.push_back({DiffLine::Same, before[head + i]});
        ++i, ++j;
      } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
        out.push_back({DiffLine::Removed, before[head + i++]});  // removals first, as in unified diffs
      } else {
        out.push_back({DiffLine::Added, after[head + j++]});
      }
    }
  }
  for (qsizetype k = after.size() - tail; k < after.size(); ++k) out.push_back({DiffLine::Same, after[k]});
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
