#include "tune/candidates.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "ir/fnv.h"
#include "kernel/printer.h"
#include "kernel/visit.h"

namespace tessera::tune {
namespace {

// Combination `index` of the space in mixed radix (the first parameter varies slowest).
kernel::TemplateParams decode(const std::vector<kernel::TemplateParam>& space, size_t index) {
  kernel::TemplateParams p;
  for (size_t i = space.size(); i-- > 0;) {
    const auto& c = space[i].candidates;
    p[space[i].name] = c[index % c.size()];
    index /= c.size();
  }
  return p;
}

// Indices 0..total-1, or `limit` of them spread over the space by a stride coprime with its size.
std::vector<size_t> sampleIndices(size_t total, size_t limit) {
  std::vector<size_t> out;
  if (total <= limit) {
    out.resize(total);
    std::iota(out.begin(), out.end(), size_t{0});
    return out;
  }
  size_t stride = total / limit + 1;
  while (std::gcd(stride, total) != 1) ++stride;
  for (size_t i = 0; i < limit; ++i) out.push_back((i * stride) % total);
  return out;
}

// The schedule without its set_param records: combinations that clamp to the same loops share it.
std::string scheduleKey(const kernel::Trace& t) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& ins : t.instructions)
    if (ins.kind != "set_param") steps.push_back({ins.kind, ins.inputs, ins.attrs});
  return fnv1a64Hex(steps.dump());
}

}  // namespace

kernel::Kernel scheduleWith(const kernel::Kernel& lowered, const kernel::TemplateParams& params, kernel::Trace* trace) {
  kernel::Kernel k = lowered.clone();
  kernel::TracedSchedule s(k);
  kernel::applyTemplate(s, params);
  if (trace) *trace = s.trace();
  return k;
}

CandidateSet rankCandidates(const kernel::Kernel& lowered, const cost::Device& device, double flops,
                            size_t maxCombinations, const CancelToken& cancel) {
  CandidateSet set;
  std::vector<kernel::TemplateParam> space = kernel::parameterSpace(lowered);
  kernel::TemplateParams defaults = kernel::defaultParams(lowered);
  for (auto& p : space)
    if (p.changesPrecision) p.candidates = {defaults.at(p.name)};  // tuning trades time, never accuracy
  set.combinations = 1;
  for (const auto& p : space) set.combinations *= std::max<size_t>(1, p.candidates.size());
  std::vector<kernel::TemplateParams> tries = {defaults};
  for (size_t i : sampleIndices(set.combinations, maxCombinations)) tries.push_back(decode(space, i));
  std::set<std::string> seen;
  for (size_t i = 0; i < tries.size(); ++i) {
    if (cancel.cancelled()) break;
    ++set.tried;
    kernel::Trace trace;
    kernel::Kernel k;
    try {
      k = scheduleWith(lowered, tries[i], &trace);
    } catch (const std::exception&) {
      ++set.refused;
      continue;
    }
    if (!seen.insert(scheduleKey(trace)).second) {
      ++set.duplicates;
      continue;
    }
    cost::Estimate e = cost::predict(k, device, flops);
    if (!e.feasible) {
      ++set.infeasible;
      continue;
    }
    set.ranked.push_back({tries[i], std::move(e), i == 0});
  }
  std::stable_sort(set.ranked.begin(), set.ranked.end(),
                   [](const Candidate& a, const Candidate& b) { return a.estimate.ms < b.estimate.ms; });
  return set;
}

std::string kernelSignature(const kernel::Kernel& lowered) {
  kernel::Kernel k = lowered.clone();
  k.id = "kernel";
  k.nodeIds.clear();
  for (auto& b : k.buffers) b.value.clear();
  if (k.body) kernel::walk(k.body, [](kernel::StmtNode& s) { s.provenance.clear(); });
  return fnv1a64Hex(kernel::printKernel(k));
}

}  // namespace tessera::tune
