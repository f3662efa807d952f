#include "cost/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ops/stats.h"

namespace tessera::cost {

std::string_view boundName(Bound b) {
  switch (b) {
    case Bound::Memory: return "memory";
    case Bound::Compute: return "compute";
    case Bound::Latency: return "latency";
  }
  return "latency";
}

namespace {

constexpr double kMsPerS = 1e3;

double msFor(double amount, double perSecond) { return perSecond > 0 ? amount / perSecond * kMsPerS : 0; }

// Bytes from DRAM: compulsory traffic, plus the re-reads beyond it in the share of the inputs the L2 cannot hold.
double dramBytes(const KernelFigures& f, const Device& d) {
  double rereads = std::max(0.0, f.l2Bytes - f.compulsoryBytes);
  double missShare = f.inputBytes > 0 ? std::clamp(1.0 - double(d.l2Bytes) / f.inputBytes, 0.0, 1.0) : 0.0;
  return f.compulsoryBytes + rereads * missShare;
}

// GPU occupancy: resident blocks per SM from threads, shared memory, registers and the block limit.
void occupancy(const KernelFigures& f, const Device& d, Estimate& e) {
  int64_t t = std::max<int64_t>(1, f.threadsPerBlock);
  if (t > d.maxThreadsPerBlock) {
    e.feasible = false;
    e.infeasible = std::to_string(t) + " threads per block (the device allows " + std::to_string(d.maxThreadsPerBlock) + ")";
    return;
  }
  if (f.sharedBytesPerBlock > d.sharedBytesPerBlockOptin) {
    e.feasible = false;
    e.infeasible = std::to_string(f.sharedBytesPerBlock) + " bytes of shared memory per block (the device allows " +
                   std::to_string(d.sharedBytesPerBlockOptin) + ")";
    return;
  }
  int64_t warps = (t + 31) / 32;
  int64_t regsPerBlock = int64_t(f.registersPerThread) * warps * 32;
  std::pair<int64_t, const char*> limits[] = {
      {d.maxBlocksPerSm, "blocks"},
      {d.maxThreadsPerSm / (warps * 32), "threads"},
      {f.sharedBytesPerBlock > 0 ? d.sharedBytesPerSm / f.sharedBytesPerBlock : d.maxBlocksPerSm, "shared"},
      {regsPerBlock > 0 ? d.registersPerSm / regsPerBlock : d.maxBlocksPerSm, "registers"}};
  auto* lim = std::min_element(std::begin(limits), std::end(limits), [](auto& a, auto& b) { return a.first < b.first; });
  e.blocksPerSm = int(lim->first);
  e.occupancyLimit = lim->second;
  if (e.blocksPerSm <= 0) {
    e.feasible = false;
    e.infeasible = "no block fits on an SM (limited by " + e.occupancyLimit + ")";
    return;
  }
  e.occupancy = double(e.blocksPerSm * warps * 32) / double(std::max(1, d.maxThreadsPerSm));
}

void predictGpu(const KernelFigures& f, const Device& d, Estimate& e) {
  occupancy(f, d, e);
  if (!e.feasible) return;
  int64_t slots = int64_t(e.blocksPerSm) * d.smCount;
  int64_t active = std::min(f.blocks, slots);
  e.waves = (f.blocks + slots - 1) / slots;
  e.waveEfficiency = double(f.blocks) / double(e.waves * active);
  double warps = double(active) * std::ceil(double(f.threadsPerBlock) / 32.0);
  e.parallelEfficiency = std::min(1.0, warps / (d.warpsToSaturatePerSm * d.smCount));
  e.dramMs = msFor(e.dramBytes, d.dramGBps * 1e9);
  e.l2Ms = msFor(f.l2Bytes, d.l2GBps * 1e9);
  double l1Rate = d.l1GBpsPerSm * 1e9 * double(std::min<int64_t>(active, d.smCount));
  e.l1Ms = msFor(f.l1Bytes, l1Rate);
  e.sharedMs = msFor(f.sharedBytes, l1Rate);
  // The mma tiles' share of the FLOPs runs at the matrix rate (TF32 at its own), the rest on the CUDA cores.
  double smShare = std::min<double>(1.0, double(active) / d.smCount);
  double tensorShare = f.irFlops > 0 ? std::min(1.0, f.tensorFlops / f.irFlops) : 0.0;
  double matrixGflops = (f.tf32 ? d.tf32MatrixGflops : d.bf16MatrixGflops) * f.matrixShare;
  e.computeMs = msFor(e.flops * (1 - tensorShare), d.fp32Gflops * 1e9 * smShare) +
                msFor(e.flops * tensorShare, matrixGflops * 1e9 * smShare);
  e.launchMs = d.launchUs * f.launches / 1e3;
  // Each wave's threads run their dependent chain start to end; the warps of an SM overlap their chains, so
  // unless the per-SM throughput terms are longer, the chain's latency sets the wave's time.
  double cycles = f.serialGlobalLoads * d.globalLoadCycles + f.serialSharedLoads * d.sharedLoadCycles +
                  f.syncSteps * d.syncCycles;
  e.chainMs = double(e.waves) * cycles / (d.clockMhz * 1e3);
}

void predictCpu(const KernelFigures& f, const Device& d, Estimate& e) {
  int64_t cores = std::max(1, d.smCount);
  int64_t p = std::max<int64_t>(1, f.cpuParallelIterations);
  int64_t threads = std::min(cores, p);
  e.blocksPerSm = 1;
  e.occupancy = double(threads) / double(cores);
  e.occupancyLimit = threads < cores ? "parallel iterations" : "cores";
  e.waves = (p + threads - 1) / threads;
  e.waveEfficiency = double(p) / double(e.waves * threads);
  double share = double(threads) / double(cores);
  // Bandwidth saturates with about half the cores streaming.
  e.parallelEfficiency = std::min(1.0, 2.0 * share);
  e.dramMs = msFor(e.dramBytes, d.dramGBps * 1e9);
  e.l2Ms = msFor(f.l2Bytes, d.l2GBps * 1e9 * share);
  e.l1Ms = msFor(f.l1Bytes, d.l1GBpsPerSm * 1e9 * double(threads));
  // Vectorizable loops run at the measured (vector) rate, the rest at that rate over the SIMD lanes.
  double vectorShare = f.irFlops > 0 ? f.vectorFlops / f.irFlops : 0;
  double scalarSlowdown = vectorShare + (1 - vectorShare) * double(std::max(1, d.simdLanes));
  e.computeMs = msFor(e.flops * scalarSlowdown, d.fp32Gflops * 1e9 * share);
  e.launchMs = (d.launchUs + (threads > 1 ? d.parallelOverheadUs : 0)) / 1e3;
}

// The largest term sets the time. DRAM and L2 are shared by all SMs: a partial last wave still gets their full
// bandwidth, so they scale only with the parallelism the resident threads give. L1, shared memory and arithmetic
// are per SM: a partial last wave leaves SMs idle, so they scale with the wave quantization.
void combine(Estimate& e) {
  std::pair<double, const char*> terms[] = {{e.dramMs / e.parallelEfficiency, "dram"},
                                            {e.l2Ms / e.parallelEfficiency, "l2"},
                                            {e.l1Ms / e.waveEfficiency, "l1"},
                                            {e.sharedMs / e.waveEfficiency, "shared"},
                                            {e.computeMs / e.waveEfficiency, "compute"},
                                            {e.chainMs, "chain"}};
  auto* top = std::max_element(std::begin(terms), std::end(terms), [](auto& a, auto& b) { return a.first < b.first; });
  double body = top->first;
  e.ms = body + e.launchMs;
  e.limiter = top->second;
  e.bound = e.limiter == std::string("compute") ? Bound::Compute
            : e.limiter == std::string("chain")   ? Bound::Latency
                                                  : Bound::Memory;
  if (e.launchMs >= body) {
    e.bound = Bound::Latency;
    e.limiter = "launch";
  } else if (e.parallelEfficiency < 0.5 && (e.limiter == std::string("dram") || e.limiter == std::string("l2"))) {
    // Too few resident threads to keep enough loads in flight: the memory latency, not its bandwidth, sets it.
    e.bound = Bound::Latency;
    e.limiter = "parallelism";
  }
}

}  // namespace

Estimate predict(const kernel::Kernel& k, const Device& d, double flops) {
  Estimate e;
  bool gpu = d.kind == DeviceKind::Gpu;
  e.figures = analyzeKernel(k, gpu);
  e.flops = flops >= 0 ? flops : e.figures.irFlops;
  e.dramBytes = dramBytes(e.figures, d);
  if (gpu) predictGpu(e.figures, d, e);
  else predictCpu(e.figures, d, e);
  if (!e.feasible) {
    e.ms = INFINITY;
    return e;
  }
  combine(e);
  return e;
}

double kernelFlops(const Graph& g, const kernel::Kernel& k) {
  double f = 0;
  for (const auto& id : k.nodeIds)
    if (Node* n = g.findNode(id)) f += double(nodeFlops(*n));
  return f;
}

nlohmann::json Estimate::toJson() const {
  const KernelFigures& f = figures;
  nlohmann::json j = {{"feasible", feasible},
                      {"ms", feasible ? ms : -1.0},
                      {"bound", std::string(boundName(bound))},
                      {"limiter", limiter},
                      {"flops", flops},
                      {"vector_flops_share", figures.irFlops > 0 ? figures.vectorFlops / figures.irFlops : 0.0},
                      {"tensor_flops_share", figures.irFlops > 0 ? figures.tensorFlops / figures.irFlops : 0.0},
                      {"bytes", {{"dram", dramBytes},
                                 {"compulsory", f.compulsoryBytes},
                                 {"l2", f.l2Bytes},
                                 {"l1", f.l1Bytes},
                                 {"shared", f.sharedBytes}}},
                      {"launch", {{"blocks", f.blocks},
                                  {"threads_per_block", f.threadsPerBlock},
                                  {"shared_bytes_per_block", f.sharedBytesPerBlock},
                                  {"registers_per_thread", f.registersPerThread},
                                  {"cpu_parallel_iterations", f.cpuParallelIterations}}},
                      {"chain", {{"serial_global_loads", f.serialGlobalLoads},
                                 {"serial_shared_loads", f.serialSharedLoads},
                                 {"sync_steps", f.syncSteps}}},
                      {"occupancy", {{"blocks_per_sm", blocksPerSm}, {"fraction", occupancy}, {"limit", occupancyLimit}}},
                      {"waves", waves},
                      {"wave_efficiency", waveEfficiency},
                      {"parallel_efficiency", parallelEfficiency},
                      {"terms_ms", {{"dram", dramMs}, {"l2", l2Ms}, {"l1", l1Ms}, {"shared", sharedMs},
                                    {"compute", computeMs}, {"launch", launchMs}, {"chain", chainMs}}}};
  if (!feasible) j["infeasible"] = infeasible;
  return j;
}

std::string Estimate::summary() const {
  if (!feasible) return "cannot launch: " + infeasible;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%.4g ms, %s-bound (%s): %.3g MB from DRAM, %.3g GFLOP, %lld wave%s (%.0f%% used), occupancy %.0f%%",
                ms, std::string(boundName(bound)).c_str(), limiter.c_str(), dramBytes / 1e6, flops / 1e9,
                static_cast<long long>(waves), waves == 1 ? "" : "s", waveEfficiency * 100, occupancy * 100);
  return buf;
}

}  // namespace tessera::cost
