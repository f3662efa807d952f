#include "tune/distributed/shares.h"

#include "ir/error.h"
#include "kernel/lower/lower.h"

namespace tessera::tune::distributed {

nlohmann::json shareToJson(const std::vector<ShareItem>& items, const execute::MeasureOptions& o) {
  nlohmann::json list = nlohmann::json::array();
  for (const ShareItem& s : items) list.push_back({{"variant", s.variant}, {"kernel", s.kernel}, {"trace", s.trace.toJson()}});
  return {{"share", list},
          {"options",
           {{"reps", o.reps}, {"warmup", o.warmup}, {"arch", o.arch}, {"remote", o.remote}, {"seed", o.seed},
            {"prune_factor", o.pruneFactor}, {"reference_limit", o.referenceLimit}}}};
}

std::vector<execute::KernelVariant> shareFromJson(const nlohmann::json& j, const execute::CompiledModel& model,
                                                  std::vector<size_t>& batchIndex, execute::MeasureOptions& o) {
  const nlohmann::json& opt = j.at("options");
  o.reps = opt.at("reps").get<int>();
  o.warmup = opt.at("warmup").get<int>();
  o.arch = opt.at("arch").get<std::string>();
  o.remote = opt.at("remote").get<std::string>();
  o.seed = opt.at("seed").get<uint64_t>();
  o.pruneFactor = opt.at("prune_factor").get<double>();
  o.referenceLimit = opt.at("reference_limit").get<double>();
  std::vector<execute::KernelVariant> variants;
  for (const nlohmann::json& s : j.at("share")) {
    const size_t k = s.at("kernel").get<size_t>(), v = s.at("variant").get<size_t>();
    if (k >= model.kernels.size()) fail("distributed tune: variant " + std::to_string(v) + " names kernel " + std::to_string(k) + ", past the model's");
    kernel::Kernel scheduled = kernel::lowerToLoops(*model.graph, model.kernels[k].spec);
    try {
      kernel::replay(scheduled, kernel::Trace::fromJson(s.at("trace")));
    } catch (const std::exception& e) {
      fail("distributed tune: variant " + std::to_string(v) + " of kernel " + model.kernels[k].spec.id +
           " does not replay on this rank (another model or Tessera?): " + e.what());
    }
    variants.push_back({k, std::move(scheduled)});
    batchIndex.push_back(v);
  }
  return variants;
}

nlohmann::json resultToJson(const ShareResult& r) {
  nlohmann::json ts = nlohmann::json::array(), ex = nlohmann::json::array();
  for (size_t i = 0; i < r.timings.size(); ++i) {
    const execute::VariantTiming& t = r.timings[i];
    ts.push_back({{"variant", r.batchIndex.at(i)}, {"ms", t.ms}, {"pruned", t.pruned}, {"verified", t.verified},
                  {"max_rel_err", t.maxRelErr}, {"status", execute::kernelStatusName(t.status)}, {"message", t.message}});
  }
  for (execute::Expected e : r.expected) ex.push_back(int(e));
  return {{"error", r.error}, {"timings", ts}, {"expected", ex}};
}

ShareResult resultFromJson(const nlohmann::json& j) {
  ShareResult r;
  r.error = j.at("error").get<std::string>();
  for (const nlohmann::json& t : j.at("timings")) {
    execute::VariantTiming v;
    v.ms = t.at("ms").get<double>();
    v.pruned = t.at("pruned").get<bool>();
    v.verified = t.at("verified").get<bool>();
    v.maxRelErr = t.at("max_rel_err").get<double>();
    v.status = execute::parseKernelStatus(t.at("status").get<std::string>());
    v.message = t.at("message").get<std::string>();
    r.timings.push_back(v);
    r.batchIndex.push_back(t.at("variant").get<size_t>());
  }
  for (const nlohmann::json& e : j.at("expected")) r.expected.push_back(execute::Expected(e.get<int>()));
  return r;
}

}  // namespace tessera::tune::distributed
