#pragma once
// What a backend runs on, for the tuner and the cost model: the device's name and toolkit (parts of the cache
// key) and its cost::Device. cuda: h200.json with the limits the driver reports (SMs, shared memory, registers,
// L2, clock) when a GPU is present. cpu: cpu.json with the machine's threads, and bandwidth and FLOP rate
// measured (calibrateCpu) and cached in <cache dir>/devices/: the best of three measurements a minute or more
// apart, so one taken while the machine was busy does not price its kernels for good.
#include <functional>
#include <string>

#include "cost/device.h"
#include "ir/graph.h"
#include "kernel/kernel_ir.h"
#include "runtime/execute/executor.h"

namespace tessera::tune {

struct Target {
  std::string device;     // stable name for cache keys
  std::string toolkit;    // compiler identity, or NVRTC + driver versions
  cost::Device costDevice;
  std::string cannotRun;  // cuda without a GPU: why
  bool measured = false;  // cpu: bandwidth and FLOP rate measured on this machine (calibrateCpu), not cpu.json's
  // cpu: measured fewer times than a calibration keeps (target.cpp): a later run with `calibrate` measures again
  // when the last measurement is a minute old, and the best of each figure stays.
  bool provisional = false;
};

struct TargetOptions {
  std::string arch;          // cuda: "" = the device's
  std::string cacheDir;      // where calibrated CPU figures live ("" = defaultCacheDir())
  bool calibrate = true;     // cpu: measure bandwidth and FLOP rate when no measurement is cached, or a provisional one is due
  bool recalibrate = false;  // cpu: measure again even when cached
  std::string remote;        // "HOST:PORT": the target of the worker there (it describes itself), not this machine's
};

// Throws Error for the reference backend (it has no generated kernels to tune), or when the remote worker
// cannot be reached.
Target describeTarget(execute::BackendKind backend, const TargetOptions& options);

// A target as a worker sends it to its clients (runtime/execute/remote.h, WorkerInfo::target), and back; a
// field of the wrong type throws Error naming it.
nlohmann::json targetToJson(const Target& t);
Target targetFromJson(const nlohmann::json& j, const std::string& origin);

// Measures the host's copy bandwidth, FLOP rate and per-core L1 bandwidth with code built by the cpu backend's
// compiler (same flags as kernels); about a second.
cost::Device calibrateCpu(const cost::Device& base);
// Part of a calibration's cache key: raised when the measuring loops change, so a figure an older loop measured
// (version 1's FMA loop measured half the peak; version 2 kept cpu.json's 8 SIMD lanes) is measured again.
inline constexpr int kCpuCalibrationVersion = 3;

// The predictor for RunOptions::predictMs: cost::predict with the op registry's FLOP count.
std::function<double(const Graph&, const kernel::Kernel&)> costPredictor(const cost::Device& device);

}  // namespace tessera::tune
