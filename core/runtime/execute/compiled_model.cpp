#include "runtime/execute/compiled_model.h"

#include <set>

#include "ir/error.h"
#include "kernel/templates/templates.h"

namespace tessera::execute {

std::string ScheduleSet::keyOf(const std::vector<std::string>& nodeIds) {
  std::string k;
  for (const auto& id : nodeIds) k += (k.empty() ? "" : ",") + id;
  return k;
}

std::string ScheduleSet::save() const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [key, trace] : traces) list.push_back({{"nodes", key}, {"trace", trace.toJson()}});
  nlohmann::json j = {{"format", "tessera-schedules"}, {"version", 1}, {"kernels", list}};
  return j.dump(2) + "\n";
}

ScheduleSet ScheduleSet::load(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) fail("schedules: not a JSON object");
  if (j.value("format", "") != "tessera-schedules") fail("schedules: field 'format' is not \"tessera-schedules\"");
  if (!j.contains("kernels") || !j["kernels"].is_array()) fail("schedules: field 'kernels' is not an array");
  ScheduleSet s;
  for (size_t i = 0; i < j["kernels"].size(); ++i) {
    const auto& e = j["kernels"][i];
    if (!e.is_object() || !e.contains("nodes") || !e["nodes"].is_string() || !e.contains("trace"))
      fail("schedules: kernels[" + std::to_string(i) + "] needs 'nodes' (string) and 'trace'");
    s.traces[e["nodes"].get<std::string>()] = kernel::Trace::fromJson(e["trace"]);
  }
  return s;
}

ScheduleSet CompiledModel::schedules() const {
  ScheduleSet s;
  for (const auto& k : kernels)
    if (!k.onHost()) s.traces[ScheduleSet::keyOf(k.spec.nodeIds)] = k.trace;
  return s;
}

namespace {
// A saved trace's parameters must be ones the kernel's template has: a session edited by hand (or saved for
// another kind of kernel) would otherwise replay with a parameter nothing reads, silently.
void checkTraceParams(const kernel::Kernel& k, const kernel::Trace& trace) {
  std::vector<kernel::TemplateParam> space = kernel::parameterSpace(k);
  for (const kernel::Instruction& ins : trace.instructions) {
    if (ins.kind != "set_param" || ins.inputs.empty()) continue;
    bool known = false;
    std::string names;
    for (const auto& p : space) {
      known = known || p.name == ins.inputs[0];
      names += (names.empty() ? "" : ", ") + p.name;
    }
    if (!known)
      fail("set_param '" + ins.inputs[0] + "' is not a parameter of the " + kernel::templateName(k) + " template (" +
           names + ")");
  }
}

bool fitsSpace(const kernel::Kernel& k, const kernel::Trace& trace) {
  try {
    checkTraceParams(k, trace);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// A saved trace made by the kernel's template for the other machine (a gemm's GPU form, when this kernel is
// scheduled for the CPU): not stale, only for the other machine's stage (driver::Driver::kernelsFor). The group
// is lowered for that machine, whose nest may differ (a 1 x 1 conv is a gemm on the GPU).
bool forTheOtherMachine(const Graph& g, const kernel::KernelSpec& spec, const kernel::Kernel& k, const kernel::Trace& trace) {
  kernel::KernelSpec otherSpec = spec;
  otherSpec.machine = k.machine == kernel::Machine::Cpu ? kernel::Machine::Gpu : kernel::Machine::Cpu;
  kernel::Kernel other;
  try {
    other = kernel::lowerToLoops(g, otherSpec);
  } catch (const std::exception&) {
    return false;
  }
  return kernel::templateName(other) != kernel::templateName(k) && !fitsSpace(k, trace) && fitsSpace(other, trace);
}

void schedule(CompiledKernel& ck, const Graph& g, const ScheduleSet* saved, std::vector<std::string>& stale) {
  ck.kernel = kernel::lowerToLoops(g, ck.spec);
  std::string key = ScheduleSet::keyOf(ck.spec.nodeIds);
  if (saved) {
    auto it = saved->traces.find(key);
    if (it != saved->traces.end() && !forTheOtherMachine(g, ck.spec, ck.kernel, it->second)) {
      kernel::Kernel fresh = ck.kernel.clone();
      try {
        checkTraceParams(fresh, it->second);
        kernel::replay(fresh, it->second);
        ck.kernel = std::move(fresh);
        ck.trace = it->second;
        ck.replayed = true;
        return;
      } catch (const std::exception& e) {
        stale.push_back("kernel " + ck.spec.id + " (" + key + "): saved schedule does not replay: " + e.what());
      }
    }
  }
  ck.trace = kernel::applyDefaultSchedule(ck.kernel);
}
// The one place a group's placement is decided (placement.h): a host group when placeBeforeLowering says so, or
// when the lowering or its schedule throws (the reason is the exception's, naming the node and op); else the
// lowered, scheduled kernel.
void compileGroup(CompiledKernel& ck, const Graph& g, const ScheduleSet* saved, std::vector<std::string>& stale) {
  ck.placement = placeBeforeLowering(g, ck.spec);
  if (!ck.onHost()) {
    try {
      schedule(ck, g, saved, stale);
    } catch (const std::exception& e) {
      ck.placement = {HostRule::NoLowering, e.what()};
    }
  }
  if (!ck.onHost()) return;
  ck.kernel = hostKernel(g, ck.spec);
  ck.trace = {};
  ck.replayed = false;
}
}  // namespace

CompiledModel compileKernels(std::shared_ptr<const Graph> graph, const std::vector<kernel::KernelSpec>& groups,
                             const ScheduleSet* saved, const CancelToken& cancel,
                             const std::function<void(size_t done, size_t total)>& progress) {
  CompiledModel m;
  m.graph = graph;
  std::set<std::string> used;
  for (const auto& spec : groups) {
    cancel.check();
    if (progress && !m.kernels.empty()) progress(m.kernels.size(), groups.size());
    CompiledKernel ck;
    ck.spec = spec;
    used.insert(ScheduleSet::keyOf(spec.nodeIds));
    compileGroup(ck, *graph, saved, m.staleSchedules);
    m.kernels.push_back(std::move(ck));
  }
  if (progress) progress(m.kernels.size(), groups.size());
  if (saved)
    for (const auto& [key, trace] : saved->traces)
      if (!used.count(key)) m.staleSchedules.push_back("saved schedule for nodes " + key + " matches no kernel");
  return m;
}

std::vector<kernel::KernelSpec> unfusedGroups(const Graph& graph, kernel::Tf32Policy tf32, kernel::Machine machine) {
  std::vector<kernel::KernelSpec> out;
  for (Node* n : graph.topoOrder())
    out.push_back({std::string("n").append(std::to_string(out.size())), n->op(), {n->id()}, tf32, machine});
  return out;
}

}  // namespace tessera::execute
