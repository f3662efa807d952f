#include "io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/error.h"

namespace tessera {
namespace {

std::string temporaryPathFor(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".tmp-" + std::to_string(long(::getpid())) + "-" + std::to_string(counter++);
}

// The rename is durable only once the folder's entry is on disk too; failure here is not fatal.
void syncFolderOf(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

void writeFileAtomically(const std::string& path, const std::string& text) {
  std::string tmp = temporaryPathFor(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail(path + ": cannot write: " + std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0 &&
            ::fsync(fileno(f)) == 0;
  int error = ok ? 0 : errno;
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (ok && std::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    error = errno;
  }
  if (!ok) {
    std::remove(tmp.c_str());
    fail(path + ": cannot write: " + std::strerror(error));
  }
  syncFolderOf(path);
}

std::string readWholeFile(const std::string& path, int64_t maxBytes) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) fail(path + ": cannot open: " + ec.message());
  if (int64_t(size) > maxBytes)
    fail(path + ": file too large (" + std::to_string(size) + " bytes, limit " + std::to_string(maxBytes) + ")");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace tessera
