#include "runtime/cuda/nvrtc_compiler.h"

#include <dlfcn.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <type_traits>
#include <vector>

#include "ir/error.h"
#include "runtime/cuda/cuda_driver.h"

namespace tessera::cuda {

namespace {

// NVRTC is opened at run time, as the driver is (cuda_driver.cpp), so a program built with CUDA starts, and runs
// on the cpu, where the toolkit is not installed; the NVRTC calls then fail saying what to install.
struct NvrtcApi {
  std::string missing;  // why NVRTC could not be opened; "" when every entry point was found
  decltype(&::nvrtcGetErrorString) getErrorString = nullptr;
  decltype(&::nvrtcCreateProgram) createProgram = nullptr;
  decltype(&::nvrtcDestroyProgram) destroyProgram = nullptr;
  decltype(&::nvrtcCompileProgram) compileProgram = nullptr;
  decltype(&::nvrtcGetProgramLogSize) getProgramLogSize = nullptr;
  decltype(&::nvrtcGetProgramLog) getProgramLog = nullptr;
  decltype(&::nvrtcGetPTXSize) getPTXSize = nullptr;
  decltype(&::nvrtcGetPTX) getPTX = nullptr;
  decltype(&::nvrtcGetCUBINSize) getCUBINSize = nullptr;
  decltype(&::nvrtcGetCUBIN) getCUBIN = nullptr;
  decltype(&::nvrtcGetNumSupportedArchs) getNumSupportedArchs = nullptr;
  decltype(&::nvrtcGetSupportedArchs) getSupportedArchs = nullptr;
  decltype(&::nvrtcVersion) version = nullptr;
};

// The library's soname (the loader's paths), else the file this build saw; $TESSERA_NVRTC names the one to use
// instead (a test's missing library).
void* openNvrtc(std::string& tried) {
  std::vector<std::string> names = {TESSERA_NVRTC_SONAME, TESSERA_NVRTC_BUILT};
  if (const char* told = std::getenv("TESSERA_NVRTC"); told && *told) names = {told};
  for (const std::string& name : names) {
    if (void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
    const char* why = dlerror();
    tried += (tried.empty() ? "" : "; ") + std::string(why ? why : name);
  }
  return nullptr;
}

const NvrtcApi& nvrtc() {
  static const NvrtcApi api = [] {
    NvrtcApi a;
    std::string tried;
    void* lib = openNvrtc(tried);
    if (!lib) {
      a.missing = std::string("NVRTC (") + TESSERA_NVRTC_SONAME + ") is not installed, so CUDA kernels cannot be "
                  "compiled here (install NVIDIA's CUDA " + TESSERA_CUDA_MAJOR + " NVRTC: the cuda-nvrtc-" +
                  TESSERA_CUDA_MAJOR + "-0 package of NVIDIA's repository, or the toolkit): " + tried;
      return a;
    }
    auto load = [&](auto& fn, const char* symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
      if (!fn && a.missing.empty()) a.missing = std::string("NVRTC lacks ") + symbol + " (too old a library?)";
    };
    load(a.getErrorString, "nvrtcGetErrorString");
    load(a.createProgram, "nvrtcCreateProgram");
    load(a.destroyProgram, "nvrtcDestroyProgram");
    load(a.compileProgram, "nvrtcCompileProgram");
    load(a.getProgramLogSize, "nvrtcGetProgramLogSize");
    load(a.getProgramLog, "nvrtcGetProgramLog");
    load(a.getPTXSize, "nvrtcGetPTXSize");
    load(a.getPTX, "nvrtcGetPTX");
    load(a.getCUBINSize, "nvrtcGetCUBINSize");
    load(a.getCUBIN, "nvrtcGetCUBIN");
    load(a.getNumSupportedArchs, "nvrtcGetNumSupportedArchs");
    load(a.getSupportedArchs, "nvrtcGetSupportedArchs");
    load(a.version, "nvrtcVersion");
    return a;
  }();
  if (!api.missing.empty()) fail(api.missing);
  return api;
}

void checkNvrtc(nvrtcResult r, const std::string& call, const std::string& program) {
  if (r == NVRTC_SUCCESS) return;
  fail("NVRTC: " + call + " failed for '" + program + "': " + nvrtc().getErrorString(r));
}

// RAII for nvrtcProgram so every early return and exception destroys it.
struct Program {
  nvrtcProgram handle = nullptr;
  ~Program() {
    if (handle) nvrtc().destroyProgram(&handle);
  }
};

std::string programLog(nvrtcProgram p, const std::string& program) {
  size_t size = 0;
  checkNvrtc(nvrtc().getProgramLogSize(p, &size), "nvrtcGetProgramLogSize", program);
  std::string log(size, '\0');
  if (size) checkNvrtc(nvrtc().getProgramLog(p, log.data()), "nvrtcGetProgramLog", program);
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
  checkNvrtc(nvrtc().getPTXSize(p, &size), "nvrtcGetPTXSize", out.programName);
  out.ptx.assign(size, '\0');
  if (size) checkNvrtc(nvrtc().getPTX(p, out.ptx.data()), "nvrtcGetPTX", out.programName);
  while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
  checkNvrtc(nvrtc().getCUBINSize(p, &size), "nvrtcGetCUBINSize", out.programName);
  out.cubin.assign(size, '\0');
  if (size) checkNvrtc(nvrtc().getCUBIN(p, out.cubin.data()), "nvrtcGetCUBIN", out.programName);
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
  checkNvrtc(nvrtc().createProgram(&prog.handle, source.c_str(), programName.c_str(), 0, nullptr, nullptr),
             "nvrtcCreateProgram", programName);
  std::vector<const char*> argv;
  for (const auto& o : out.options) argv.push_back(o.c_str());
  nvrtcResult r = nvrtc().compileProgram(prog.handle, static_cast<int>(argv.size()), argv.data());
  out.log = programLog(prog.handle, programName);
  if (r == NVRTC_SUCCESS) {
    takeOutputs(prog.handle, out);
    out.ok = true;
  } else if (r == NVRTC_ERROR_COMPILATION || r == NVRTC_ERROR_INVALID_OPTION) {
    // The source or an option is at fault: the caller shows the message and goes on.
    std::string detail = out.log.empty() ? std::string(nvrtc().getErrorString(r)) : firstErrorLine(out.log);
    out.error = "NVRTC could not compile '" + programName + "': " + detail;
  } else {
    checkNvrtc(r, "nvrtcCompileProgram", programName);
  }
  out.compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::vector<std::string> NvrtcCompiler::supportedArchs() {
  int n = 0;
  checkNvrtc(nvrtc().getNumSupportedArchs(&n), "nvrtcGetNumSupportedArchs", "-");
  std::vector<int> archs(static_cast<size_t>(std::max(n, 0)));
  if (n > 0) checkNvrtc(nvrtc().getSupportedArchs(archs.data()), "nvrtcGetSupportedArchs", "-");
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
  checkNvrtc(nvrtc().version(&major, &minor), "nvrtcVersion", "-");
  return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace tessera::cuda
