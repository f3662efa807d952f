#pragma once
// Internal to fusion: the greedy partitioner. One run walks the nodes in topological order; each consumer
// starts its own group and then, edge by edge, tries to join the groups of its producers under the rules.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fusion/attention.h"
#include "fusion/fusion.h"
#include "fusion/space.h"

namespace tessera::fusion_detail {

using Edge = std::pair<int, int>;  // producer, consumer: indices in topological order

// What a run must respect besides the rules: overrides and what earlier runs learnt.
struct Constraints {
  std::map<Edge, std::string> forbidden;          // edge → reason (forbid-fuse, split)
  std::set<Edge> forced;                          // force-fuse
  std::map<const Value*, int> singleConsumer;     // values read from several kernels → how many
};

struct GroupState {
  std::vector<int> members;  // sorted
  Space space;
  double flops = 0;  // including work repeated over a broadcast space
};

// What a forced edge that fused cost in terms of the rules it overrode.
struct ForcedCost {
  std::string rule, reason;
  int64_t duplicatedNodes = 0, extraFlops = 0;
};

class Partitioner {
 public:
  Partitioner(const Graph& graph, const FusionOptions& options);
  void run(const Constraints& constraints, PassContext* context);
  // Values read by nodes of several groups (and not graph outputs) that are not yet in `constraints`; adds
  // them and returns how many were added.
  int learnSingleConsumer(Constraints& constraints) const;

  const std::vector<Node*>& order() const { return order_; }
  int indexOf(const Node* n) const { return index_.at(n); }
  int groupOf(int node) const { return groupOf_[size_t(node)]; }
  const std::vector<GroupState>& groups() const { return groups_; }
  const std::vector<FusionDecision>& decisions() const { return decisions_; }
  std::vector<FusionDecision>& decisions() { return decisions_; }
  const std::map<Edge, ForcedCost>& forcedCosts() const { return forcedCosts_; }
  // Estimated time of one group's kernel, in microseconds.
  double estimateUs(int group) const;

 private:
  struct Traffic {
    int64_t bytes = 0;
    int inputs = 0;
  };
  struct RowPasses {
    int passes = 0;        // reads of each row: one per reduction, two for Softmax/LayerNormalization, +1 row-wide
    int64_t rowBytes = 0;  // one row of the first reduction's input
    int64_t rows = 0;
    // Bytes read from DRAM again when a row is too long to stay on chip between passes.
    int64_t rereadBytes(int64_t onChip) const { return passes > 1 && rowBytes > onChip ? (passes - 1) * rows * rowBytes : 0; }
  };
  Traffic withRereads(int group) const;  // a lone group's traffic, its row re-reads included
  RowPasses rowPasses(const std::vector<const std::vector<int>*>& groups, const Space& space) const;
  std::string rowPassNote(int g, int t, const Space& merged) const;
  void decide(int p, int c, const Value* v, const Constraints& k, PassContext* ctx);
  bool wouldCycle(int g, int t) const;
  // Why the merged pointwise kernel could not store one of its outputs, if it could not (rule output-shape).
  std::optional<std::string> unstorableOutput(int g, int t, const Space& merged) const;
  bool inGroups(const Node* n, int g, int t) const;  // n is in group g or t (t = -1: in g)
  Traffic traffic(int g, int t) const;
  double timeUs(const Traffic& tr, double flops) const;
  // The first profitability rule the merge breaks, or an empty rule.
  ForcedCost profitability(int g, int t, const MergeCheck& check) const;
  void merge(int g, int t, const MergeCheck& check);
  std::string singleConsumerReason(const Value* v, int kernels) const;
  // The attention pattern holding node `n` when it fuses under `k` (none of its edges forbidden), else -1.
  int activeAttention(int n, const Constraints& k) const;
  // Decides an edge touching an attention pattern: fused inside one, separate across its border.
  void decideAttention(FusionDecision& d, int p, int c, const Constraints& k, PassContext* ctx);
  // Why pattern `a` is not worth fusing (rule attention-cost), or "" when it is.
  std::string attentionCost(int a) const;
  void noteDeclinedAttention(const Constraints& k);
  std::vector<std::pair<int, const Value*>> producerEdges(int c, const Constraints& k) const;

  const Graph& graph_;
  FusionOptions options_;
  std::vector<Node*> order_;
  std::unordered_map<const Node*, int> index_;
  std::vector<Space> spaces_;
  std::vector<double> flops_;
  std::vector<int> groupOf_;
  std::vector<GroupState> groups_;
  std::vector<FusionDecision> decisions_;
  std::map<Edge, ForcedCost> forcedCosts_;
  std::vector<AttentionMatch> attention_;
  std::vector<int> attentionOf_;  // node index → its pattern in attention_, or -1
  mutable std::vector<int> seen_;
  mutable int stamp_ = 0;
};

}  // namespace tessera::fusion_detail
