#pragma once
// A private temporary folder (mkdtemp: mode 0700, unique name) removed with its contents on destruction.
#include <string>

namespace tessera::cpu {

class TempDir {
 public:
  // Under $TMPDIR (or /tmp) as "<prefix>XXXXXX"; throws tessera::Error when it cannot be made.
  explicit TempDir(const std::string& prefix = "tessera-");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace tessera::cpu
