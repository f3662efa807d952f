// Measuring the host CPU for the cost model: three small loops compiled by the cpu backend's compiler.
#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "ir/error.h"
#include "kernel/host.h"
#include "runtime/cpu/cpu_compiler.h"
#include "runtime/cpu/cpu_threads.h"
#include "runtime/cpu/cpu_timing.h"
#include "tune/target.h"

namespace tessera::tune {
namespace {

constexpr long kCopyElems = 16L << 20;   // 64 MiB per array: far beyond the last-level cache
constexpr int kFmaSteps = 128;
constexpr long kL1Elems = 4096;          // 16 KiB: inside L1
constexpr int kL1Passes = 2000;

// An FMA's result is ready 4 cycles after it issues and a core issues up to two a cycle, so the FMA loop keeps 8
// independent vectors in flight: 8 x the host's lanes (fmaLanes). With 4 (64 lanes on AVX-512) it measured one
// FMA a cycle, half the peak: 244 GFLOP/s on the build machine's two cores, where its conv kernels reach 342.
int fmaLanes() { return int(8 * kernel::hostVectorBytes() / 4); }

// Arguments: a[0] dst, a[1] src, a[2] long n (elements; chunks of TSR_LANES lanes for fma, passes for l1).
std::string source() {
  return "#define TSR_LANES " + std::to_string(fmaLanes()) + "\n" + R"(
#include <omp.h>
extern "C" void tsr_copy(void** a) {
  float* d = (float*)a[0]; const float* s = (const float*)a[1]; long n = *(long*)a[2];
  #pragma omp parallel for simd schedule(static)
  for (long i = 0; i < n; ++i) d[i] = s[i];
}
extern "C" void tsr_fma(void** a) {
  float* d = (float*)a[0]; long chunks = *(long*)a[2];
  #pragma omp parallel for schedule(static)
  for (long c = 0; c < chunks; ++c) {
    float x[TSR_LANES];
    for (int l = 0; l < TSR_LANES; ++l) x[l] = d[c * TSR_LANES + l];
    for (int r = 0; r < 128; ++r)
      #pragma omp simd
      for (int l = 0; l < TSR_LANES; ++l) x[l] = x[l] * 0.999f + 0.001f;
    for (int l = 0; l < TSR_LANES; ++l) d[c * TSR_LANES + l] = x[l];
  }
}
extern "C" void tsr_l1(void** a) {  // one core: the figure is per core
  float* d = (float*)a[0]; long passes = *(long*)a[2];
  float acc[32] = {0};  // independent sums: the loads, not one add chain, set the pace
  for (long p = 0; p < passes; ++p)
    for (long i = 0; i < 4096; i += 32)
      for (int l = 0; l < 32; ++l) acc[l] += d[i + l];
  float s = 0;
  for (int l = 0; l < 32; ++l) s += acc[l];
  d[0] = s;
}
)";
}

// The fastest of several runs (as STREAM reports): what the hardware can do, not what a busy machine let one
// run do.
double timeMs(void (*fn)(void**), float* dst, float* src, long n) {
  void* args[] = {dst, src, &n};
  fn(args);  // warm-up: first touch of the pages, thread start
  double best = cpu::medianHostMs([&] { fn(args); }, 0, 1);
  for (int i = 0; i < 6; ++i) best = std::min(best, cpu::medianHostMs([&] { fn(args); }, 0, 1));
  return best;
}

}  // namespace

cost::Device calibrateCpu(const cost::Device& base) {
  cpu::CpuCompiler compiler;
  cpu::CpuBuild b = compiler.build(source(), "tessera_calibrate");
  if (!b.ok) fail("cpu calibration: " + b.error);
  int threads = cpu::cpuThreads();
  std::vector<float> src(kCopyElems, 1.0f), dst(kCopyElems, 0.0f);
  cost::Device d = base;
  d.smCount = threads;
  double copyMs = timeMs(b.library->function<void(void**)>("tsr_copy"), dst.data(), src.data(), kCopyElems);
  d.dramGBps = 2.0 * double(kCopyElems) * 4 / (copyMs / 1e3) / 1e9;
  long chunks = kCopyElems / fmaLanes() / 16;
  double fmaMs = timeMs(b.library->function<void(void**)>("tsr_fma"), dst.data(), src.data(), chunks);
  d.fp32Gflops = double(chunks) * fmaLanes() * kFmaSteps * 2 / (fmaMs / 1e3) / 1e9;
  std::vector<float> l1(kL1Elems, 1.0f);
  double l1Ms = timeMs(b.library->function<void(void**)>("tsr_l1"), l1.data(), nullptr, kL1Passes);
  d.l1GBpsPerSm = double(kL1Elems) * 4 * kL1Passes / (l1Ms / 1e3) / 1e9;
  d.l2GBps = std::max(d.l2GBps, 4 * d.dramGBps);
  // The FMA loop ran on the widest vectors the kernels use: scalar code is that many times slower.
  d.simdLanes = int(kernel::hostVectorBytes() / 4);
  d.note = "measured by tessera-cli tune --calibrate-cpu (copy " + std::to_string(int(d.dramGBps)) + " GB/s, " +
           std::to_string(int(d.fp32Gflops)) + " GFLOP/s, " + std::to_string(threads) + " threads)";
  return d;
}

}  // namespace tessera::tune
