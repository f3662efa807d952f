#include "runtime/cpu/cpu_compiler.h"

#include <chrono>
#include <fstream>
#include <sstream>

#include "io/atomic_file.h"
#include "ir/error.h"
#include "ir/fnv.h"
#include "runtime/cpu/process.h"
#include "runtime/cpu/temp_dir.h"

namespace tessera::cpu {

namespace {

std::string sanitizedName(const std::string& name) {
  std::string out;
  for (char c : name) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out += keep ? c : '_';
  }
  if (out.empty()) out = "kernel";
  return out.substr(0, 64);
}

void replaceAll(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

// Up to three lines that report errors, joined on one line; else the first line of output.
std::string firstErrorLines(const std::string& log) {
  std::istringstream in(log);
  std::string line, joined, first;
  int found = 0;
  while (std::getline(in, line) && found < 3) {
    if (first.empty() && !line.empty()) first = line;
    if (line.find("error") == std::string::npos) continue;
    joined += (found++ ? " | " : "") + line;
  }
  if (!joined.empty()) return joined;
  return first.empty() ? "no output from the compiler" : first;
}

std::string whyItStopped(const ProcessResult& r, double timeoutSeconds) {
  if (!r.started) return r.output;
  if (r.timedOut) {
    std::ostringstream limit;
    limit << timeoutSeconds;
    return "stopped after the time limit of " + limit.str() + " s";
  }
  if (r.cancelled) return "cancelled";
  if (r.signal) return "the compiler was killed by signal " + std::to_string(r.signal);
  return firstErrorLines(r.output);
}

std::string firstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

std::string hostCpuIdentity() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model, flags;
  while (std::getline(in, line) && (model.empty() || flags.empty())) {
    std::string name = line.substr(0, line.find(':'));
    std::string value = line.find(':') == std::string::npos ? "" : line.substr(line.find(':') + 1);
    if (name.rfind("model name", 0) == 0 && model.empty()) model = value;
    if (name.rfind("flags", 0) == 0 && flags.empty()) flags = value;
  }
  return (model.empty() ? "unknown CPU" : model) + " flags " + fnv1a64Hex(flags);
}

std::vector<std::string> CpuCompiler::defaultFlags() {
  return {"-std=c++17", "-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", "-Wl,-z,nodelete", "-nodefaultlibs"};
}

// After the source, so the linker has seen the object's references when it reaches them. libstdc++ is left out
// on purpose: linking against it took 85 of a module's 120 ms of linking (its symbol table is large), and the
// few C++ runtime symbols a kernel uses (operator new[], the exception personality) are found at load time in
// the program that loads it, which is always a C++ program.
const std::vector<std::string>& CpuCompiler::linkLibraries() {
  static const std::vector<std::string> libs = {"-lm", "-lc", "-lgcc_s", "-lgcc"};
  return libs;
}

const char* CpuCompiler::kNoCompiler =
    "the cpu backend compiles its kernels with the system's C++ compiler, and there is none on PATH (looked for c++, "
    "g++ and clang++): install one (on Debian: sudo apt-get install g++)";

std::string CpuCompiler::findCompiler() {
  for (const char* name : {"c++", "g++", "clang++"})
    if (std::string path = findOnPath(name); !path.empty()) return path;
  return "";
}

CpuCompiler::CpuCompiler() : path_(findCompiler()), flags_(defaultFlags()) {
  if (path_.empty()) fail(kNoCompiler);
}

CpuCompiler::CpuCompiler(std::string compilerPath, std::vector<std::string> flags)
    : path_(std::move(compilerPath)), flags_(std::move(flags)) {}

CpuBuild CpuCompiler::build(const std::string& source, const std::string& name, double timeoutSeconds,
                            const std::atomic<bool>* cancel) const {
  auto start = std::chrono::steady_clock::now();
  pinOpenMpRuntime();  // before any kernel can start OpenMP threads; harmless when libgomp is absent
  CpuBuild out;
  std::string stem = sanitizedName(name);
  TempDir dir("tessera-cpu-");
  {
    std::ofstream src(dir.file(stem + ".cpp"), std::ios::binary);
    src << source;
    if (!src.flush()) fail("cannot write C++ source for '" + stem + "' in " + dir.path());
  }
  out.command.push_back(path_);
  out.command.insert(out.command.end(), flags_.begin(), flags_.end());
  out.command.insert(out.command.end(), {dir.file(stem + ".cpp"), "-o", dir.file("lib" + stem + ".so")});
  if (linksLibraries()) out.command.insert(out.command.end(), linkLibraries().begin(), linkLibraries().end());
  ProcessResult r = runProcess(out.command, dir.file("compile.log"), timeoutSeconds, cancel);
  replaceAll(r.output, dir.path() + "/", "");  // messages read "k.cpp:3:5: error: ...", without the folder
  out.log = r.output;
  if (r.succeeded()) {
    try {
      out.library = SharedLibrary::open(dir.file("lib" + stem + ".so"));
      out.image = readWholeFile(dir.file("lib" + stem + ".so"), int64_t(1) << 30);
      out.ok = true;  // the mapping outlives the file, so the folder can go now
    } catch (const Error& e) {  // e.g. an undefined symbol: the source is at fault, so report it like one
      out.error = "C++ kernel '" + stem + "' compiled but did not load: " + e.what();
      replaceAll(out.error, dir.path() + "/", "");
    }
  } else {
    out.error = "C++ compiler could not compile '" + stem + "': " + whyItStopped(r, timeoutSeconds);
    out.stopped = r.timedOut || r.cancelled;
  }
  out.compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

bool CpuCompiler::linksLibraries() const {
  for (const auto& f : flags_)
    if (f == "-nodefaultlibs") return true;
  return false;
}

CompilerIdentity CpuCompiler::identity() const {
  CompilerIdentity id;
  id.path = path_;
  for (size_t i = 0; i < flags_.size(); ++i) id.flags += (i ? " " : "") + flags_[i];
  if (linksLibraries())
    for (const auto& l : linkLibraries()) id.flags += " " + l;
  TempDir dir("tessera-cc-");
  ProcessResult v = runProcess({path_, "--version"}, dir.file("out"), 30);
  if (!v.succeeded()) fail("cannot run the C++ compiler '" + path_ + "': " + firstLine(v.output));
  id.version = firstLine(v.output);
  ProcessResult m = runProcess({path_, "-dumpmachine"}, dir.file("out"), 30);
  if (m.succeeded()) id.target = firstLine(m.output);
  return id;
}

}  // namespace tessera::cpu
