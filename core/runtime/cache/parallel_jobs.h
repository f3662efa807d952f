#pragma once
// A bounded pool for independent jobs (compiling a model's kernels): each job runs once, on one of at most
// `threads` threads, the calling thread among them.
#include <cstddef>
#include <functional>

namespace tessera::modcache {

// The hardware's threads (at least 1).
unsigned hardwareThreads();

// Runs job(0) .. job(n - 1), at most `threads` at once (0 = hardwareThreads()), and returns when all have
// finished. Jobs report their own failures; an exception that escapes one is rethrown here once all have
// finished.
void runJobs(size_t n, const std::function<void(size_t)>& job, unsigned threads = 0);

}  // namespace tessera::modcache
