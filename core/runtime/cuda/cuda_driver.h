#pragma once
// The CUDA driver, loaded at run time with dlopen("libcuda.so.1") so Tessera starts on machines without a GPU.
// Every call checks its CUresult and throws tessera::Error naming the call and the driver's error name and text.
// Calls act on the context current on the calling thread: see CudaContext in cuda_objects.h.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/error.h"

// The driver's opaque handle types, declared as cuda.h declares them so the two stay compatible.
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUevent_st;
struct CUstream_st;
struct CUgraphExec_st;

namespace tessera::cuda {

using DevicePtr = unsigned long long;  // CUdeviceptr on 64-bit hosts
using ContextHandle = CUctx_st*;
using ModuleHandle = CUmod_st*;
using FunctionHandle = CUfunc_st*;
using EventHandle = CUevent_st*;
using StreamHandle = CUstream_st*;  // null: the legacy default stream
using GraphExecHandle = CUgraphExec_st*;

// Whether kernels can run here, and if not, why in a few words (shown to the user as is).
struct Availability {
  bool available = false;
  std::string reason;  // "no libcuda.so.1", "driver stub (cuInit 34)", "no device (cuInit 100)", "built without CUDA"
};
// Loads the driver on first use (thread-safe) and remembers the answer.
Availability cudaAvailability();

// What the cost model, the templates and the UI need to know about a device.
struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int smCount = 0;
  int warpSize = 32;
  int maxThreadsPerBlock = 0, maxThreadsPerSm = 0, maxBlocksPerSm = 0;
  int sharedMemPerBlock = 0;       // bytes without opting in
  int sharedMemPerBlockOptin = 0;  // bytes a kernel may opt in to (setMaxDynamicSharedMemory)
  int sharedMemPerSm = 0;
  int registersPerBlock = 0, registersPerSm = 0;
  int l2CacheBytes = 0;  // this and the next line: 0 when the driver does not report it
  int memoryBusBits = 0, memoryClockKHz = 0, clockKHz = 0;
  std::size_t globalMemBytes = 0;
  std::string arch() const { return "sm_" + std::to_string(major) + std::to_string(minor); }
};

// Resources one compiled kernel uses, as the driver reports them.
struct FunctionInfo {
  int registersPerThread = 0;
  int staticSharedBytes = 0;
  int localBytesPerThread = 0;  // spills
  int maxThreadsPerBlock = 0;
};

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};
struct LaunchConfig {
  Dim3 grid, block;
  unsigned sharedBytes = 0;  // dynamic shared memory
};

// A kernel fault the context cannot recover from (an illegal address, a launch failure, a trap, ...): every
// later call in the context fails too, until the primary context is reset (CudaDriver::resetPrimaryContext).
class CudaFault : public Error {
 public:
  CudaFault(const std::string& message, std::string errorName) : Error(message), errorName_(std::move(errorName)) {}
  const std::string& errorName() const { return errorName_; }  // "CUDA_ERROR_ILLEGAL_ADDRESS"

 private:
  std::string errorName_;
};

class CudaDriver {
 public:
  // The loaded driver; throws Error("CUDA is not available: <reason>") when cudaAvailability() says no.
  static CudaDriver& get();

  int driverVersion() const;  // e.g. 13000
  int deviceCount() const;
  DeviceInfo deviceInfo(int ordinal) const;

  ContextHandle retainPrimaryContext(int ordinal) const;
  void releasePrimaryContext(int ordinal) const;
  void setCurrent(ContextHandle context) const;
  // Destroys every resource of the device's primary context (a faulted context comes back clean); handles made
  // in it are dead, and the context is made again at its next use.
  void resetPrimaryContext(int ordinal) const;
  // Free and total memory of the current context's device, in bytes.
  void memoryInfo(std::size_t& freeBytes, std::size_t& totalBytes) const;
  void synchronize() const;  // the current context; reports asynchronous kernel faults

  ModuleHandle loadModule(const void* image) const;  // a cubin, or NUL-terminated PTX (JIT-compiled by the driver)
  void unloadModule(ModuleHandle module) const;
  FunctionHandle function(ModuleHandle module, const std::string& name) const;
  FunctionInfo functionInfo(FunctionHandle function) const;
  void setMaxDynamicSharedMemory(FunctionHandle function, int bytes) const;  // needed above 48 KiB

  DevicePtr allocate(std::size_t bytes) const;
  void free(DevicePtr ptr) const;
  void copyToDevice(DevicePtr dst, const void* src, std::size_t bytes) const;
  void copyToHost(void* dst, DevicePtr src, std::size_t bytes) const;
  void copyOnDevice(DevicePtr dst, DevicePtr src, std::size_t bytes) const;
  void fillZero(DevicePtr dst, std::size_t bytes) const;

  // A tensor map (CUtensorMap, 128 bytes, written to `map`) over a row-major tensor of 16-bit elements at `base`
  // for the TMA: dims and box innermost first, 128-byte swizzle (cuTensorMapEncodeTiled).
  void encodeTensorMap(void* map, bool bf16, DevicePtr base, const std::vector<uint64_t>& dims,
                       const std::vector<uint32_t>& box) const;

  // Launches on `stream` (null: the default stream); `args` holds one pointer per kernel parameter, pointing at
  // its value (copied at the launch, or at its capture into a graph).
  void launch(FunctionHandle function, const LaunchConfig& config, void** args, StreamHandle stream = nullptr) const;

  // A stream that does not wait on the default stream (so launches there can be captured into a graph).
  StreamHandle createStream() const;
  void destroyStream(StreamHandle stream) const;
  // Capture: the launches made on `stream` by this thread between begin and end become one graph, instantiated
  // (the graph itself is dropped); nothing runs while capturing.
  void beginCapture(StreamHandle stream) const;
  GraphExecHandle endCapture(StreamHandle stream) const;
  void launchGraph(GraphExecHandle graph, StreamHandle stream) const;
  void destroyGraph(GraphExecHandle graph) const;

  EventHandle createEvent() const;
  void destroyEvent(EventHandle event) const;
  void recordEvent(EventHandle event, StreamHandle stream = nullptr) const;
  void synchronizeEvent(EventHandle event) const;
  float elapsedMs(EventHandle start, EventHandle end) const;

  struct Api;  // the driver's entry points (defined in cuda_driver.cpp)

 private:
  explicit CudaDriver(const Api* api) : api_(api) {}
  const Api* api_;
};

}  // namespace tessera::cuda
