// The CUDA backend in a build without the CUDA toolkit: every call says so plainly, nothing crashes.
#include "ir/error.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/nvrtc_compiler.h"

namespace tessera::cuda {

namespace {
constexpr const char* kReason = "built without CUDA";
[[noreturn]] void unavailable() {
  fail("CUDA is unavailable in this build (built without CUDA: no toolkit with NVRTC was found at configure time)");
}
}  // namespace

struct CudaDriver::Api {};

Availability cudaAvailability() { return {false, kReason}; }
CudaDriver& CudaDriver::get() { unavailable(); }

int CudaDriver::driverVersion() const { unavailable(); }
int CudaDriver::deviceCount() const { unavailable(); }
DeviceInfo CudaDriver::deviceInfo(int) const { unavailable(); }
ContextHandle CudaDriver::retainPrimaryContext(int) const { unavailable(); }
void CudaDriver::releasePrimaryContext(int) const { unavailable(); }
void CudaDriver::setCurrent(ContextHandle) const { unavailable(); }
void CudaDriver::resetPrimaryContext(int) const { unavailable(); }
void CudaDriver::memoryInfo(std::size_t&, std::size_t&) const { unavailable(); }
void CudaDriver::synchronize() const { unavailable(); }
ModuleHandle CudaDriver::loadModule(const void*) const { unavailable(); }
void CudaDriver::unloadModule(ModuleHandle) const { unavailable(); }
FunctionHandle CudaDriver::function(ModuleHandle, const std::string&) const { unavailable(); }
FunctionInfo CudaDriver::functionInfo(FunctionHandle) const { unavailable(); }
void CudaDriver::setMaxDynamicSharedMemory(FunctionHandle, int) const { unavailable(); }
DevicePtr CudaDriver::allocate(std::size_t) const { unavailable(); }
void CudaDriver::free(DevicePtr) const { unavailable(); }
void CudaDriver::copyToDevice(DevicePtr, const void*, std::size_t) const { unavailable(); }
void CudaDriver::copyToHost(void*, DevicePtr, std::size_t) const { unavailable(); }
void CudaDriver::copyOnDevice(DevicePtr, DevicePtr, std::size_t) const { unavailable(); }
void CudaDriver::fillZero(DevicePtr, std::size_t) const { unavailable(); }
void CudaDriver::encodeTensorMap(void*, bool, DevicePtr, const std::vector<uint64_t>&, const std::vector<uint32_t>&) const { unavailable(); }
void CudaDriver::launch(FunctionHandle, const LaunchConfig&, void**, StreamHandle) const { unavailable(); }
StreamHandle CudaDriver::createStream() const { unavailable(); }
void CudaDriver::destroyStream(StreamHandle) const { unavailable(); }
void CudaDriver::beginCapture(StreamHandle) const { unavailable(); }
GraphExecHandle CudaDriver::endCapture(StreamHandle) const { unavailable(); }
void CudaDriver::launchGraph(GraphExecHandle, StreamHandle) const { unavailable(); }
void CudaDriver::destroyGraph(GraphExecHandle) const { unavailable(); }
EventHandle CudaDriver::createEvent() const { unavailable(); }
void CudaDriver::destroyEvent(EventHandle) const { unavailable(); }
void CudaDriver::recordEvent(EventHandle, StreamHandle) const { unavailable(); }
void CudaDriver::synchronizeEvent(EventHandle) const { unavailable(); }
float CudaDriver::elapsedMs(EventHandle, EventHandle) const { unavailable(); }

NvrtcCompiler::NvrtcCompiler() = default;
NvrtcResult NvrtcCompiler::compile(const std::string&, const std::string&, const std::vector<std::string>&,
                                   const std::string&) const {
  unavailable();
}
std::string NvrtcCompiler::defaultArch() { return "sm_90"; }
std::string NvrtcCompiler::version() { unavailable(); }
std::vector<std::string> NvrtcCompiler::supportedArchs() { return {}; }

}  // namespace tessera::cuda
