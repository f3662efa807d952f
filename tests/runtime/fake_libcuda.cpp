// A stand-in for libcuda.so.1 so CI (which has no GPU) runs the driver layer end to end: entry points through
// cuGetProcAddress, device queries, contexts per thread, memory, launches, events and error reporting. Memory is
// host memory; the module holds no code: kernels named "add" and "fault" are imitated on the host, and so is the
// executor's module entry ("tsr_module_entry": c = a + b over the grid's threads, pointers only). It is loaded
// only by test_cuda_runtime_fake (through LD_LIBRARY_PATH) and never installed.
#include <cuda.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

struct CUctx_st {
  int device = 0;
};
struct CUmod_st {
  bool faulty = false;  // built with $TESSERA_TEST_FAULT: its entry faults like an illegal address
};
struct CUfunc_st {
  std::string name;
};
struct CUevent_st {
  long launchesAtRecord = -1;
};

// A launch as the fake runs it: the kernel, its thread count and the pointers and count it reads.
struct FakeLaunch {
  CUfunction f = nullptr;
  long threads = 0, n = 0;
  CUdeviceptr a = 0, b = 0, c = 0;
};
// A stream records the launches made on it while it captures; a graph replays them.
struct CUstream_st {
  bool capturing = false;
  std::vector<FakeLaunch> captured;
};
struct CUgraph_st {
  std::vector<FakeLaunch> launches;
};
struct CUgraphExec_st {
  std::vector<FakeLaunch> launches;
};

namespace {

CUctx_st primary;
int retained = 0;
thread_local CUcontext current = nullptr;
long launches = 0;
CUresult sticky = CUDA_SUCCESS;  // a faulted kernel poisons the context, as on a GPU
CUfunc_st addKernel{"add"}, faultKernel{"fault"}, moduleEntryKernel{"tsr_module_entry"};

CUresult needContext() {
  if (!current) return CUDA_ERROR_INVALID_CONTEXT;
  return sticky;
}

void runLaunch(const FakeLaunch& l) {
  ++launches;
  if (l.f == &faultKernel) {
    sticky = CUDA_ERROR_ILLEGAL_ADDRESS;  // reported by the next call, like an asynchronous fault
    return;
  }
  auto a = reinterpret_cast<const float*>(l.a), b = reinterpret_cast<const float*>(l.b);
  auto c = reinterpret_cast<float*>(l.c);
  for (long i = 0; i < l.n && i < l.threads; ++i) c[i] = a[i] + b[i];
}

}  // namespace

extern "C" {

CUresult cuGetErrorName(CUresult error, const char** str) {
  switch (error) {
    case CUDA_SUCCESS: *str = "CUDA_SUCCESS"; return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE: *str = "CUDA_ERROR_INVALID_VALUE"; return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_CONTEXT: *str = "CUDA_ERROR_INVALID_CONTEXT"; return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_FOUND: *str = "CUDA_ERROR_NOT_FOUND"; return CUDA_SUCCESS;
    case CUDA_ERROR_ILLEGAL_ADDRESS: *str = "CUDA_ERROR_ILLEGAL_ADDRESS"; return CUDA_SUCCESS;
    default: *str = nullptr; return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuGetErrorString(CUresult error, const char** str) {
  *str = error == CUDA_ERROR_ILLEGAL_ADDRESS ? "an illegal memory access was encountered" : "fake driver error";
  return CUDA_SUCCESS;
}

CUresult cuInit(unsigned int) { return CUDA_SUCCESS; }

// NVRTC itself opens libcuda.so.1 and asks for private tables; the fake has none, and NVRTC then goes on without.
CUresult cuGetExportTable(const void** table, const CUuuid*) {
  *table = nullptr;
  return CUDA_ERROR_NOT_SUPPORTED;
}
CUresult cuDriverGetVersion(int* v) { *v = 13000; return CUDA_SUCCESS; }
CUresult cuDeviceGetCount(int* n) { *n = 1; return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice* d, int ordinal) { *d = ordinal; return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }

CUresult cuDeviceGetName(char* name, int len, CUdevice) {
  std::strncpy(name, "Fake H200 (tests/runtime)", static_cast<size_t>(len));
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int* v, CUdevice_attribute a, CUdevice) {
  static const std::map<int, int> values = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9}, {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 132}, {CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024}, {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 2048},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, 32}, {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 49152},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 232448},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 233472},
      {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 65536}, {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, 65536},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 52428800}, {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 6144}};
  auto it = values.find(a);
  if (it == values.end()) return CUDA_ERROR_INVALID_VALUE;  // the clock rates: optional in the caller
  *v = it->second;
  return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(size_t* bytes, CUdevice) { *bytes = size_t(141) << 30; return CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice) {
  if (sticky != CUDA_SUCCESS) return sticky;  // only after a reset that did not clear it ($TESSERA_FAKE_CUDA_STICKY)
  ++retained;
  *c = &primary;
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease(CUdevice) { return retained-- > 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT; }
CUresult cuCtxSetCurrent(CUcontext c) { current = c; return CUDA_SUCCESS; }
// A clean context again; with $TESSERA_FAKE_CUDA_STICKY set, the fault outlives the reset, as on the H200's driver
// (the retain after it fails with the same error).
CUresult cuDevicePrimaryCtxReset(CUdevice) {
  if (!std::getenv("TESSERA_FAKE_CUDA_STICKY")) sticky = CUDA_SUCCESS;
  return CUDA_SUCCESS;
}
CUresult cuMemGetInfo(size_t* freeBytes, size_t* total) {
  if (CUresult r = needContext()) return r;
  *total = size_t(141) << 30;
  const char* told = std::getenv("TESSERA_FAKE_CUDA_FREE_BYTES");  // a test's nearly full device
  *freeBytes = told ? size_t(std::strtoull(told, nullptr, 10)) : size_t(140) << 30;
  return CUDA_SUCCESS;
}
CUresult cuCtxSynchronize() { return needContext(); }

CUresult cuModuleLoadData(CUmodule* m, const void* image) {
  if (CUresult r = needContext()) return r;
  if (std::memcmp(image, "\x7f" "ELF", 4) != 0) return CUDA_ERROR_INVALID_VALUE;
  *m = new CUmod_st;
  // An ELF64 image ends with its section headers: e_shoff (at 0x28) + e_shnum (0x3c) * e_shentsize (0x3a).
  const char* bytes = static_cast<const char*>(image);
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0;
  std::memcpy(&shoff, bytes + 0x28, 8);
  std::memcpy(&shentsize, bytes + 0x3a, 2);
  std::memcpy(&shnum, bytes + 0x3c, 2);
  std::string_view whole(bytes, shoff + uint64_t(shentsize) * shnum);
  (*m)->faulty = whole.find("tsr_test_fault_marker") != std::string_view::npos;
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(CUmodule m) { delete m; return needContext(); }

CUresult cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
  if (CUresult r = needContext()) return r;
  std::string n = name;
  if (n != "add" && n != "fault" && n != moduleEntryKernel.name) return CUDA_ERROR_NOT_FOUND;
  *f = n == "add" ? &addKernel : n == "fault" || m->faulty ? &faultKernel : &moduleEntryKernel;
  return CUDA_SUCCESS;
}

CUresult cuFuncGetAttribute(int* v, CUfunction_attribute a, CUfunction) {
  *v = a == CU_FUNC_ATTRIBUTE_NUM_REGS ? 16 : a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
  return needContext();
}
CUresult cuFuncSetAttribute(CUfunction, CUfunction_attribute, int) { return needContext(); }

CUresult cuMemAlloc(CUdeviceptr* p, size_t bytes) {
  if (CUresult r = needContext()) return r;
  *p = reinterpret_cast<CUdeviceptr>(std::malloc(bytes));
  return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult cuMemFree(CUdeviceptr p) { std::free(reinterpret_cast<void*>(p)); return needContext(); }
CUresult cuMemcpyHtoD(CUdeviceptr d, const void* s, size_t n) {
  if (CUresult r = needContext()) return r;
  std::memcpy(reinterpret_cast<void*>(d), s, n);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoH(void* d, CUdeviceptr s, size_t n) {
  if (CUresult r = needContext()) return r;
  std::memcpy(d, reinterpret_cast<void*>(s), n);
  return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoD(CUdeviceptr d, CUdeviceptr s, size_t n) {
  if (CUresult r = needContext()) return r;
  std::memcpy(reinterpret_cast<void*>(d), reinterpret_cast<void*>(s), n);
  return CUDA_SUCCESS;
}
CUresult cuMemsetD8(CUdeviceptr d, unsigned char v, size_t n) {
  if (CUresult r = needContext()) return r;
  std::memset(reinterpret_cast<void*>(d), v, n);
  return CUDA_SUCCESS;
}

// The tensor map's rules this fake can check: rank 1..5, a 16-byte aligned base, boxes of 1..256 elements.
CUresult cuTensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType, cuuint32_t rank, void* base, const cuuint64_t*,
                                const cuuint64_t*, const cuuint32_t* box, const cuuint32_t*, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  if (rank < 1 || rank > 5 || reinterpret_cast<uintptr_t>(base) % 16 != 0) return CUDA_ERROR_INVALID_VALUE;
  for (cuuint32_t d = 0; d < rank; ++d)
    if (box[d] < 1 || box[d] > 256) return CUDA_ERROR_INVALID_VALUE;
  std::memset(map, 0, sizeof(CUtensorMap));
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned, CUstream stream, void** args, void**) {
  if (CUresult r = needContext()) return r;
  if (bx * by * bz > 1024 || gx * gy * gz == 0) return CUDA_ERROR_INVALID_VALUE;
  FakeLaunch l{f, long(gx) * bx};
  if (f != &faultKernel) {
    l.a = *static_cast<CUdeviceptr*>(args[0]);
    l.b = *static_cast<CUdeviceptr*>(args[1]);
    l.c = *static_cast<CUdeviceptr*>(args[2]);
    l.n = f == &moduleEntryKernel ? l.threads : *static_cast<int*>(args[3]);
  }
  if (stream && stream->capturing) stream->captured.push_back(l);
  else runLaunch(l);
  return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream* stream, unsigned) {
  if (CUresult r = needContext()) return r;
  *stream = new CUstream_st;
  return CUDA_SUCCESS;
}
CUresult cuStreamDestroy(CUstream stream) { delete stream; return CUDA_SUCCESS; }
CUresult cuStreamBeginCapture(CUstream stream, CUstreamCaptureMode) {
  if (CUresult r = needContext()) return r;
  if (!stream || stream->capturing) return CUDA_ERROR_INVALID_VALUE;  // the legacy stream cannot capture
  stream->capturing = true;
  stream->captured.clear();
  return CUDA_SUCCESS;
}
CUresult cuStreamEndCapture(CUstream stream, CUgraph* graph) {
  if (!stream || !stream->capturing) return CUDA_ERROR_INVALID_VALUE;
  stream->capturing = false;
  *graph = new CUgraph_st{std::move(stream->captured)};
  return needContext();
}
CUresult cuGraphInstantiateWithFlags(CUgraphExec* exec, CUgraph graph, unsigned long long) {
  if (CUresult r = needContext()) return r;
  *exec = new CUgraphExec_st{graph->launches};
  return CUDA_SUCCESS;
}
CUresult cuGraphDestroy(CUgraph graph) { delete graph; return CUDA_SUCCESS; }
CUresult cuGraphExecDestroy(CUgraphExec exec) { delete exec; return CUDA_SUCCESS; }
CUresult cuGraphLaunch(CUgraphExec exec, CUstream) {
  if (CUresult r = needContext()) return r;
  for (const FakeLaunch& l : exec->launches) runLaunch(l);
  return CUDA_SUCCESS;
}

CUresult cuEventCreate(CUevent* e, unsigned) {
  if (CUresult r = needContext()) return r;
  *e = new CUevent_st;
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy(CUevent e) { delete e; return CUDA_SUCCESS; }
CUresult cuEventRecord(CUevent e, CUstream) {
  if (CUresult r = needContext()) return r;
  e->launchesAtRecord = launches;
  return CUDA_SUCCESS;
}
CUresult cuEventSynchronize(CUevent) { return needContext(); }
CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end) {  // 0.01 ms per launch in between
  if (start->launchesAtRecord < 0 || end->launchesAtRecord < 0) return CUDA_ERROR_INVALID_VALUE;
  *ms = 0.01f * static_cast<float>(end->launchesAtRecord - start->launchesAtRecord);
  return needContext();
}

CUresult cuGetProcAddress(const char* symbol, void** pfn, int, cuuint64_t, CUdriverProcAddressQueryResult* status) {
  // cuda.h maps the versioned names (cuMemAlloc -> cuMemAlloc_v2), so these are the versions a caller built
  // against this header expects for the unversioned names.
  static const std::map<std::string, void*> table = {
#define TESSERA_FAKE_ENTRY(name) {#name, reinterpret_cast<void*>(&name)}
      TESSERA_FAKE_ENTRY(cuDriverGetVersion), TESSERA_FAKE_ENTRY(cuDeviceGetCount), TESSERA_FAKE_ENTRY(cuDeviceGet),
      TESSERA_FAKE_ENTRY(cuDeviceGetName), TESSERA_FAKE_ENTRY(cuDeviceGetAttribute),
      TESSERA_FAKE_ENTRY(cuDeviceTotalMem), TESSERA_FAKE_ENTRY(cuDevicePrimaryCtxRetain),
      TESSERA_FAKE_ENTRY(cuDevicePrimaryCtxRelease), TESSERA_FAKE_ENTRY(cuCtxSetCurrent),
      TESSERA_FAKE_ENTRY(cuDevicePrimaryCtxReset), TESSERA_FAKE_ENTRY(cuMemGetInfo),
      TESSERA_FAKE_ENTRY(cuCtxSynchronize), TESSERA_FAKE_ENTRY(cuModuleLoadData), TESSERA_FAKE_ENTRY(cuModuleUnload),
      TESSERA_FAKE_ENTRY(cuModuleGetFunction), TESSERA_FAKE_ENTRY(cuFuncGetAttribute),
      TESSERA_FAKE_ENTRY(cuFuncSetAttribute), TESSERA_FAKE_ENTRY(cuMemAlloc), TESSERA_FAKE_ENTRY(cuMemFree),
      TESSERA_FAKE_ENTRY(cuMemcpyHtoD), TESSERA_FAKE_ENTRY(cuMemcpyDtoH), TESSERA_FAKE_ENTRY(cuMemcpyDtoD),
      TESSERA_FAKE_ENTRY(cuMemsetD8), TESSERA_FAKE_ENTRY(cuLaunchKernel), TESSERA_FAKE_ENTRY(cuEventCreate),
      TESSERA_FAKE_ENTRY(cuEventDestroy), TESSERA_FAKE_ENTRY(cuEventRecord), TESSERA_FAKE_ENTRY(cuEventSynchronize),
      TESSERA_FAKE_ENTRY(cuEventElapsedTime), TESSERA_FAKE_ENTRY(cuTensorMapEncodeTiled),
      TESSERA_FAKE_ENTRY(cuStreamCreate), TESSERA_FAKE_ENTRY(cuStreamDestroy), TESSERA_FAKE_ENTRY(cuStreamBeginCapture),
      TESSERA_FAKE_ENTRY(cuStreamEndCapture), TESSERA_FAKE_ENTRY(cuGraphInstantiateWithFlags),
      TESSERA_FAKE_ENTRY(cuGraphDestroy), TESSERA_FAKE_ENTRY(cuGraphExecDestroy), TESSERA_FAKE_ENTRY(cuGraphLaunch)};
#undef TESSERA_FAKE_ENTRY
  auto it = table.find(symbol);
  if (status) *status = it == table.end() ? CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND : CU_GET_PROC_ADDRESS_SUCCESS;
  if (it == table.end()) return CUDA_ERROR_NOT_FOUND;
  *pfn = it->second;
  return CUDA_SUCCESS;
}

}  // extern "C"
