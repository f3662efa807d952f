#pragma once
// Atomic file writes: a temporary file in the same folder, fsync, then rename over the target, so a reader
// (or a crash) sees either the old file or the whole new one.
#include <cstdint>
#include <string>

namespace tessera {

// Throws Error "PATH: cannot write: REASON"; the old file, if any, is left as it was.
void writeFileAtomically(const std::string& path, const std::string& text);
// Throws Error "PATH: cannot open"; refuses files over `maxBytes`.
std::string readWholeFile(const std::string& path, int64_t maxBytes);

}  // namespace tessera
