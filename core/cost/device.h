#pragma once
// A device as the cost model sees it: throughputs, capacities and limits. Devices are data files
// (core/cost/devices/NAME.json, installed to share/tessera/devices and embedded as a fallback); a backend may
// replace the limits with what the hardware reports (see tune/device_for_backend.h).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::cost {

enum class DeviceKind { Gpu, Cpu };

struct Device {
  std::string name;
  DeviceKind kind = DeviceKind::Gpu;
  std::string note;         // where the figures come from (measured, data file, driver)
  int smCount = 132;        // GPU: SMs; CPU: cores (hardware threads)
  double clockMhz = 1980;
  double dramGBps = 4300;   // copy bandwidth (read + write counted once each)
  double l2GBps = 10000;    // GPU: L2 to SMs; CPU: last-level cache
  double l1GBpsPerSm = 250; // GPU: L1/shared per SM; CPU: L1 per core
  int64_t l2Bytes = 50 << 20;
  double fp32Gflops = 66900;        // FMA counted as 2 (CPU: vectorized code)
  int simdLanes = 1;                // CPU: f32 lanes per vector; scalar code runs at fp32Gflops / simdLanes
  double bf16MatrixGflops = 790000; // tensor-core rate (used by kernels that use mma)
  double tf32MatrixGflops = 395000; // tensor-core rate with TF32 operands (half the 16-bit rate on Hopper)
  int maxThreadsPerBlock = 1024, maxThreadsPerSm = 2048, maxBlocksPerSm = 32;
  int sharedBytesPerBlock = 48 << 10, sharedBytesPerBlockOptin = 227 << 10, sharedBytesPerSm = 228 << 10;
  int registersPerSm = 65536, registersPerBlock = 65536, maxRegistersPerThread = 255;
  double warpsToSaturatePerSm = 16;  // resident warps per SM needed to reach the bandwidth (Little's law)
  double launchUs = 3;               // fixed cost of one kernel launch (GPU) or call (CPU)
  // GPU: cycles from issuing a load to using its value, for one thread's chain of dependent loop iterations
  // (each iteration waits for its loads before the next: loop-carried accumulators, no unrolling), and for a
  // barrier or warp-shuffle step. Fitted to H200 measurements of un-tiled and tiled gemms (docs/tuning.md).
  double globalLoadCycles = 58, sharedLoadCycles = 34, syncCycles = 40;
  double parallelOverheadUs = 0;     // CPU: starting and joining the OpenMP team

  nlohmann::json toJson() const;
  // Throws Error naming `origin` and the field at fault; absent fields keep the defaults above.
  static Device fromJson(const nlohmann::json& j, const std::string& origin);
};

// The device data file NAME.json ("h200", "cpu"): $TESSERA_DEVICE_DIR, then <prefix>/share/tessera/devices next to
// the running program, then the copy built into the library. Throws Error for an unknown name.
Device loadDevice(const std::string& name);
std::vector<std::string> builtinDeviceNames();

}  // namespace tessera::cost
