#include "runtime/cuda/cuda_driver.h"

#include <cuda.h>
#include <dlfcn.h>

#include <memory>
#include <type_traits>

#include "ir/error.h"

namespace tessera::cuda {

// Entry points fetched through cuGetProcAddress for the API version of the cuda.h we compile against, so
// versioned names (cuMemAlloc_v2, cuEventElapsedTime_v2, ...) resolve to the signatures declared here.
struct CudaDriver::Api {
  decltype(&::cuGetErrorName) getErrorName = nullptr;
  decltype(&::cuGetErrorString) getErrorString = nullptr;
  decltype(&::cuDriverGetVersion) driverGetVersion = nullptr;
  decltype(&::cuDeviceGetCount) deviceGetCount = nullptr;
  decltype(&::cuDeviceGet) deviceGet = nullptr;
  decltype(&::cuDeviceGetName) deviceGetName = nullptr;
  decltype(&::cuDeviceGetAttribute) deviceGetAttribute = nullptr;
  decltype(&::cuDeviceTotalMem) deviceTotalMem = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) primaryCtxRetain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease) primaryCtxRelease = nullptr;
  decltype(&::cuCtxSetCurrent) ctxSetCurrent = nullptr;
  decltype(&::cuDevicePrimaryCtxReset) primaryCtxReset = nullptr;
  decltype(&::cuMemGetInfo) memGetInfo = nullptr;
  decltype(&::cuCtxSynchronize) ctxSynchronize = nullptr;
  decltype(&::cuModuleLoadData) moduleLoadData = nullptr;
  decltype(&::cuModuleUnload) moduleUnload = nullptr;
  decltype(&::cuModuleGetFunction) moduleGetFunction = nullptr;
  decltype(&::cuFuncGetAttribute) funcGetAttribute = nullptr;
  decltype(&::cuFuncSetAttribute) funcSetAttribute = nullptr;
  decltype(&::cuMemAlloc) memAlloc = nullptr;
  decltype(&::cuMemFree) memFree = nullptr;
  decltype(&::cuMemcpyHtoD) memcpyHtoD = nullptr;
  decltype(&::cuMemcpyDtoH) memcpyDtoH = nullptr;
  decltype(&::cuMemcpyDtoD) memcpyDtoD = nullptr;
  decltype(&::cuMemsetD8) memsetD8 = nullptr;
  decltype(&::cuLaunchKernel) launchKernel = nullptr;
  decltype(&::cuStreamCreate) streamCreate = nullptr;
  decltype(&::cuStreamDestroy) streamDestroy = nullptr;
  decltype(&::cuStreamBeginCapture) streamBeginCapture = nullptr;
  decltype(&::cuStreamEndCapture) streamEndCapture = nullptr;
  decltype(&::cuGraphInstantiateWithFlags) graphInstantiate = nullptr;
  decltype(&::cuGraphLaunch) graphLaunch = nullptr;
  decltype(&::cuGraphExecDestroy) graphExecDestroy = nullptr;
  decltype(&::cuGraphDestroy) graphDestroy = nullptr;
  decltype(&::cuEventCreate) eventCreate = nullptr;
  decltype(&::cuEventDestroy) eventDestroy = nullptr;
  decltype(&::cuEventRecord) eventRecord = nullptr;
  decltype(&::cuEventSynchronize) eventSynchronize = nullptr;
  decltype(&::cuEventElapsedTime) eventElapsedTime = nullptr;
  decltype(&::cuTensorMapEncodeTiled) tensorMapEncodeTiled = nullptr;
};

namespace {

struct LoadResult {
  Availability availability;
  std::unique_ptr<CudaDriver::Api> api;
};

// What a user without NVIDIA's driver reads in the backend list: what is missing and which packages bring it.
constexpr const char* kNoDriver = "no libcuda.so.1 (NVIDIA's driver; on Debian: the nvidia-driver and libcuda1 packages of non-free)";

LoadResult unavailable(std::string reason) { return {{false, std::move(reason)}, nullptr}; }

std::string errorName(const CudaDriver::Api& api, CUresult r) {
  const char* name = nullptr;
  if (!api.getErrorName || api.getErrorName(r, &name) != CUDA_SUCCESS || !name) return "CUresult";
  return name;
}

// Fetches every entry point; returns the first one the driver lacks, or "" when all were found.
std::string fetchEntryPoints(decltype(&::cuGetProcAddress) getProc, CudaDriver::Api& api) {
  std::string missing;
  auto fetch = [&](auto& slot, const char* symbol, int version = CUDA_VERSION) {
    CUdriverProcAddressQueryResult status{};
    void* fn = nullptr;
    if (getProc(symbol, &fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status) != CUDA_SUCCESS || !fn) {
      if (missing.empty()) missing = symbol;
      return;
    }
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(fn);
  };
  // Legacy-stream variants, since launches and events use the legacy default stream (a null CUstream).
  // Stringizing the argument keeps the unversioned name; cuGetProcAddress picks the version for CUDA_VERSION.
#define TESSERA_FETCH(slot, symbol) fetch(api.slot, #symbol)
  TESSERA_FETCH(driverGetVersion, cuDriverGetVersion);
  TESSERA_FETCH(deviceGetCount, cuDeviceGetCount);
  TESSERA_FETCH(deviceGet, cuDeviceGet);
  TESSERA_FETCH(deviceGetName, cuDeviceGetName);
  TESSERA_FETCH(deviceGetAttribute, cuDeviceGetAttribute);
  TESSERA_FETCH(deviceTotalMem, cuDeviceTotalMem);
  TESSERA_FETCH(primaryCtxRetain, cuDevicePrimaryCtxRetain);
  TESSERA_FETCH(primaryCtxRelease, cuDevicePrimaryCtxRelease);
  TESSERA_FETCH(ctxSetCurrent, cuCtxSetCurrent);
  TESSERA_FETCH(primaryCtxReset, cuDevicePrimaryCtxReset);
  TESSERA_FETCH(memGetInfo, cuMemGetInfo);
  // At version 13000 the driver hands out cuCtxSynchronize_v2(CUcontext), while cuda.h still declares the
  // argument-less form we call (cudaTypedefs.h: PFN_cuCtxSynchronize_v2000 vs _v13000): ask for the old one.
  fetch(api.ctxSynchronize, "cuCtxSynchronize", 2000);
  TESSERA_FETCH(moduleLoadData, cuModuleLoadData);
  TESSERA_FETCH(moduleUnload, cuModuleUnload);
  TESSERA_FETCH(moduleGetFunction, cuModuleGetFunction);
  TESSERA_FETCH(funcGetAttribute, cuFuncGetAttribute);
  TESSERA_FETCH(funcSetAttribute, cuFuncSetAttribute);
  TESSERA_FETCH(memAlloc, cuMemAlloc);
  TESSERA_FETCH(memFree, cuMemFree);
  TESSERA_FETCH(memcpyHtoD, cuMemcpyHtoD);
  TESSERA_FETCH(memcpyDtoH, cuMemcpyDtoH);
  TESSERA_FETCH(memcpyDtoD, cuMemcpyDtoD);
  TESSERA_FETCH(memsetD8, cuMemsetD8);
  TESSERA_FETCH(launchKernel, cuLaunchKernel);
  TESSERA_FETCH(streamCreate, cuStreamCreate);
  TESSERA_FETCH(streamDestroy, cuStreamDestroy);
  TESSERA_FETCH(streamBeginCapture, cuStreamBeginCapture);
  TESSERA_FETCH(streamEndCapture, cuStreamEndCapture);
  TESSERA_FETCH(graphInstantiate, cuGraphInstantiateWithFlags);
  TESSERA_FETCH(graphLaunch, cuGraphLaunch);
  TESSERA_FETCH(graphExecDestroy, cuGraphExecDestroy);
  TESSERA_FETCH(graphDestroy, cuGraphDestroy);
  TESSERA_FETCH(eventCreate, cuEventCreate);
  TESSERA_FETCH(eventDestroy, cuEventDestroy);
  TESSERA_FETCH(eventRecord, cuEventRecord);
  TESSERA_FETCH(eventSynchronize, cuEventSynchronize);
  TESSERA_FETCH(eventElapsedTime, cuEventElapsedTime);
  TESSERA_FETCH(tensorMapEncodeTiled, cuTensorMapEncodeTiled);
#undef TESSERA_FETCH
  return missing;
}

LoadResult load() {
  // Never closed: the driver stays mapped for the life of the process.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return unavailable(kNoDriver);
  auto api = std::make_unique<CudaDriver::Api>();
  api->getErrorName = reinterpret_cast<decltype(&::cuGetErrorName)>(dlsym(lib, "cuGetErrorName"));
  api->getErrorString = reinterpret_cast<decltype(&::cuGetErrorString)>(dlsym(lib, "cuGetErrorString"));
  auto init = reinterpret_cast<decltype(&::cuInit)>(dlsym(lib, "cuInit"));
  auto getProc = reinterpret_cast<decltype(&::cuGetProcAddress)>(dlsym(lib, "cuGetProcAddress_v2"));
  if (!init || !getProc) return unavailable("libcuda.so.1 is too old (no cuGetProcAddress_v2)");
  CUresult r = init(0);
  if (r == CUDA_ERROR_STUB_LIBRARY) return unavailable("driver stub (cuInit 34)");
  if (r == CUDA_ERROR_NO_DEVICE) return unavailable("no device (cuInit 100)");
  if (r != CUDA_SUCCESS) return unavailable("cuInit failed: " + errorName(*api, r) + " (" + std::to_string(r) + ")");
  std::string missing = fetchEntryPoints(getProc, *api);
  if (!missing.empty()) return unavailable("the driver lacks " + missing + " for CUDA " + std::to_string(CUDA_VERSION));
  int count = 0;
  if (api->deviceGetCount(&count) != CUDA_SUCCESS || count == 0) return unavailable("no device (0 devices)");
  return {{true, "CUDA device available"}, std::move(api)};
}

const LoadResult& loaded() {
  static const LoadResult result = load();  // thread-safe, once
  return result;
}

bool isStickyFault(CUresult r) {
  return r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_LAUNCH_FAILED || r == CUDA_ERROR_MISALIGNED_ADDRESS ||
         r == CUDA_ERROR_ILLEGAL_INSTRUCTION || r == CUDA_ERROR_INVALID_PC || r == CUDA_ERROR_HARDWARE_STACK_ERROR ||
         r == CUDA_ERROR_ASSERT;
}

void check(const CudaDriver::Api& api, CUresult r, const std::string& call) {
  if (r == CUDA_SUCCESS) return;
  const char* text = nullptr;
  if (api.getErrorString) api.getErrorString(r, &text);
  std::string message = "CUDA driver: " + call + " failed: " + errorName(api, r) + " (" + std::to_string(r) + ")";
  if (text) message += ": " + std::string(text);
  // A kernel fault poisons the context: later calls in it fail too until the process restarts.
  if (isStickyFault(r)) throw CudaFault(message + " (a kernel faulted; this CUDA context can no longer be used)", errorName(api, r));
  fail(message);
}

std::string dims(const Dim3& d) {
  return std::to_string(d.x) + "x" + std::to_string(d.y) + "x" + std::to_string(d.z);
}

}  // namespace

Availability cudaAvailability() { return loaded().availability; }

CudaDriver& CudaDriver::get() {
  const LoadResult& r = loaded();
  if (!r.availability.available) fail("CUDA is not available: " + r.availability.reason);
  static CudaDriver driver(r.api.get());
  return driver;
}

int CudaDriver::driverVersion() const {
  int v = 0;
  check(*api_, api_->driverGetVersion(&v), "cuDriverGetVersion");
  return v;
}

int CudaDriver::deviceCount() const {
  int n = 0;
  check(*api_, api_->deviceGetCount(&n), "cuDeviceGetCount");
  return n;
}

DeviceInfo CudaDriver::deviceInfo(int ordinal) const {
  CUdevice dev = 0;
  check(*api_, api_->deviceGet(&dev, ordinal), "cuDeviceGet(" + std::to_string(ordinal) + ")");
  DeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  check(*api_, api_->deviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName");
  info.name = name;
  auto attr = [&](CUdevice_attribute a, int& out) {
    check(*api_, api_->deviceGetAttribute(&out, a, dev), "cuDeviceGetAttribute(" + std::to_string(a) + ")");
  };
  attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, info.major);
  attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, info.minor);
  attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, info.smCount);
  attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE, info.warpSize);
  attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, info.maxThreadsPerBlock);
  attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, info.maxThreadsPerSm);
  attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, info.maxBlocksPerSm);
  attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, info.sharedMemPerBlock);
  attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, info.sharedMemPerBlockOptin);
  attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, info.sharedMemPerSm);
  attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, info.registersPerBlock);
  attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, info.registersPerSm);
  // Informational attributes (some deprecated in CUDA 13): a driver that refuses one leaves it 0.
  auto optionalAttr = [&](CUdevice_attribute a, int& out) {
    if (api_->deviceGetAttribute(&out, a, dev) != CUDA_SUCCESS) out = 0;
  };
  optionalAttr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, info.l2CacheBytes);
  optionalAttr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, info.memoryBusBits);
  optionalAttr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, info.memoryClockKHz);
  optionalAttr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, info.clockKHz);
  check(*api_, api_->deviceTotalMem(&info.globalMemBytes, dev), "cuDeviceTotalMem");
  return info;
}

ContextHandle CudaDriver::retainPrimaryContext(int ordinal) const {
  CUdevice dev = 0;
  check(*api_, api_->deviceGet(&dev, ordinal), "cuDeviceGet(" + std::to_string(ordinal) + ")");
  CUcontext ctx = nullptr;
  check(*api_, api_->primaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain(device " + std::to_string(ordinal) + ")");
  return ctx;
}

void CudaDriver::releasePrimaryContext(int ordinal) const {
  CUdevice dev = 0;
  check(*api_, api_->deviceGet(&dev, ordinal), "cuDeviceGet(" + std::to_string(ordinal) + ")");
  check(*api_, api_->primaryCtxRelease(dev), "cuDevicePrimaryCtxRelease(device " + std::to_string(ordinal) + ")");
}

void CudaDriver::setCurrent(ContextHandle context) const {
  check(*api_, api_->ctxSetCurrent(context), "cuCtxSetCurrent");
}

void CudaDriver::resetPrimaryContext(int ordinal) const {
  CUdevice dev = 0;
  check(*api_, api_->deviceGet(&dev, ordinal), "cuDeviceGet(" + std::to_string(ordinal) + ")");
  check(*api_, api_->primaryCtxReset(dev), "cuDevicePrimaryCtxReset(device " + std::to_string(ordinal) + ")");
}

void CudaDriver::memoryInfo(std::size_t& freeBytes, std::size_t& totalBytes) const {
  check(*api_, api_->memGetInfo(&freeBytes, &totalBytes), "cuMemGetInfo");
}

void CudaDriver::synchronize() const { check(*api_, api_->ctxSynchronize(), "cuCtxSynchronize"); }

ModuleHandle CudaDriver::loadModule(const void* image) const {
  CUmodule m = nullptr;
  check(*api_, api_->moduleLoadData(&m, image), "cuModuleLoadData");
  return m;
}

void CudaDriver::unloadModule(ModuleHandle module) const {
  check(*api_, api_->moduleUnload(module), "cuModuleUnload");
}

FunctionHandle CudaDriver::function(ModuleHandle module, const std::string& name) const {
  CUfunction f = nullptr;
  check(*api_, api_->moduleGetFunction(&f, module, name.c_str()), "cuModuleGetFunction('" + name + "')");
  return f;
}

FunctionInfo CudaDriver::functionInfo(FunctionHandle function) const {
  FunctionInfo info;
  auto attr = [&](CUfunction_attribute a, int& out) {
    check(*api_, api_->funcGetAttribute(&out, a, function), "cuFuncGetAttribute(" + std::to_string(a) + ")");
  };
  attr(CU_FUNC_ATTRIBUTE_NUM_REGS, info.registersPerThread);
  attr(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, info.staticSharedBytes);
  attr(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, info.localBytesPerThread);
  attr(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, info.maxThreadsPerBlock);
  return info;
}

void CudaDriver::setMaxDynamicSharedMemory(FunctionHandle function, int bytes) const {
  check(*api_, api_->funcSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
        "cuFuncSetAttribute(max dynamic shared memory " + std::to_string(bytes) + " bytes)");
}

DevicePtr CudaDriver::allocate(std::size_t bytes) const {
  CUdeviceptr p = 0;
  check(*api_, api_->memAlloc(&p, bytes), "cuMemAlloc(" + std::to_string(bytes) + " bytes)");
  return p;
}

void CudaDriver::free(DevicePtr ptr) const { check(*api_, api_->memFree(ptr), "cuMemFree"); }

void CudaDriver::copyToDevice(DevicePtr dst, const void* src, std::size_t bytes) const {
  check(*api_, api_->memcpyHtoD(dst, src, bytes), "cuMemcpyHtoD(" + std::to_string(bytes) + " bytes)");
}

void CudaDriver::copyToHost(void* dst, DevicePtr src, std::size_t bytes) const {
  check(*api_, api_->memcpyDtoH(dst, src, bytes), "cuMemcpyDtoH(" + std::to_string(bytes) + " bytes)");
}

void CudaDriver::copyOnDevice(DevicePtr dst, DevicePtr src, std::size_t bytes) const {
  check(*api_, api_->memcpyDtoD(dst, src, bytes), "cuMemcpyDtoD(" + std::to_string(bytes) + " bytes)");
}

void CudaDriver::encodeTensorMap(void* map, bool bf16, DevicePtr base, const std::vector<uint64_t>& dims,
                                 const std::vector<uint32_t>& box) const {
  const cuuint32_t rank = cuuint32_t(dims.size());
  std::vector<cuuint64_t> size(dims.begin(), dims.end()), strides;  // strides: bytes, of dims 1.. (dim 0 is dense)
  uint64_t stride = 2;
  for (size_t d = 0; d + 1 < dims.size(); ++d) strides.push_back(stride *= dims[d]);
  std::vector<cuuint32_t> boxDims(box.begin(), box.end()), unit(dims.size(), 1);
  check(*api_,
        api_->tensorMapEncodeTiled(static_cast<CUtensorMap*>(map), bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                                   rank, reinterpret_cast<void*>(base), size.data(), strides.data(), boxDims.data(), unit.data(),
                                   CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        "cuTensorMapEncodeTiled(rank " + std::to_string(rank) + ")");
}

void CudaDriver::fillZero(DevicePtr dst, std::size_t bytes) const {
  check(*api_, api_->memsetD8(dst, 0, bytes), "cuMemsetD8(" + std::to_string(bytes) + " bytes)");
}

void CudaDriver::launch(FunctionHandle function, const LaunchConfig& c, void** args, StreamHandle stream) const {
  CUresult r = api_->launchKernel(function, c.grid.x, c.grid.y, c.grid.z, c.block.x, c.block.y, c.block.z,
                                  c.sharedBytes, stream, args, nullptr);
  if (r == CUDA_SUCCESS) return;
  check(*api_, r, "cuLaunchKernel(grid " + dims(c.grid) + ", block " + dims(c.block) + ", " +
                      std::to_string(c.sharedBytes) + " bytes dynamic shared memory)");
}

StreamHandle CudaDriver::createStream() const {
  CUstream s = nullptr;
  check(*api_, api_->streamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  return s;
}

void CudaDriver::destroyStream(StreamHandle stream) const {
  check(*api_, api_->streamDestroy(stream), "cuStreamDestroy");
}

// Thread-local capture: another thread's driver calls (a window's second run) neither join nor break it.
void CudaDriver::beginCapture(StreamHandle stream) const {
  check(*api_, api_->streamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
}

GraphExecHandle CudaDriver::endCapture(StreamHandle stream) const {
  CUgraph graph = nullptr;
  check(*api_, api_->streamEndCapture(stream, &graph), "cuStreamEndCapture");
  CUgraphExec exec = nullptr;
  CUresult r = api_->graphInstantiate(&exec, graph, 0);
  api_->graphDestroy(graph);  // the executable graph keeps what it needs
  check(*api_, r, "cuGraphInstantiate");
  return exec;
}

void CudaDriver::launchGraph(GraphExecHandle graph, StreamHandle stream) const {
  check(*api_, api_->graphLaunch(graph, stream), "cuGraphLaunch");
}

void CudaDriver::destroyGraph(GraphExecHandle graph) const {
  check(*api_, api_->graphExecDestroy(graph), "cuGraphExecDestroy");
}

EventHandle CudaDriver::createEvent() const {
  CUevent e = nullptr;
  check(*api_, api_->eventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
  return e;
}

void CudaDriver::destroyEvent(EventHandle event) const {
  check(*api_, api_->eventDestroy(event), "cuEventDestroy");
}

void CudaDriver::recordEvent(EventHandle event, StreamHandle stream) const {
  check(*api_, api_->eventRecord(event, stream), "cuEventRecord");
}

void CudaDriver::synchronizeEvent(EventHandle event) const {
  check(*api_, api_->eventSynchronize(event), "cuEventSynchronize");
}

float CudaDriver::elapsedMs(EventHandle start, EventHandle end) const {
  float ms = 0;
  check(*api_, api_->eventElapsedTime(&ms, start, end), "cuEventElapsedTime");
  return ms;
}

}  // namespace tessera::cuda
