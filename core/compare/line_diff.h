#pragma once
// A line diff for IR texts (the IR panel, the compare view, `tessera-cli compare`): common prefix and suffix
// trimmed, then a longest-common-subsequence table over the middle (bounded: past kMaxCells the middle is shown
// as all removed then all added).
#include <string>
#include <string_view>
#include <vector>

namespace tessera::compare {

struct DiffLine {
  enum Kind { Same, Added, Removed };
  Kind kind = Same;
  std::string text;
};

std::vector<DiffLine> diffLines(const std::vector<std::string>& before, const std::vector<std::string>& after);
// The text split at '\n' (a final newline makes no empty last line).
std::vector<std::string> splitLines(std::string_view text);
// "+ line" / "- line" / "  line", one per DiffLine; with `context` >= 0 only changed lines and that many around
// them, the gaps as "@@ N lines @@".
std::string diffText(const std::vector<DiffLine>& diff, int context = -1);

}  // namespace tessera::compare
