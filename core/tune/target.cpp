#include "tune/target.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cost/cost_model.h"
#include "ir/error.h"
#include "ir/fnv.h"
#include "runtime/cpu/cpu_compiler.h"
#include "runtime/cpu/cpu_threads.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "runtime/execute/remote.h"
#include "io/atomic_file.h"
#include "tune/cache.h"

namespace tessera::tune {
namespace {

namespace fs = std::filesystem;

std::string cpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      std::string name = line.substr(line.find(':') + 1);
      return name.substr(name.find_first_not_of(' '));
    }
  return "unknown CPU";
}

// Calibrated figures are cached per CPU, thread count, compiler (they measure that compiler's code) and version
// of the measuring loops.
Target cpuTarget(const TargetOptions& o) {
  Target t;
  int threads = cpu::cpuThreads();
  t.device = cpuModelName() + ", " + std::to_string(threads) + " threads";
  t.toolkit = cpu::CpuCompiler().identity().key();
  cost::Device base = cost::loadDevice("cpu");
  base.name = t.device;
  if (base.smCount <= 0) base.smCount = threads;
  std::string dir = o.cacheDir.empty() ? defaultCacheDir() : o.cacheDir;
  fs::path file = fs::path(dir) / "devices" / ("cpu-" + fnv1a64Hex(t.device + '\n' + t.toolkit + '\n' + std::to_string(kCpuCalibrationVersion)) + ".json");
  t.costDevice = base;
  std::error_code ec;
  if (!o.recalibrate && fs::exists(file, ec)) {
    try {
      // Fields the measurement lacks (an older file) keep the data file's values.
      nlohmann::json merged = base.toJson();
      merged.update(nlohmann::json::parse(readWholeFile(file.string(), 1 << 20)));
      t.costDevice = cost::Device::fromJson(merged, file.string());
      t.measured = true;
      return t;
    } catch (const std::exception&) {
      // A damaged measurement is measured again below.
    }
  }
  if (!o.calibrate && !o.recalibrate) return t;
  t.costDevice = calibrateCpu(base);
  t.measured = true;
  fs::create_directories(file.parent_path(), ec);
  try {
    writeFileAtomically(file.string(), t.costDevice.toJson().dump(2) + "\n");
  } catch (const std::exception&) {
    // Not cached: measured again next time.
  }
  return t;
}

Target cudaTarget(const TargetOptions& o) {
  Target t;
  t.costDevice = cost::loadDevice("h200");
  cuda::Availability a = cuda::cudaAvailability();
  std::string nvrtc;
  try {
    nvrtc = cuda::NvrtcCompiler::version();
  } catch (const std::exception&) {
    nvrtc = "none";
  }
  if (!a.available) {
    t.cannotRun = "CUDA cannot run here: " + a.reason;
    t.device = "no GPU (" + (o.arch.empty() ? std::string("sm_90") : o.arch) + ")";
    t.toolkit = "nvrtc " + nvrtc;
    return t;
  }
  const cuda::CudaDriver& drv = cuda::CudaDriver::get();
  cuda::DeviceInfo info = drv.deviceInfo(0);
  std::string arch = o.arch.empty() ? info.arch() : o.arch;
  t.device = info.name + " (" + arch + ")";
  t.toolkit = "nvrtc " + nvrtc + ", driver " + std::to_string(drv.driverVersion());
  cost::Device& d = t.costDevice;
  if (info.name.find("H200") == std::string::npos)
    d.note = "throughputs from h200.json (no data file for " + info.name + "); limits from the driver";
  else d.note += "; limits from the driver";
  d.name = info.name;
  auto take = [](auto& field, auto value) {
    if (value > 0) field = value;
  };
  take(d.smCount, info.smCount);
  take(d.maxThreadsPerBlock, info.maxThreadsPerBlock);
  take(d.maxThreadsPerSm, info.maxThreadsPerSm);
  take(d.maxBlocksPerSm, info.maxBlocksPerSm);
  take(d.sharedBytesPerBlock, info.sharedMemPerBlock);
  take(d.sharedBytesPerBlockOptin, info.sharedMemPerBlockOptin);
  take(d.sharedBytesPerSm, info.sharedMemPerSm);
  take(d.registersPerBlock, info.registersPerBlock);
  take(d.registersPerSm, info.registersPerSm);
  take(d.l2Bytes, int64_t(info.l2CacheBytes));
  take(d.clockMhz, double(info.clockKHz) / 1e3);
  return t;
}

}  // namespace

Target describeTarget(execute::BackendKind backend, const TargetOptions& o) {
  if (backend == execute::BackendKind::Reference) fail("the reference backend has no generated kernels to tune (cpu, cuda)");
  if (!o.remote.empty()) {
    execute::WorkerInfo w = execute::remoteConnector()->describe(o.remote);
    if (w.kind != backend) fail("the worker at " + o.remote + " runs another backend than the one asked for");
    return targetFromJson(w.target, "the worker at " + o.remote);
  }
  return backend == execute::BackendKind::Cpu ? cpuTarget(o) : cudaTarget(o);
}

nlohmann::json targetToJson(const Target& t) {
  return {{"device", t.device}, {"toolkit", t.toolkit}, {"cost_device", t.costDevice.toJson()}, {"cannot_run", t.cannotRun},
          {"measured", t.measured}};
}

Target targetFromJson(const nlohmann::json& j, const std::string& origin) {
  Target t;
  try {
    t.device = j.at("device").get<std::string>();
    t.toolkit = j.at("toolkit").get<std::string>();
    t.cannotRun = j.value("cannot_run", std::string());
    t.measured = j.value("measured", false);
  } catch (const std::exception& e) {
    fail(origin + ": target: " + e.what());
  }
  if (!j.contains("cost_device") || !j["cost_device"].is_object()) fail(origin + ": target: cost_device: expected an object");
  t.costDevice = cost::Device::fromJson(j["cost_device"], origin);
  return t;
}

std::function<double(const Graph&, const kernel::Kernel&)> costPredictor(const cost::Device& device) {
  return [device](const Graph& g, const kernel::Kernel& k) {
    cost::Estimate e = cost::predict(k, device, cost::kernelFlops(g, k));
    return e.feasible ? e.ms : -1.0;
  };
}

}  // namespace tessera::tune
