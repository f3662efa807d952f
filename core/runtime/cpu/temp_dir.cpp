#include "runtime/cpu/temp_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "ir/error.h"

namespace tessera::cpu {

TempDir::TempDir(const std::string& prefix) {
  const char* env = std::getenv("TMPDIR");
  std::string base = env && *env ? env : "/tmp";
  std::string pattern = base + "/" + prefix + "XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data()))
    fail("cannot make a temporary folder '" + pattern + "': " + std::strerror(errno));
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ignored;  // a destructor must not throw; a leftover folder is all that can go wrong
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace tessera::cpu
