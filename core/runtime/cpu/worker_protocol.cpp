#include "runtime/cpu/worker_protocol.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "ir/error.h"

namespace tessera::cpu::worker {

namespace {

constexpr uint64_t kMaxFrame = uint64_t(1) << 31;

bool sendAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t sent = send(fd, data, n, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    data += sent;
    n -= size_t(sent);
  }
  return true;
}

// false when the peer closed before `n` bytes came.
bool receiveAll(int fd, char* data, size_t n) {
  while (n > 0) {
    ssize_t got = recv(fd, data, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    data += got;
    n -= size_t(got);
  }
  return true;
}

}  // namespace

void Frame::putString(const std::string& s) {
  put<uint64_t>(s.size());
  bytes_ += s;
}

std::string Frame::getString() {
  auto n = get<uint64_t>();
  if (n > bytes_.size() - at_) fail("cpu worker: a message's string runs past its end");
  std::string s = bytes_.substr(at_, n);
  at_ += n;
  return s;
}

void Frame::take(void* out, size_t n) {
  if (n > bytes_.size() - at_) fail("cpu worker: a message ends early");
  if (n) std::memcpy(out, bytes_.data() + at_, n);
  at_ += n;
}

Frame encode(const LoadRequest& r) {
  Frame f;
  f.put(Op::Load);
  f.put(r.slot);
  f.putString(r.name);
  f.putString(r.symbol);
  f.putString(r.image);
  return f;
}

Frame encode(const RunRequest& r) {
  Frame f;
  f.put(Op::Run);
  f.put(r.regionBytes);
  f.put(r.warmup);
  f.put(r.reps);
  f.put(r.budgetMs);
  f.put<uint64_t>(r.steps.size());
  for (const RunStep& step : r.steps) {
    f.put(step.slot);
    f.put<uint64_t>(step.offsets.size());
    for (uint64_t o : step.offsets) f.put(o);
  }
  return f;
}

Frame encode(const Reply& r) {
  Frame f;
  f.put<uint8_t>(r.ok);
  f.put(r.ms);
  f.putString(r.message);
  return f;
}

LoadRequest decodeLoad(Frame& f) {
  LoadRequest r;
  r.slot = f.get<uint32_t>();
  r.name = f.getString();
  r.symbol = f.getString();
  r.image = f.getString();
  return r;
}

RunRequest decodeRun(Frame& f) {
  RunRequest r;
  r.regionBytes = f.get<uint64_t>();
  r.warmup = f.get<int32_t>();
  r.reps = f.get<int32_t>();
  r.budgetMs = f.get<double>();
  // Counts are checked against the frame's size before anything is reserved for them.
  auto count = [&](const char* what) {
    auto n = f.get<uint64_t>();
    if (n > f.bytes().size()) fail("cpu worker: a run request claims " + std::to_string(n) + " " + what);
    return n;
  };
  for (uint64_t steps = count("steps"), s = 0; s < steps; ++s) {
    RunStep step;
    step.slot = f.get<uint32_t>();
    for (uint64_t n = count("parameters"), i = 0; i < n; ++i) step.offsets.push_back(f.get<uint64_t>());
    r.steps.push_back(std::move(step));
  }
  return r;
}

Reply decodeReply(Frame& f) {
  Reply r;
  r.ok = f.get<uint8_t>() != 0;
  r.ms = f.get<double>();
  r.message = f.getString();
  return r;
}

bool sendFrame(int fd, const Frame& f) {
  uint64_t n = f.bytes().size();
  return sendAll(fd, reinterpret_cast<const char*>(&n), sizeof n) && sendAll(fd, f.bytes().data(), n);
}

std::optional<Frame> receiveFrame(int fd) {
  uint64_t n = 0;
  if (!receiveAll(fd, reinterpret_cast<char*>(&n), sizeof n)) return std::nullopt;
  if (n > kMaxFrame) fail("cpu worker: a message of " + std::to_string(n) + " bytes (at most 2 GiB)");
  std::string bytes(n, '\0');
  if (!receiveAll(fd, bytes.data(), n)) return std::nullopt;
  return Frame(std::move(bytes));
}

}  // namespace tessera::cpu::worker
