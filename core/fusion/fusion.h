#pragma once
// Fusion: partitions the graph into groups (one group = one kernel) greedily in topological order and records
// every candidate producer → consumer edge as a decision with its verdict, rule and reason. Rules and patterns
// are explained in docs/fusion.md. The `fuse` pass wraps fuseGraph and leaves the graph unchanged.
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fusion/overrides.h"
#include "passes/pass_manager.h"

namespace tessera {

// Nominal machine and template limits behind the profitability rules.
struct FusionOptions {
  int maxGroupNodes = 32;         // group-size-limit
  int registerLimit = 255;        // register-limit, against the estimate in docs/fusion.md
  double bandwidthGBs = 2000;     // cost: bytes moved at this bandwidth
  double launchUs = 4;            //   plus this per kernel
  double gflops = 20000;          //   plus FLOPs at this throughput
  // row-cache: a row kernel that reads its row in several passes (a layernorm's mean, variance and output)
  // re-reads it from L1/L2 or shared memory; up to this many bytes a row (the H200's 227 KiB of shared
  // memory a block) that stays on chip, above it every pass reads DRAM again.
  int64_t rowCacheBytes = 227 * 1024;
  // attention-pattern: MatMul → scale/mask → Softmax → MatMul as one kernel (flash attention, docs/fusion.md).
  bool attention = true;
  // attention-cost: the fused attention kernel's rate. Its form runs both products on the CUDA cores; 7.5
  // TFLOP/s is what it reached on the H200 (bench attention, 2026-12-03, docs/performance.md).
  double attentionGflops = 7500;
  // ... and at least one query row's serial work at this many ns a multiply-add: 6.3 ns made the 128 x 128
  // sample's 0.154 ms on the H200 (2026-12-03), where its three separate kernels took 0.025 ms.
  double attentionRowNsPerOp = 6.3;
  // ... or, where the pattern takes the tensor-core form (16-bit, heads of 16..128: AttentionMatch::tensorCores),
  // this rate with no serial row (16 rows a warp): the bench attention (B32 H16 S2048 D64 bf16)
  // took 2.2 ms on the H200: 249 TFLOP/s of its two products (2026-12-04, docs/performance.md).
  double attentionTensorGflops = 240000;
  // ... reached only with a block of 64 query rows on each of this many SMs (the H200's 132); fewer blocks run
  // at their share of it (300 rows of 2 heads, 10 blocks: 0.136 ms fused against 0.110 as four kernels).
  int attentionSms = 132;
};

enum class GroupKind { Pointwise, Reduction, GemmEpilogue, ConvEpilogue, DataMovement, Attention, Opaque };
std::string_view groupKindName(GroupKind kind);  // "pointwise", "gemm+epilogue", ...

struct FusionDecision {
  std::string producer, consumer;  // node ids
  bool fused = false;
  std::string rule;    // e.g. "epilogue", "single-consumer", "gemm-into-reduction"
  std::string reason;  // one sentence with the numbers
  bool forced = false; // a force-fuse override decided it
  std::string verdict() const { return fused ? "fused" : "separate"; }
};

struct GroupNode {
  std::string id, op;
};

struct FusedGroup {
  std::string id;  // "k0", "k1", ... in topological order of the groups
  GroupKind kind = GroupKind::Opaque;
  std::vector<GroupNode> nodes;                // in topological order
  std::vector<std::string> inputs, outputs;    // value names read from / written to memory
  double estimatedUs = 0;                      // the cost model's estimate
};

struct FusionResult {
  std::vector<FusedGroup> groups;
  std::vector<FusionDecision> decisions;  // by consumer in topological order
  std::vector<OverrideStatus> overrides;  // fusion overrides (force, forbid, split) in the order given
  int iterations = 0;                     // partitions run until the single-consumer rule settled
  // The group holding the node, or null.
  const FusedGroup* groupOf(const std::string& nodeId) const;
  const FusionDecision* decision(const std::string& producer, const std::string& consumer) const;
};

// Fusion of `graph` under `overrides` (only force-fuse, forbid-fuse and split are read here). When `context`
// is given, every fused edge spends one unit of its fuel; an edge refused for lack of fuel gets rule "fuel".
FusionResult fuseGraph(const Graph& graph, const FusionOptions& options = {},
                       const std::vector<Override>& overrides = {}, PassContext* context = nullptr);

// The `fuse` pass. It leaves the graph as it is and stores its result in `sink` (when given).
std::unique_ptr<Pass> createFusionPass(std::shared_ptr<FusionResult> sink, FusionOptions options = {},
                                       std::vector<Override> overrides = {});

}  // namespace tessera
