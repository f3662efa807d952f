// The partitioner's attention rule (attention.h): a pattern's edges fuse together or not at all. It fuses when
// the one kernel is estimated faster than the four it replaces, or when an override forces one of its edges.
#include <algorithm>
#include <cstdio>

#include "fusion/partition.h"

namespace tessera::fusion_detail {
namespace {

std::string ms(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g ms", us / 1000.0);
  return buf;
}

bool inPattern(const std::vector<int>& of, const Edge& e, int a) {
  return of[size_t(e.first)] == a && of[size_t(e.second)] == a;
}

}  // namespace

// The fused kernel reads q, k, v (and the masks) and writes y, at the rate of its form: the tensor cores' where it
// takes that form, else the CUDA cores' with at least one row's serial work (a small attention has too few rows
// to fill the GPU when a thread takes a row); the kernels
// it replaces add the scores' round trips (written by the MatMul, read and written by the softmax, read by the
// second MatMul) and run the products at the tensor cores' nominal rate.
std::string Partitioner::attentionCost(int a) const {
  const AttentionMatch& m = attention_[size_t(a)];
  int64_t io = 0, flops = 0;
  for (const Node* n : m.nodes) {
    flops += int64_t(flops_[size_t(index_.at(n))]);
    for (const Value* v : n->inputs())
      if (v && (!v->producer() || attentionOf_[size_t(index_.at(v->producer()))] != a)) io += v->type().bytes();
  }
  io += m.context->output(0)->type().bytes();
  int64_t scores = m.scores->output(0)->type().bytes();
  // A query row is one thread's serial work: keys × (head + 2 × value columns) dependent multiply-adds.
  const Shape& q = m.scores->input(0)->shape();
  const Shape& s = m.scores->output(0)->shape();
  bool tensorCores = m.tensorCores();
  double rate = tensorCores ? options_.attentionTensorGflops : options_.attentionGflops;
  if (tensorCores) {  // the tensor-core form's blocks: 64 query rows of one head each
    double blocks = double(numElements(s) / s.back() + 63) / 64.0;
    rate *= std::min(1.0, blocks / double(std::max(1, options_.attentionSms)));
  }
  double serialUs = tensorCores ? 0.0
                                : double(s.back()) * double(q.back() + 2 * m.context->output(0)->shape().back()) *
                                      options_.attentionRowNsPerOp / 1e3;
  double fused = options_.launchUs +
                 std::max(double(io) / (options_.bandwidthGBs * 1e3) + double(flops) / (rate * 1e3), serialUs);
  double apart = 3 * options_.launchUs + double(io + 4 * scores) / (options_.bandwidthGBs * 1e3) +
                 double(flops) / (options_.gflops * 1e3);
  if (fused <= apart) return "";
  return "the one kernel (" + std::string(tensorCores ? "tensor" : "CUDA") + " cores, " + std::to_string(int64_t(rate)) +
         " GFLOP/s) is estimated at " +
         ms(fused) + " against " + ms(apart) + " for the separate kernels on the tensor cores, which write and read the "
         "scores; force-fuse its edge into " + attention_[size_t(a)].context->id() + " to run it anyway";
}

int Partitioner::activeAttention(int n, const Constraints& k) const {
  int a = attentionOf_[size_t(n)];
  if (a < 0) return -1;
  bool forced = false;
  for (const auto& entry : k.forbidden)
    if (inPattern(attentionOf_, entry.first, a)) return -1;
  // Only the edge into the second MatMul asks for the pattern: a force elsewhere in it (the scores into the
  // softmax, say) is judged by the ordinary rules, as it would be without the pattern.
  for (const Edge& e : k.forced)
    forced |= inPattern(attentionOf_, e, a) && order_[size_t(e.second)] == attention_[size_t(a)].context;
  return forced || attentionCost(a).empty() ? a : -1;
}

void Partitioner::decideAttention(FusionDecision& d, int p, int c, const Constraints& k, PassContext* ctx) {
  int a = activeAttention(p, k), b = activeAttention(c, k);
  d.rule = "attention";
  if (a != b) {
    const AttentionMatch& m = attention_[size_t(a >= 0 ? a : b)];
    d.reason = a >= 0 ? "the attention kernel " + m.context->id() + " writes only its output; " + d.consumer +
                            " reads it from memory"
                      : "the attention kernel " + m.context->id() + " fuses its own pattern only; it reads %" +
                            order_[size_t(p)]->output(0)->name() + " from memory";
    decisions_.push_back(d);
    return;
  }
  if (ctx && !ctx->tryRewrite()) {
    d.rule = "fuel";
    d.reason = "the fuel ran out before this fusion";
    decisions_.push_back(d);
    return;
  }
  const AttentionMatch& m = attention_[size_t(a)];
  MergeCheck check;
  check.merged = Space{SpaceKind::Attention, m.context->output(0)->shape(), {}, {}, false, "Attention"};
  check.rule = d.rule;
  d.fused = true;
  d.reason = m.reason();
  if (d.forced) {
    std::string cost = attentionCost(a);
    d.reason = "forced by override (attention: " + d.reason + ")" + (cost.empty() ? "" : "; breaks attention-cost: " + cost);
    forcedCosts_[{p, c}] = {cost.empty() ? "" : "attention-cost", cost, 0, 0};
  }
  decisions_.push_back(d);
  merge(groupOf_[size_t(p)], groupOf_[size_t(c)], check);
}

// A pattern left unfused by its cost says so on its edges that stayed apart.
void Partitioner::noteDeclinedAttention(const Constraints& k) {
  for (FusionDecision& d : decisions_) {
    if (d.fused) continue;
    const Node* p = graph_.findNode(d.producer);
    const Node* c = graph_.findNode(d.consumer);
    if (!p || !c) continue;
    int a = attentionOf_[size_t(index_.at(p))];
    if (a < 0 || attentionOf_[size_t(index_.at(c))] != a || activeAttention(index_.at(p), k) >= 0) continue;
    bool forbidden = false;
    for (const auto& entry : k.forbidden) forbidden |= inPattern(attentionOf_, entry.first, a);
    if (!forbidden) d.reason += "; the attention pattern around it is not fused (attention-cost): " + attentionCost(a);
  }
}

}  // namespace tessera::fusion_detail
