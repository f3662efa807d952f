#include "runtime/cuda/cuda_objects.h"

#include <utility>

#include "ir/error.h"

namespace tessera::cuda {

CudaContext::CudaContext(int ordinal) : ordinal_(ordinal) {
  CudaDriver& d = CudaDriver::get();
  if (ordinal < 0 || ordinal >= d.deviceCount())
    fail("CUDA: no device " + std::to_string(ordinal) + " (" + std::to_string(d.deviceCount()) + " present)");
  handle_ = d.retainPrimaryContext(ordinal);
  d.setCurrent(handle_);
  device_ = d.deviceInfo(ordinal);
}

CudaContext::~CudaContext() {
  try {
    CudaDriver::get().releasePrimaryContext(ordinal_);
  } catch (const Error&) {  // nothing to do about it in a destructor
  }
}

void CudaContext::makeCurrent() const { CudaDriver::get().setCurrent(handle_); }

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes) ptr_ = CudaDriver::get().allocate(bytes);
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    ptr_ = std::exchange(other.ptr_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::release() noexcept {
  if (!ptr_) return;
  try {
    CudaDriver::get().free(ptr_);
  } catch (const Error&) {
  }
  ptr_ = 0;
  bytes_ = 0;
}

void DeviceBuffer::upload(const void* src) const {
  if (bytes_) CudaDriver::get().copyToDevice(ptr_, src, bytes_);
}

void DeviceBuffer::download(void* dst) const {
  if (bytes_) CudaDriver::get().copyToHost(dst, ptr_, bytes_);
}

void DeviceBuffer::zero() const {
  if (bytes_) CudaDriver::get().fillZero(ptr_, bytes_);
}

Module::Module(const std::vector<char>& image) {
  if (image.empty()) fail("CUDA: cannot load an empty module image (did the compile fail?)");
  handle_ = CudaDriver::get().loadModule(image.data());
}

Module::~Module() { release(); }

Module::Module(Module&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}

Module& Module::operator=(Module&& other) noexcept {
  if (this != &other) {
    release();
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

void Module::release() noexcept {
  if (!handle_) return;
  try {
    CudaDriver::get().unloadModule(handle_);
  } catch (const Error&) {
  }
  handle_ = nullptr;
}

FunctionHandle Module::function(const std::string& name) const {
  if (!handle_) fail("CUDA: looking up '" + name + "' in a module that is not loaded");
  return CudaDriver::get().function(handle_, name);
}

Event::Event() : handle_(CudaDriver::get().createEvent()) {}

Event::~Event() { release(); }

Event::Event(Event&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    release();
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

void Event::release() noexcept {
  if (!handle_) return;
  try {
    CudaDriver::get().destroyEvent(handle_);
  } catch (const Error&) {
  }
  handle_ = nullptr;
}

void Event::record(StreamHandle stream) const { CudaDriver::get().recordEvent(handle_, stream); }

void Event::synchronize() const { CudaDriver::get().synchronizeEvent(handle_); }

float Event::elapsedMs(const Event& start, const Event& end) {
  return CudaDriver::get().elapsedMs(start.handle_, end.handle_);
}

Stream::Stream() : handle_(CudaDriver::get().createStream()) {}

Stream::~Stream() {
  try {
    CudaDriver::get().destroyStream(handle_);
  } catch (const Error&) {
  }
}

CapturedGraph::CapturedGraph(const Stream& stream, const std::function<void(StreamHandle)>& launchAll) {
  CudaDriver& d = CudaDriver::get();
  d.beginCapture(stream.handle());
  try {
    launchAll(stream.handle());
  } catch (...) {
    try {
      d.destroyGraph(d.endCapture(stream.handle()));
    } catch (const Error&) {  // the first error is the one to report
    }
    throw;
  }
  handle_ = d.endCapture(stream.handle());
}

CapturedGraph::~CapturedGraph() {
  try {
    CudaDriver::get().destroyGraph(handle_);
  } catch (const Error&) {
  }
}

void CapturedGraph::launch(const Stream& stream) const { CudaDriver::get().launchGraph(handle_, stream.handle()); }

}  // namespace tessera::cuda
