#include "tune/target.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
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

// A cached calibration: each figure the best of `samples` measurements, the last taken at `at` (seconds since
// the epoch). A measurement taken while the machine is busy reads low (23 GFLOP/s and 11 GB/s during a build
// on both of the build machine's cores, 404 and 17 quiet), so one is provisional: later runs measure again, at
// least kSampleSpacingS apart, until kCalibrationSamples are in, and the best of each figure stays.
struct Calibration {
  cost::Device device;
  int samples = 0;
  int64_t at = 0;
};
constexpr int kCalibrationSamples = 3;
constexpr int64_t kSampleSpacingS = 60;

int64_t secondsNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A file without the sample count (written before it was kept) counts as one old sample.
std::optional<Calibration> readCalibration(const fs::path& file, const cost::Device& base) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  try {
    nlohmann::json stored = nlohmann::json::parse(readWholeFile(file.string(), 1 << 20));
    nlohmann::json merged = base.toJson();  // fields the measurement lacks (an older file) keep the data file's values
    merged.update(stored);
    return Calibration{cost::Device::fromJson(merged, file.string()), stored.value("calibration_samples", 1),
                       stored.value("calibrated_at", int64_t(0))};
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged measurement is measured again
  }
}

void writeCalibration(const fs::path& file, const Calibration& c) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  nlohmann::json j = c.device.toJson();
  j["calibration_samples"] = c.samples;
  j["calibrated_at"] = c.at;
  try {
    writeFileAtomically(file.string(), j.dump(2) + "\n");
  } catch (const std::exception&) {
    // Not cached: measured again next time.
  }
}

// Each measured figure the better of the two: a busy machine measures low, never high.
cost::Device bestFigures(cost::Device kept, const cost::Device& fresh) {
  if (fresh.fp32Gflops > kept.fp32Gflops) kept.note = fresh.note;
  kept.dramGBps = std::max(kept.dramGBps, fresh.dramGBps);
  kept.l2GBps = std::max(kept.l2GBps, fresh.l2GBps);
  kept.l1GBpsPerSm = std::max(kept.l1GBpsPerSm, fresh.l1GBpsPerSm);
  kept.fp32Gflops = std::max(kept.fp32Gflops, fresh.fp32Gflops);
  return kept;
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
  std::optional<Calibration> kept = o.recalibrate ? std::nullopt : readCalibration(file, base);
  if (kept) {
    t.costDevice = kept->device;
    t.measured = true;
    t.provisional = kept->samples < kCalibrationSamples;
    if (!o.calibrate || !t.provisional || secondsNow() - kept->at < kSampleSpacingS) return t;
  }
  if (!o.calibrate && !o.recalibrate) return t;
  const cost::Device fresh = calibrateCpu(base);
  Calibration now = kept ? Calibration{bestFigures(kept->device, fresh), kept->samples + 1, secondsNow()}
                         : Calibration{fresh, 1, secondsNow()};
  writeCalibration(file, now);
  t.costDevice = now.device;
  t.measured = true;
  t.provisional = now.samples < kCalibrationSamples;
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
