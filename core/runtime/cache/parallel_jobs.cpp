#include "runtime/cache/parallel_jobs.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera::modcache {

unsigned hardwareThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

void runJobs(size_t n, const std::function<void(size_t)>& job, unsigned threads) {
  size_t workers = std::min<size_t>(n, threads ? threads : hardwareThreads());
  std::atomic<size_t> next{0};
  std::exception_ptr first;
  std::mutex firstMutex;
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) {
      try {
        job(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(firstMutex);
        if (!first) first = std::current_exception();
      }
    }
  };
  std::vector<std::thread> others;
  for (size_t t = 1; t < workers; ++t) others.emplace_back(work);
  work();
  for (std::thread& t : others) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace tessera::modcache
