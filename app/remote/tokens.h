#pragma once
// The worker's clients and their tokens, from the file `serve --token-file` names: one client a line,
// "NAME TOKEN" (or a bare TOKEN, named client1, client2, ...), blank lines and lines starting with '#' ignored.
// A token is at least 16 characters; the file should be readable by its owner only (a warning says so).
#include <optional>
#include <string>
#include <vector>

namespace tessera::remote {

class Tokens {
 public:
  // Throws Error naming the file and line for a file that cannot be read, a short token, or no token at all.
  static Tokens load(const std::string& path);
  // The client holding `token`, or nothing. Compares every entry in full (time independent of where it differs).
  std::optional<std::string> clientOf(const std::string& token) const;
  size_t size() const { return entries_.size(); }
  std::string warning;  // the file is readable by others

 private:
  struct Entry {
    std::string name, token;
  };
  std::vector<Entry> entries_;
};

}  // namespace tessera::remote
