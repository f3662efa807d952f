#pragma once
// The messages between a cpu backend and its worker process (worker/main.cpp): length-prefixed frames over a
// Unix socket. The kernels' buffers are not in the frames: they lie in a shared memory region (a memfd both
// processes map), and a run request names their offsets in it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessera::cpu::worker {

// The worker's inherited descriptors: the shared memory region and its end of the socket.
constexpr int kRegionFd = 3;
constexpr int kSocketFd = 4;

enum class Op : uint32_t { Load = 1, Run = 2 };

// Load: dlopen `image` (a shared object's bytes, named `name` in messages) as module `slot`, entry `symbol`.
struct LoadRequest {
  uint32_t slot = 0;
  std::string name, symbol, image;
};

// One call in a run: slot's entry with pointers at `offsets` into the region.
struct RunStep {
  uint32_t slot = 0;
  std::vector<uint64_t> offsets;
};

// Run: the steps in order (one kernel, or a whole model's), timed as one inside the worker; the region is
// regionBytes long.
struct RunRequest {
  std::vector<RunStep> steps;
  uint64_t regionBytes = 0;
  int32_t warmup = 0, reps = 1;
  double budgetMs = 0;
};

struct Reply {
  bool ok = false;
  double ms = 0;        // Run: the median time of one pass over the steps
  std::string message;  // !ok: why
};

// A frame's payload, written and read field by field.
class Frame {
 public:
  Frame() = default;
  explicit Frame(std::string bytes) : bytes_(std::move(bytes)) {}
  template <class T>
  void put(T v) {
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void putString(const std::string& s);
  template <class T>
  T get() {
    T v{};
    take(&v, sizeof v);
    return v;
  }
  std::string getString();
  const std::string& bytes() const { return bytes_; }

 private:
  void take(void* out, size_t n);  // throws Error past the end
  std::string bytes_;
  size_t at_ = 0;
};

Frame encode(const LoadRequest& r);
Frame encode(const RunRequest& r);
Frame encode(const Reply& r);
LoadRequest decodeLoad(Frame& f);  // after the Op
RunRequest decodeRun(Frame& f);
Reply decodeReply(Frame& f);

// One frame over `fd` (a socket: a peer that is gone is an error, never SIGPIPE). false: the peer is gone.
bool sendFrame(int fd, const Frame& f);
// The next frame, or nothing when the peer closed its end. Throws Error on a frame over 2 GiB.
std::optional<Frame> receiveFrame(int fd);

}  // namespace tessera::cpu::worker
