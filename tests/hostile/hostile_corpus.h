#pragma once
// The hostile-inputs corpus (issue 17 item 5), made at test time into a folder rather than committed as blobs:
// truncated and random files, cycles, huge and negative dims, external data leaving the model's folder, deeply
// nested subgraphs, giant attributes, a million nodes, NaN and Inf constants, and sessions whose schedules lie
// outside their template's space or whose overrides name missing nodes. The CLI test (test_hostile_cli) and the
// window's (test_hostile_gui) read the same list.
#include <string>
#include <vector>

namespace tessera::hostile {

struct HostileFile {
  std::string name;   // the file's name in the folder
  std::string path;   // where it was written
  std::string fault;  // what the one-line message must say besides the file's name
  std::vector<std::string> command;  // tessera-cli's arguments before the path ("info", or "session", "--check")
};

// Writes every file of the corpus into `dir` (which must exist) and lists them.
std::vector<HostileFile> writeHostileCorpus(const std::string& dir);

// The valid extremes: a model nested 100 If bodies deep, one of a million nodes, one whose constants are NaN and
// Inf. They are not refused: they open and run (written into `dir` too).
std::vector<HostileFile> writeValidExtremes(const std::string& dir);

}  // namespace tessera::hostile
