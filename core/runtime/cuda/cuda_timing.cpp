#include "runtime/cuda/cuda_timing.h"

#include <algorithm>
#include <vector>

#include "ir/error.h"
#include "runtime/timing_budget.h"
#include "runtime/cuda/cuda_objects.h"

namespace tessera::cuda {

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// medianKernelMs on `stream` (null: the default stream).
double medianOnStream(const std::function<void()>& launch, int warmup, int reps, double budgetMs, StreamHandle stream) {
  if (reps < 1 || reps > 100000 || warmup < 0 || warmup > 100000)
    fail("CUDA timing: reps must be 1..100000 and warmup 0..100000 (got reps " + std::to_string(reps) +
         ", warmup " + std::to_string(warmup) + ")");
  if (warmup > 0 && budgetMs > 0) {
    Event start, end;
    start.record(stream);
    launch();
    end.record(stream);
    end.synchronize();
    runtime::TimedCalls left = runtime::callsWithin(budgetMs, Event::elapsedMs(start, end), warmup - 1, reps);
    warmup = left.warmup;
    reps = left.reps;
  }
  for (int i = 0; i < warmup; ++i) launch();
  // One pair of events per launch, recorded back to back, so the host never waits between launches.
  std::vector<Event> starts(static_cast<size_t>(reps)), ends(static_cast<size_t>(reps));
  for (size_t i = 0; i < starts.size(); ++i) {
    starts[i].record(stream);
    launch();
    ends[i].record(stream);
  }
  CudaDriver::get().synchronize();
  std::vector<double> ms;
  for (size_t i = 0; i < starts.size(); ++i) ms.push_back(Event::elapsedMs(starts[i], ends[i]));
  return median(std::move(ms));
}

}  // namespace

double medianKernelMs(const std::function<void()>& launch, int warmup, int reps, double budgetMs) {
  return medianOnStream(launch, warmup, reps, budgetMs, nullptr);
}

double medianGraphMs(const std::function<void(StreamHandle)>& launchAll, int warmup, int reps, double budgetMs) {
  CudaDriver::get().synchronize();  // the stream does not wait on the default stream's work
  Stream stream;
  CapturedGraph graph(stream, launchAll);
  return medianOnStream([&] { graph.launch(stream); }, warmup, reps, budgetMs, stream.handle());
}

double medianKernelMs(FunctionHandle function, const LaunchConfig& config, void** args, int warmup, int reps) {
  CudaDriver& d = CudaDriver::get();
  return medianKernelMs([&] { d.launch(function, config, args); }, warmup, reps);
}

}  // namespace tessera::cuda
