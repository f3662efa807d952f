#include "kernel/templates/templates.h"

#include <algorithm>
#include <map>

#include "kernel/templates/template_util.h"

namespace tessera::kernel {
namespace {

using templ::TemplateDef;

const TemplateDef& templateFor(const std::string& name) {
  static const std::map<std::string, const TemplateDef*> table = {
      {"pointwise", &templ::pointwiseTemplate()},       {"row-reduction", &templ::rowReductionTemplate()},
      {"row-reduction-cpu", &templ::rowReductionCpuTemplate()},
      {"gemm", &templ::gemmTemplate()},                 {"gemm-cpu", &templ::gemmCpuTemplate()},
      {"conv", &templ::convTemplate()},                 {"conv-cpu", &templ::convCpuTemplate()},
      {"pool", &templ::poolTemplate()},                 {"transpose", &templ::transposeTemplate()},
      {"data-movement", &templ::dataMovementTemplate()}, {"attention", &templ::attentionTemplate()},
      {"elementwise-cpu", &templ::elementwiseCpuTemplate()}, {"scatter", &templ::scatterTemplate()},
  };
  return *table.at(name);
}

}  // namespace

std::string templateName(const Kernel& k) {
  const bool cpu = k.machine == Machine::Cpu;
  if (k.kind == "scatter") return "scatter";
  if (k.kind == "reduction") return cpu ? "row-reduction-cpu" : "row-reduction";
  if (k.kind == "data-movement") {
    if (templ::isTransposeLike(const_cast<Kernel&>(k))) return "transpose";
    return cpu ? "elementwise-cpu" : "data-movement";
  }
  if (k.kind == "gemm" && cpu) return "gemm-cpu";
  if ((k.kind == "conv" || k.kind == "pool") && cpu && templ::convCpuApplies(const_cast<Kernel&>(k))) return "conv-cpu";
  if (k.kind == "gemm" || k.kind == "conv" || k.kind == "pool" || k.kind == "attention") return k.kind;
  return cpu ? "elementwise-cpu" : "pointwise";
}

std::vector<TemplateParam> parameterSpace(const Kernel& k) { return templateFor(templateName(k)).space; }

TemplateParams defaultParams(const Kernel& k) {
  // Only read; the templates' helpers take non-const for loop lookup.
  return templateFor(templateName(k)).defaults(const_cast<Kernel&>(k));
}

void applyTemplate(TracedSchedule& s, const TemplateParams& params) {
  std::string name = templateName(s.kernel());
  const TemplateDef& t = templateFor(name);
  // The defaults fill the parameters `params` leaves out; where it names them all (the tuner's candidates) they
  // are not computed: the conv's take tens of milliseconds (their tiles and paddings are searched), which made
  // ranking 4096 candidates take minutes. A template's defaults name exactly its space (test_templates).
  const bool complete = std::all_of(t.space.begin(), t.space.end(), [&](const TemplateParam& tp) { return params.count(tp.name) > 0; });
  TemplateParams p = complete ? TemplateParams{} : defaultParams(s.kernel());
  for (const auto& entry : params) {  // not a structured binding: clang 14 (the fuzz preset's) cannot capture one
    const std::string& key = entry.first;
    const bool known = p.count(key) || std::any_of(t.space.begin(), t.space.end(), [&](const TemplateParam& tp) { return tp.name == key; });
    if (!known) fail("template " + name + " (kernel '" + s.kernel().id + "'): unknown parameter '" + key + "'");
    p[key] = entry.second;
  }
  // Sizes must be positive; 0 only where the space offers it as "off" (warp_m = 0, shared = 0, ...).
  for (const TemplateParam& tp : t.space) {
    int64_t v = p.at(tp.name);
    bool zeroMeansOff = std::find(tp.candidates.begin(), tp.candidates.end(), 0) != tp.candidates.end();
    if (v < 0 || (v == 0 && !zeroMeansOff))
      fail("template " + name + " (kernel '" + s.kernel().id + "'): parameter '" + tp.name + "' = " + std::to_string(v) +
           (zeroMeansOff ? " (must be 0 or more)" : " (must be 1 or more)"));
  }
  for (const TemplateParam& tp : t.space) p[tp.name] = s.setParam(tp.name, p.at(tp.name));
  t.apply(s, p);
}

Trace applyDefaultSchedule(Kernel& k) {
  TracedSchedule s(k);
  applyTemplate(s, {});
  return s.trace();
}

Trace traceWithParams(const Graph& graph, const KernelSpec& spec, const TemplateParams& params) {
  Kernel fresh = lowerToLoops(graph, spec);
  TracedSchedule s(fresh);
  applyTemplate(s, params);
  return s.trace();
}

namespace {
bool hasEvery(const Kernel& k, const TemplateParams& params) {
  std::vector<TemplateParam> space = parameterSpace(k);
  for (const auto& entry : params) {
    const std::string& name = entry.first;  // a named copy: clang 14 cannot capture a structured binding
    if (std::none_of(space.begin(), space.end(), [&](const TemplateParam& p) { return p.name == name; })) return false;
  }
  return true;
}
}  // namespace

Trace traceOnEitherMachine(const Graph& graph, const KernelSpec& spec, const TemplateParams& params) {
  KernelSpec other = spec;
  other.machine = spec.machine == Machine::Cpu ? Machine::Gpu : Machine::Cpu;
  if (!hasEvery(lowerToLoops(graph, spec), params) && hasEvery(lowerToLoops(graph, other), params))
    return traceWithParams(graph, other, params);
  return traceWithParams(graph, spec, params);
}

}  // namespace tessera::kernel
