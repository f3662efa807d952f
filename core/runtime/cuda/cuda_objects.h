#pragma once
// Owners for driver resources: each frees its resource in its destructor (errors there are swallowed, since a
// destructor must not throw) and is move-only. All but CudaContext need a current context, and must be destroyed
// before the CudaContext they were made under.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "runtime/cuda/cuda_driver.h"

namespace tessera::cuda {

// Retains the device's primary context (shared with any other user of the device in this process) and makes it
// current on the constructing thread. A worker thread calls makeCurrent() before its first driver call.
class CudaContext {
 public:
  explicit CudaContext(int ordinal = 0);
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  void makeCurrent() const;
  int ordinal() const { return ordinal_; }
  const DeviceInfo& device() const { return device_; }

 private:
  int ordinal_;
  ContextHandle handle_;
  DeviceInfo device_;
};

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;

  DevicePtr ptr() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  // Copies exactly bytes() in or out; the host side must hold that many.
  void upload(const void* src) const;
  void download(void* dst) const;
  void zero() const;

 private:
  void release() noexcept;
  DevicePtr ptr_ = 0;
  std::size_t bytes_ = 0;
};

class Module {
 public:
  Module() = default;
  // From NvrtcResult::cubin (or PTX text with its terminating NUL).
  explicit Module(const std::vector<char>& image);
  ~Module();
  Module(Module&& other) noexcept;
  Module& operator=(Module&& other) noexcept;

  FunctionHandle function(const std::string& name) const;  // throws naming the function when absent

 private:
  void release() noexcept;
  ModuleHandle handle_ = nullptr;
};

class Event {
 public:
  Event();
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;

  void record(StreamHandle stream = nullptr) const;
  void synchronize() const;
  static float elapsedMs(const Event& start, const Event& end);

 private:
  void release() noexcept;
  EventHandle handle_ = nullptr;
};

// A stream of its own (not the default stream), for capturing launches into a graph. Not moved: made and dropped
// where it is used.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  StreamHandle handle() const { return handle_; }

 private:
  StreamHandle handle_ = nullptr;
};

// The launches `launchAll` makes on `stream` (none of them run), as one instantiated CUDA graph. A capture that
// throws is ended and its graph dropped before the error goes on.
class CapturedGraph {
 public:
  CapturedGraph(const Stream& stream, const std::function<void(StreamHandle)>& launchAll);
  ~CapturedGraph();
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  void launch(const Stream& stream) const;

 private:
  GraphExecHandle handle_ = nullptr;
};

}  // namespace tessera::cuda
