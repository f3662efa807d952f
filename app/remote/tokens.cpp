#include "app/remote/tokens.h"

#include <sys/stat.h>

#include <sstream>

#include "io/atomic_file.h"
#include "ir/error.h"

namespace tessera::remote {
namespace {

constexpr size_t kMinTokenLength = 16;

bool sameText(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

}  // namespace

Tokens Tokens::load(const std::string& path) {
  Tokens t;
  std::istringstream in(readWholeFile(path, 1 << 20));
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::istringstream words(line);
    std::string first, second, extra;
    words >> first >> second >> extra;
    if (first.empty() || first[0] == '#') continue;
    if (!extra.empty()) fail(path + ":" + std::to_string(n) + ": a line is NAME TOKEN or TOKEN, not three words");
    Entry e = second.empty() ? Entry{"client" + std::to_string(t.entries_.size() + 1), first} : Entry{first, second};
    if (e.token.size() < kMinTokenLength)
      fail(path + ":" + std::to_string(n) + ": the token of '" + e.name + "' is shorter than " + std::to_string(kMinTokenLength) + " characters");
    t.entries_.push_back(std::move(e));
  }
  if (t.entries_.empty()) fail(path + ": no token (a line NAME TOKEN per client)");
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && (st.st_mode & (S_IRGRP | S_IROTH)))
    t.warning = path + " is readable by other users (chmod 600 it)";
  return t;
}

std::optional<std::string> Tokens::clientOf(const std::string& token) const {
  std::optional<std::string> found;
  for (const Entry& e : entries_)
    if (sameText(e.token, token) && !found) found = e.name;
  return found;
}

}  // namespace tessera::remote
