#include "compare/line_diff.h"

#include <algorithm>
#include <cstdint>

namespace tessera::compare {
namespace {

constexpr int64_t kMaxCells = 16'000'000;  // 64 MB of uint32 at most

using Lines = std::vector<std::string>;

// The middle before[head, head+n) against after[head, head+m), by the LCS table.
void diffMiddle(const Lines& before, const Lines& after, size_t head, size_t n, size_t m, std::vector<DiffLine>& out) {
  if (int64_t(n + 1) * int64_t(m + 1) > kMaxCells) {
    for (size_t i = 0; i < n; ++i) out.push_back({DiffLine::Removed, before[head + i]});
    for (size_t j = 0; j < m; ++j) out.push_back({DiffLine::Added, after[head + j]});
    return;
  }
  // lcs[i][j]: length of the LCS of before[head+i..] and after[head+j..].
  std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (m + 1) + j]; };
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      at(i, j) = before[head + i] == after[head + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
  size_t i = 0, j = 0;
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

}  // namespace

std::vector<DiffLine> diffLines(const Lines& before, const Lines& after) {
  size_t head = 0;
  while (head < before.size() && head < after.size() && before[head] == after[head]) ++head;
  size_t tail = 0;
  while (tail < before.size() - head && tail < after.size() - head &&
         before[before.size() - 1 - tail] == after[after.size() - 1 - tail])
    ++tail;
  std::vector<DiffLine> out;
  for (size_t i = 0; i < head; ++i) out.push_back({DiffLine::Same, before[i]});
  diffMiddle(before, after, head, before.size() - head - tail, after.size() - head - tail, out);
  for (size_t k = after.size() - tail; k < after.size(); ++k) out.push_back({DiffLine::Same, after[k]});
  return out;
}

std::vector<std::string> splitLines(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string diffText(const std::vector<DiffLine>& diff, int context) {
  std::vector<bool> keep(diff.size(), context < 0);
  for (size_t i = 0; i < diff.size() && context >= 0; ++i) {
    if (diff[i].kind == DiffLine::Same) continue;
    const size_t from = i >= size_t(context) ? i - size_t(context) : 0;
    for (size_t k = from; k < std::min(diff.size(), i + size_t(context) + 1); ++k) keep[k] = true;
  }
  std::string text;
  for (size_t i = 0; i < diff.size();) {
    if (!keep[i]) {
      size_t j = i;
      while (j < diff.size() && !keep[j]) ++j;
      text += "@@ " + std::to_string(j - i) + " lines @@\n";
      i = j;
      continue;
    }
    const DiffLine& d = diff[i++];
    text += d.kind == DiffLine::Added ? "+ " : d.kind == DiffLine::Removed ? "- " : "  ";
    text += d.text + '\n';
  }
  return text;
}

}  // namespace tessera::compare
