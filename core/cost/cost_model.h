#pragma once
// The analytic cost model: predicted time of one scheduled kernel on one device, the bound that sets it, and
// every figure behind it (for the inspector and for tests). docs/tuning.md gives the formulae.
#include <string>

#include <nlohmann/json.hpp>

#include "cost/analysis.h"
#include "cost/device.h"
#include "ir/graph.h"
#include "kernel/kernel_ir.h"

namespace tessera::cost {

// Memory: bytes through some level take longest. Compute: arithmetic does. Latency: the launch cost, too
// little parallelism (few blocks, few resident warps) or each thread's chain of dependent loads does.
enum class Bound { Memory, Compute, Latency };
std::string_view boundName(Bound b);  // "memory", "compute", "latency"

struct Estimate {
  bool feasible = true;   // false: the launch cannot run on the device (why in `infeasible`)
  std::string infeasible;
  double ms = 0;          // predicted time
  Bound bound = Bound::Latency;
  std::string limiter;    // the term that sets the time: dram, l2, l1, shared, compute, launch, parallelism, chain
  KernelFigures figures;
  double flops = 0;
  double dramBytes = 0;   // compulsory plus re-reads that miss the L2 (last-level cache on the CPU)
  // Occupancy (GPU): resident blocks per SM and what limits them (threads, shared, registers, blocks).
  int blocksPerSm = 0;
  double occupancy = 0;   // resident warps / the SM's maximum
  std::string occupancyLimit;
  // Waves: blocks run in waves of blocksPerSm * SMs (CPU: parallel iterations in rounds of the cores).
  int64_t waves = 1;
  double waveEfficiency = 1;  // work / (waves * slots): the quantization loss
  double parallelEfficiency = 1;  // the fraction of bandwidth the resident threads can draw (Little's law)
  // The terms, in ms, before the wave and parallelism factors (launch is added after).
  double dramMs = 0, l2Ms = 0, l1Ms = 0, sharedMs = 0, computeMs = 0, launchMs = 0;
  double chainMs = 0;  // GPU: one thread's dependent loads and barriers, once per wave (already per wave)
  nlohmann::json toJson() const;
  std::string summary() const;  // one line: "0.012 ms, memory-bound (dram): 3.1 MB, 1.0 waves, occupancy 100%"
};

// `flops` < 0: counted from the kernel IR; pass kernelFlops(graph, k) to use the op registry's count.
Estimate predict(const kernel::Kernel& k, const Device& d, double flops = -1);
// nodeFlops summed over the kernel's graph nodes (ops/stats.h).
double kernelFlops(const Graph& g, const kernel::Kernel& k);

}  // namespace tessera::cost
