#include "kernel/schedule/trace.h"

#include <algorithm>
#include <functional>
#include <map>

namespace tessera::kernel {
namespace {

using json = nlohmann::json;

MemScope parseScope(const std::string& s) {
  if (s == "shared") return MemScope::Shared;
  if (s == "register") return MemScope::Register;
  if (s == "global") return MemScope::Global;
  fail("trace: unknown memory scope '" + s + "'");
}

const std::string& input(const Instruction& ins, size_t i) {
  if (i >= ins.inputs.size()) fail("trace: " + ins.kind + " needs input " + std::to_string(i));
  return ins.inputs[i];
}

template <class T>
T attr(const Instruction& ins, const char* name) {
  if (!ins.attrs.is_object() || !ins.attrs.contains(name)) fail("trace: " + ins.kind + " lacks attribute '" + name + "'");
  try {
    return ins.attrs.at(name).get<T>();
  } catch (const json::exception&) {
    fail("trace: " + ins.kind + " attribute '" + name + "' has the wrong type");
  }
}

using Apply = std::function<std::vector<std::string>(Kernel&, const Instruction&)>;

const std::map<std::string, Apply>& primitives() {
  static const std::map<std::string, Apply> table = {
      {"split", [](Kernel& k, const Instruction& i) { return sched::split(k, input(i, 0), attr<int64_t>(i, "factor")); }},
      {"tile", [](Kernel& k, const Instruction& i) { return sched::tile(k, i.inputs, attr<std::vector<int64_t>>(i, "factors")); }},
      {"reorder", [](Kernel& k, const Instruction& i) { sched::reorder(k, i.inputs); return std::vector<std::string>{}; }},
      {"fuse", [](Kernel& k, const Instruction& i) { return std::vector<std::string>{sched::fuse(k, input(i, 0), input(i, 1))}; }},
      {"vectorize", [](Kernel& k, const Instruction& i) { sched::vectorize(k, input(i, 0)); return std::vector<std::string>{}; }},
      {"overcompute", [](Kernel& k, const Instruction& i) { sched::overcompute(k, input(i, 0)); return std::vector<std::string>{}; }},
      {"version", [](Kernel& k, const Instruction& i) { return std::vector<std::string>{sched::version(k, input(i, 0))}; }},
      {"unroll", [](Kernel& k, const Instruction& i) { sched::unroll(k, input(i, 0)); return std::vector<std::string>{}; }},
      {"parallel", [](Kernel& k, const Instruction& i) { sched::parallel(k, input(i, 0)); return std::vector<std::string>{}; }},
      {"bind", [](Kernel& k, const Instruction& i) {
         std::string tag = attr<std::string>(i, "thread");
         ThreadTag t = parseThreadTag(tag);
         if (t == ThreadTag::None) fail("trace: bind: unknown thread tag '" + tag + "'");
         sched::bind(k, input(i, 0), t);
         return std::vector<std::string>{};
       }},
      {"cache_read", [](Kernel& k, const Instruction& i) {
         int64_t pad = i.attrs.contains("pad") ? attr<int64_t>(i, "pad") : 0;  // absent in traces without padding
         int64_t padRows = i.attrs.contains("pad_rows") ? attr<int64_t>(i, "pad_rows") : 0;
         int64_t align = i.attrs.contains("align") ? attr<int64_t>(i, "align") : 0;
         return sched::cacheRead(k, input(i, 0), input(i, 1), parseScope(attr<std::string>(i, "scope")), "", pad, padRows, align);
       }},
      {"cache_write", [](Kernel& k, const Instruction& i) {
         return sched::cacheWrite(k, input(i, 0), input(i, 1), parseScope(attr<std::string>(i, "scope")));
       }},
      {"hoist_reduction", [](Kernel& k, const Instruction& i) { return sched::hoistReduction(k, input(i, 0), input(i, 1)); }},
      {"compute_at", [](Kernel& k, const Instruction& i) { return sched::computeAt(k, input(i, 0), input(i, 1)); }},
      {"keep_in_registers", [](Kernel& k, const Instruction& i) { return sched::keepInRegisters(k, input(i, 0), input(i, 1)); }},
      {"online_softmax", [](Kernel& k, const Instruction& i) { return sched::onlineSoftmax(k, input(i, 0)); }},
      {"rfactor", [](Kernel& k, const Instruction& i) { return sched::rfactor(k, input(i, 0)); }},
      {"split_reduction", [](Kernel& k, const Instruction& i) {
         return sched::splitReduction(k, input(i, 0), attr<int64_t>(i, "blocks"));
       }},
      {"split_k", [](Kernel& k, const Instruction& i) { return sched::splitK(k, input(i, 0), attr<int64_t>(i, "parts")); }},
      {"pipeline", [](Kernel& k, const Instruction& i) {
         sched::pipeline(k, input(i, 0), attr<int>(i, "stages"));
         return std::vector<std::string>{};
       }},
      {"swizzle", [](Kernel& k, const Instruction& i) {
         sched::swizzle(k, input(i, 0), attr<int64_t>(i, "bytes"));
         return std::vector<std::string>{};
       }},
      {"deinterleave", [](Kernel& k, const Instruction& i) {
         sched::deinterleave(k, input(i, 0), attr<int64_t>(i, "factor"));
         return std::vector<std::string>{};
       }},
      {"permute", [](Kernel& k, const Instruction& i) {
         sched::permute(k, input(i, 0), attr<std::vector<int64_t>>(i, "perm"));
         return std::vector<std::string>{};
       }},
      {"pack", [](Kernel& k, const Instruction& i) {
         sched::pack(k, input(i, 0), attr<int64_t>(i, "axis"), attr<int64_t>(i, "block"));
         return std::vector<std::string>{};
       }},
      {"set_param", [](Kernel& k, const Instruction& i) {
         if (!i.decision.is_number_integer()) fail("trace: set_param '" + input(i, 0) + "' needs an integer decision");
         sched::setParam(k, input(i, 0), i.decision.get<int64_t>());
         return std::vector<std::string>{};
       }},
  };
  return table;
}

std::vector<std::string> strings(const json& j, const char* field) {
  if (!j.contains(field)) return {};
  if (!j.at(field).is_array()) fail(std::string("trace: '") + field + "' must be a list of names");
  std::vector<std::string> out;
  for (const json& e : j.at(field)) {
    if (!e.is_string()) fail(std::string("trace: '") + field + "' must be a list of names");
    out.push_back(e.get<std::string>());
  }
  return out;
}

}  // namespace

std::vector<std::string> applyInstruction(Kernel& k, const Instruction& ins) {
  auto it = primitives().find(ins.kind);
  if (it == primitives().end()) fail("trace: unknown primitive '" + ins.kind + "'");
  return it->second(k, ins);
}

void replay(Kernel& k, const Trace& trace) { replayPrefix(k, trace, trace.instructions.size()); }

void replayPrefix(Kernel& k, const Trace& trace, size_t steps) {
  for (size_t n = 0; n < std::min(steps, trace.instructions.size()); ++n) {
    const Instruction& ins = trace.instructions[n];
    std::vector<std::string> out = applyInstruction(k, ins);
    if (out != ins.outputs)
      fail("trace: step " + std::to_string(n) + " (" + ins.kind + ") of kernel '" + k.id +
           "' created other names than recorded: the kernel differs from the one the trace was made on");
  }
}

std::string describeInstruction(const Instruction& ins) {
  auto joined = [](const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  };
  if (ins.kind == "set_param" && !ins.inputs.empty()) return "set_param " + ins.inputs[0] + " = " + ins.decision.dump();
  std::string line = ins.kind;
  if (!ins.inputs.empty()) line += " " + joined(ins.inputs);
  for (const auto& [name, value] : ins.attrs.items()) line += " " + name + " " + (value.is_string() ? value.get<std::string>() : value.dump());
  if (!ins.outputs.empty()) line += " -> " + joined(ins.outputs);
  return line;
}

json Trace::toJson() const {
  json list = json::array();
  for (const Instruction& i : instructions)
    list.push_back({{"kind", i.kind}, {"inputs", i.inputs}, {"attrs", i.attrs}, {"outputs", i.outputs}, {"decision", i.decision}});
  return {{"format", "tessera-trace"}, {"version", 1}, {"instructions", list}};
}

Trace Trace::fromJson(const json& j) {
  if (!j.is_object() || j.value("format", "") != "tessera-trace") fail("trace: not a tessera-trace object");
  if (!j.contains("instructions") || !j.at("instructions").is_array()) fail("trace: 'instructions' must be a list");
  Trace t;
  for (const json& e : j.at("instructions")) {
    if (!e.is_object() || !e.contains("kind") || !e.at("kind").is_string()) fail("trace: an instruction lacks its 'kind'");
    Instruction i;
    i.kind = e.at("kind").get<std::string>();
    i.inputs = strings(e, "inputs");
    i.outputs = strings(e, "outputs");
    if (e.contains("attrs")) i.attrs = e.at("attrs");
    if (!i.attrs.is_object()) fail("trace: " + i.kind + ": 'attrs' must be an object");
    if (e.contains("decision")) i.decision = e.at("decision");
    t.instructions.push_back(std::move(i));
  }
  return t;
}

std::string Trace::save() const { return toJson().dump(2); }

Trace Trace::load(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) fail("trace: malformed JSON");
  return fromJson(j);
}

std::vector<std::string> TracedSchedule::record(Instruction ins) {
  ins.outputs = applyInstruction(k_, ins);
  trace_.instructions.push_back(ins);
  return ins.outputs;
}

std::vector<std::string> TracedSchedule::split(const std::string& loop, int64_t factor) {
  return record({"split", {loop}, {{"factor", factor}}, {}, nullptr});
}
std::vector<std::string> TracedSchedule::tile(const std::vector<std::string>& loops, const std::vector<int64_t>& factors) {
  return record({"tile", loops, {{"factors", factors}}, {}, nullptr});
}
void TracedSchedule::reorder(const std::vector<std::string>& order) { record({"reorder", order, json::object(), {}, nullptr}); }
std::string TracedSchedule::fuse(const std::string& outer, const std::string& inner) {
  return record({"fuse", {outer, inner}, json::object(), {}, nullptr}).at(0);
}
void TracedSchedule::vectorize(const std::string& loop) { record({"vectorize", {loop}, json::object(), {}, nullptr}); }
void TracedSchedule::overcompute(const std::string& loop) { record({"overcompute", {loop}, json::object(), {}, nullptr}); }
std::string TracedSchedule::version(const std::string& loop) {
  return record({"version", {loop}, json::object(), {}, nullptr}).at(0);
}
void TracedSchedule::unroll(const std::string& loop) { record({"unroll", {loop}, json::object(), {}, nullptr}); }
void TracedSchedule::parallel(const std::string& loop) { record({"parallel", {loop}, json::object(), {}, nullptr}); }
void TracedSchedule::bind(const std::string& loop, ThreadTag tag) {
  record({"bind", {loop}, {{"thread", std::string(threadTagName(tag))}}, {}, nullptr});
}
std::vector<std::string> TracedSchedule::cacheRead(const std::string& loop, const std::string& buffer, MemScope scope,
                                                   int64_t pad, int64_t padRows, int64_t align) {
  json attrs = {{"scope", std::string(memScopeName(scope))}};
  if (pad != 0) attrs["pad"] = pad;
  if (padRows != 0) attrs["pad_rows"] = padRows;
  if (align != 0) attrs["align"] = align;
  return record({"cache_read", {loop, buffer}, attrs, {}, nullptr});
}
std::vector<std::string> TracedSchedule::cacheWrite(const std::string& loop, const std::string& buffer, MemScope scope) {
  return record({"cache_write", {loop, buffer}, {{"scope", std::string(memScopeName(scope))}}, {}, nullptr});
}
std::vector<std::string> TracedSchedule::computeAt(const std::string& cache, const std::string& loop) {
  return record({"compute_at", {cache, loop}, json::object(), {}, nullptr});
}
std::vector<std::string> TracedSchedule::hoistReduction(const std::string& reduction, const std::string& loop) {
  return record({"hoist_reduction", {reduction, loop}, json::object(), {}, nullptr});
}
std::vector<std::string> TracedSchedule::keepInRegisters(const std::string& loop, const std::string& buffer) {
  return record({"keep_in_registers", {loop, buffer}, json::object(), {}, nullptr});
}
std::vector<std::string> TracedSchedule::rfactor(const std::string& loop) {
  return record({"rfactor", {loop}, json::object(), {}, nullptr});
}
std::vector<std::string> TracedSchedule::onlineSoftmax(const std::string& loop) {
  return record({"online_softmax", {loop}, json::object(), {}, nullptr});
}
std::vector<std::string> TracedSchedule::splitReduction(const std::string& loop, int64_t blocks) {
  return record({"split_reduction", {loop}, {{"blocks", blocks}}, {}, nullptr});
}
std::vector<std::string> TracedSchedule::splitK(const std::string& loop, int64_t parts) {
  return record({"split_k", {loop}, {{"parts", parts}}, {}, nullptr});
}
void TracedSchedule::pipeline(const std::string& loop, int stages) {
  record({"pipeline", {loop}, {{"stages", stages}}, {}, nullptr});
}
void TracedSchedule::swizzle(const std::string& buffer, int64_t bytes) {
  record({"swizzle", {buffer}, {{"bytes", bytes}}, {}, nullptr});
}
void TracedSchedule::deinterleave(const std::string& buffer, int64_t factor) {
  record({"deinterleave", {buffer}, {{"factor", factor}}, {}, nullptr});
}
void TracedSchedule::permute(const std::string& buffer, const std::vector<int64_t>& perm) {
  record({"permute", {buffer}, {{"perm", perm}}, {}, nullptr});
}
void TracedSchedule::pack(const std::string& buffer, int64_t axis, int64_t block) {
  record({"pack", {buffer}, {{"axis", axis}, {"block", block}}, {}, nullptr});
}
int64_t TracedSchedule::setParam(const std::string& name, int64_t value) {
  record({"set_param", {name}, json::object(), {}, value});
  return value;
}

}  // namespace tessera::kernel
