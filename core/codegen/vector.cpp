// The CUDA vector path: a vectorized loop whose lanes read and write consecutive elements starting at a
// multiple of the lane count becomes one wide load per operand into a register array, the lanes computed from
// those registers (an unrolled loop), and one wide store per output. Which accesses qualify is decided by
// planVectorLoop (vector_access.h); the rest of the body runs as written, so a loop with no wide access keeps
// the scalar form of the generator.
#include <functional>
#include <map>
#include <set>

#include "codegen/generator.h"
#include "codegen/vector_access.h"
#include "kernel/visit.h"

namespace tessera::codegen::detail {

using namespace kernel;

namespace {

// The type one group of `width` elements of `t` moves as: float2 / float4, else raw 4, 8 or 16 bytes.
std::string wideType(DType t, int64_t width) {
  if (t == DType::F32) return "float" + std::to_string(width);
  int64_t bytes = dtypeSize(t) * width;
  return bytes == 4 ? "unsigned int" : bytes == 8 ? "uint2" : "uint4";
}

// The names the kernel gives buffers, loops and values, so the register arrays get names of their own.
std::set<std::string> usedNames(const Kernel& k) {
  std::set<std::string> used;
  for (const Buffer& b : k.buffers) used.insert(identifier(b.name));
  walk(k.body, [&](StmtNode& s) {
    if (s.kind == StmtKind::For) used.insert(identifier(static_cast<ForStmt&>(s).h.var));
    if (s.kind == StmtKind::Compute) used.insert(identifier(static_cast<ComputeStmt&>(s).name));
  });
  return used;
}

std::string freshName(std::set<std::string>& used, const std::string& base) {
  std::string name = base;
  for (int i = 1; used.count(name); ++i) name = base + "_" + std::to_string(i);
  used.insert(name);
  return name;
}

}  // namespace

// What the lanes of a vectorized loop read and write instead of memory: the text of each wide or broadcast load,
// the register array of each wide store, and the wide stores written after the lanes (with provenance).
struct Generator::VectorLanes {
  std::map<const ExprNode*, std::string> loadText;
  std::map<const StmtNode*, std::string> storeArray;
  std::vector<std::pair<std::string, std::vector<std::string>>> stores;
};

// The register arrays of the wide accesses (a wide load fills its array at once) and the broadcast values.
void Generator::vectorRegisters(const ForStmt& f, const VectorPlan& plan, VectorLanes& lanes) {
  std::string lane = identifier(f.h.var), width = std::to_string(f.h.extent);
  std::set<std::string> used = usedNames(k_);
  for (const VectorPlan::Wide& w : plan.wide) {
    DType t = ep_.buffer(w.buffer).dtype;
    std::string array = freshName(used, "lanes_" + identifier(w.buffer));
    std::string type = wideType(t, f.h.extent);
    std::string at = "&" + identifier(w.buffer) + "[" + ep_.print(w.offset) + "]";
    line("alignas(" + std::to_string(dtypeSize(t) * f.h.extent) + ") " + storageType(t, target_) + " " + array + "[" +
             width + "];" + comment(w.provenance),
         w.provenance);
    if (w.store) {
      lanes.storeArray[w.storeStmt] = array;
      lanes.stores.push_back(
          {"*reinterpret_cast<" + type + "*>(" + at + ") = *reinterpret_cast<const " + type + "*>(" + array + ");",
           w.provenance});
      continue;
    }
    line("*reinterpret_cast<" + type + "*>(" + array + ") = *reinterpret_cast<const " + type + "*>(" + at + ");", w.provenance);
    for (const ExprNode* l : w.loads) lanes.loadText[l] = ep_.fromStorage(w.buffer, array + "[" + lane + "]");
  }
  for (const VectorPlan::Broadcast& b : plan.broadcast) {
    const std::string& buffer = b.buffer;
    std::string name = freshName(used, "bcast_" + identifier(buffer));
    line("const " + storageType(ep_.buffer(buffer).dtype, target_) + " " + name + " = " + identifier(buffer) + "[" +
             ep_.print(b.offset) + "];" + comment(b.provenance),
         b.provenance);
    for (const ExprNode* l : b.loads) lanes.loadText[l] = ep_.fromStorage(buffer, name);
  }
}

// A statement of the lane loop `f` as the generator writes it, except that the wide stores fill their arrays.
void Generator::laneStmt(const Stmt& s, const ForStmt& f, const VectorLanes& lanes) {
  std::string lane = identifier(f.h.var);
  if (s->kind == StmtKind::Block) {
    bool nested = s != f.body;
    if (nested) line("{", s->provenance);
    indent_ += nested;
    for (const Stmt& c : static_cast<BlockStmt&>(*s).stmts) laneStmt(c, f, lanes);
    indent_ -= nested;
    if (nested) line("}", s->provenance);
  } else if (auto it = lanes.storeArray.find(s.get()); it != lanes.storeArray.end()) {
    const auto& st = static_cast<const StoreStmt&>(*s);
    line(it->second + "[" + lane + "] = " + ep_.toStorage(st.buffer, ep_.print(st.value)) + ";" + comment(s->provenance),
         s->provenance);
  } else {
    stmt(s);
  }
}

bool Generator::vectorLoop(const ForStmt& f) {
  if (target_ != Target::Cuda) return false;
  VectorPlan plan = planVectorLoop(k_, f);
  if (plan.empty()) return false;
  std::string lane = identifier(f.h.var), width = std::to_string(f.h.extent);
  VectorLanes lanes;
  line("{  // loop " + lane + ": " + width + " lanes, one wide load or store per operand", f.provenance);
  ++indent_;
  vectorRegisters(f, plan, lanes);
  ep_.setLoadText(std::move(lanes.loadText));
  line("#pragma unroll", f.provenance);
  line("for (" + indexType(target_) + " " + lane + " = 0; " + lane + " < " + width + "; ++" + lane + ") {", f.provenance);
  ++indent_;
  laneStmt(f.body, f, lanes);
  --indent_;
  line("}", f.provenance);
  ep_.setLoadText({});
  for (const auto& [text, provenance] : lanes.stores) line(text + comment(provenance), provenance);
  --indent_;
  line("}", f.provenance);
  return true;
}

}  // namespace tessera::codegen::detail
