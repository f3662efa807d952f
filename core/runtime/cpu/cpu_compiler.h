#pragma once
// Compiling generated C++ into a shared object with the system compiler and loading it. The source goes into a
// private temporary folder (mode 0700) that is removed once the object is loaded; the compiler is started
// directly (posix_spawn), never through a shell. Builds on several threads at once are fine.
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "runtime/cpu/shared_library.h"

namespace tessera::cpu {

struct CpuBuild {
  bool ok = false;
  std::string error;                 // one line when !ok: "C++ compiler could not compile 'k': k.cpp:3:5: error: ..."
  std::string log;                   // the compiler's whole output, temporary paths removed
  std::vector<std::string> command;  // argv as run
  std::shared_ptr<SharedLibrary> library;  // loaded when ok; closing the last copy unloads it
  std::string image;                 // the shared object's bytes when ok (SharedLibrary::openImage loads them again)
  double compileMs = 0;
  bool stopped = false;              // the time limit or a cancel stopped the compiler
};

// What to put in a cache key so a cached result is only reused with the same compiler and flags.
struct CompilerIdentity {
  std::string path;     // /usr/bin/c++
  std::string version;  // first line of --version: "c++ (Debian 12.2.0-14+deb12u1) 12.2.0"
  std::string target;   // -dumpmachine: "x86_64-linux-gnu"
  std::string flags;    // the flags, space-separated
  std::string key() const { return path + "|" + version + "|" + target + "|" + flags; }
};

// The host CPU as -march=native sees it, for cache keys: /proc/cpuinfo's model name and a hash of its flags.
std::string hostCpuIdentity();

class CpuCompiler {
 public:
  // -O3 -march=native -fopenmp -shared -fPIC -Wl,-z,nodelete: nodelete keeps each object (and the OpenMP runtime
  // it pulls in) mapped after dlclose, so a parked OpenMP thread can never run unmapped code.
  // -nodefaultlibs too: the libraries to link are linkLibraries(), put after the source.
  static std::vector<std::string> defaultFlags();
  static const std::vector<std::string>& linkLibraries();

  // The first of c++, g++, clang++ on $PATH; "" when there is none.
  static std::string findCompiler();
  // What to tell a user who has none: what is missing and which package brings it.
  static const char* kNoCompiler;
  // findCompiler(); throws tessera::Error (kNoCompiler) when there is none.
  CpuCompiler();
  CpuCompiler(std::string compilerPath, std::vector<std::string> flags);

  // Compiles `source` (called `name` in messages; letters, digits and '_' are kept, the rest become '_') and
  // loads it. A source error gives ok == false with the first error lines; nothing is thrown for it.
  CpuBuild build(const std::string& source, const std::string& name, double timeoutSeconds = 300,
                 const std::atomic<bool>* cancel = nullptr) const;

  // Runs the compiler twice (--version, -dumpmachine): call it once and keep the answer.
  CompilerIdentity identity() const;

  const std::string& compilerPath() const { return path_; }
  const std::vector<std::string>& flags() const { return flags_; }
  // Whether the flags leave the default libraries out, so that linkLibraries() must name what to link.
  bool linksLibraries() const;

 private:
  std::string path_;
  std::vector<std::string> flags_;
};

}  // namespace tessera::cpu
