#include "runtime/cuda/nvrtc_compiler.h"

#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <sstream>

#include "ir/error.h"
#include "runtime/cuda/cuda_driver.h"

namespace tessera::cuda {

namespace {

void checkNvrtc(nvrtcResult r, const std::string& call, const std::string& program) {
  if (r == NVRTC_SUCCESS) return;
  fail("NVRTC: " + call + " failed for '" + program + "': " + nvrtcGetErrorString(r));
}

// RAII for nvrtcProgram so every early return and exception destroys it.
struct Program {
  nvrtcProgram handle = nullptr;
  ~Program() {
    if (handle) nvrtcDestroyProgram(&handle);
  }
};

std::string programLog(nvrtcProgram p, const std::string& program) {
  size_t size = 0;
  checkNvrtc(nvrtcGetProgramLogSize(p, &size), "nvrtcGetProgramLogSize", program);
  std::string log(size, '\0');
  if (size) checkNvrtc(nvrtcGetProgramLog(p, log.data()), "nvrtcGetProgramLog", program);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// The first log line that reports an error ("k.cu(3): error: ..."), else the first non-empty line.
std::string firstErrorLine(const std::string& log) {
  std::istringstream in(log);
  std::string line, firstNonEmpty;
  while (std::getline(in, line)) {
    if (line.find("error") != std::string::npos) return line;
    if (firstNonEmpty.empty() && !line.empty()) firstNonEmpty = line;
  }
  return firstNonEmpty.empty() ? "no message from NVRTC" : firstNonEmpty;
}

void takeOutputs(nvrtcProgram p, NvrtcResult& out) {
  size_t size = 0;
  checkNvrtc(nvrtcGetPTXSize(p, &size), "nvrtcGetPTXSize", out.programName);
  out.ptx.assign(size, '\0');
  if (size) checkNvrtc(nvrtcGetPTX(p, out.ptx.data()), "nvrtcGetPTX", out.programName);
  while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
  checkNvrtc(nvrtcGetCUBINSize(p, &size), "nvrtcGetCUBINSize", out.programName);
  out.cubin.assign(size, '\0');
  if (size) checkNvrtc(nvrtcGetCUBIN(p, out.cubin.data()), "nvrtcGetCUBIN", out.programName);
}

}  // namespace

NvrtcCompiler::NvrtcCompiler() {
#ifdef TESSERA_CUDA_INCLUDE_DIR
  if (std::filesystem::is_directory(TESSERA_CUDA_INCLUDE_DIR))
    baseOptions_.push_back(std::string("--include-path=") + TESSERA_CUDA_INCLUDE_DIR);
#endif
  baseOptions_.push_back("-std=c++17");
}

NvrtcResult NvrtcCompiler::compile(const std::string& source, const std::string& programName,
                                   const std::vector<std::string>& options, const std::string& arch) const {
  auto start = std::chrono::steady_clock::now();
  NvrtcResult out;
  out.programName = programName;
  out.arch = arch.empty() ? defaultArch() : arch;
  out.options = baseOptions_;
  out.options.push_back("--gpu-architecture=" + out.arch);
  out.options.insert(out.options.end(), options.begin(), options.end());
  Program prog;
  checkNvrtc(nvrtcCreateProgram(&prog.handle, source.c_str(), programName.c_str(), 0, nullptr, nullptr),
             "nvrtcCreateProgram", programName);
  std::vector<const char*> argv;
  for (const auto& o : out.options) argv.push_back(o.c_str());
  nvrtcResult r = nvrtcCompileProgram(prog.handle, static_cast<int>(argv.size()), argv.data());
  out.log = programLog(prog.handle, programName);
  if (r == NVRTC_SUCCESS) {
    takeOutputs(prog.handle, out);
    out.ok = true;
  } else if (r == NVRTC_ERROR_COMPILATION || r == NVRTC_ERROR_INVALID_OPTION) {
    // The source or an option is at fault: the caller shows the message and goes on.
    std::string detail = out.log.empty() ? std::string(nvrtcGetErrorString(r)) : firstErrorLine(out.log);
    out.error = "NVRTC could not compile '" + programName + "': " + detail;
  } else {
    checkNvrtc(r, "nvrtcCompileProgram", programName);
  }
  out.compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::vector<std::string> NvrtcCompiler::supportedArchs() {
  int n = 0;
  checkNvrtc(nvrtcGetNumSupportedArchs(&n), "nvrtcGetNumSupportedArchs", "-");
  std::vector<int> archs(static_cast<size_t>(std::max(n, 0)));
  if (n > 0) checkNvrtc(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs", "-");
  std::vector<std::string> names;
  for (int a : archs) names.push_back("sm_" + std::to_string(a));
  return names;
}

std::string NvrtcCompiler::defaultArch() {
  if (!cudaAvailability().available) return "sm_90";
  // Even when NVRTC does not know it: its "invalid option" message then says why plainly.
  return CudaDriver::get().deviceInfo(0).arch();
}

std::string NvrtcCompiler::version() {
  int major = 0, minor = 0;
  checkNvrtc(nvrtcVersion(&major, &minor), "nvrtcVersion", "-");
  return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace tessera::cuda
