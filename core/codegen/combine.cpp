// Cross-thread reductions on the GPU: after the outermost reduction loop, the partial results of the threads
// bound to a threadIdx.x reduction loop are combined (warp shuffles, then one shared slot per warp) and every
// thread gets the total (docs/kernel-ir.md, Reductions).
#include <cstdio>
#include <functional>
#include <set>

#include "codegen/generator.h"

namespace tessera::codegen::detail {

using namespace kernel;

namespace {
void collect(const Stmt& s, bool underThreads, std::vector<const ReduceStmt*>& out) {
  if (s->kind == StmtKind::For) {
    auto& f = static_cast<ForStmt&>(*s);
    bool bound = f.h.reduction && f.h.loopKind == LoopKind::Bound && f.h.tag == ThreadTag::ThreadX;
    collect(f.body, underThreads || bound, out);
  } else if (s->kind == StmtKind::Block) {
    for (const Stmt& c : static_cast<BlockStmt&>(*s).stmts) collect(c, underThreads, out);
  } else if (s->kind == StmtKind::IfThen) {
    collect(static_cast<IfThenStmt&>(*s).body, underThreads, out);
  } else if (s->kind == StmtKind::Reduce && underThreads) {
    out.push_back(static_cast<const ReduceStmt*>(s.get()));
  }
}
bool isPow2(unsigned n) { return n && !(n & (n - 1)); }

// The mask of the low `width` lanes of a warp, as CUDA source.
std::string laneMask(unsigned width) {
  if (width == 32) return "0xffffffffu";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%xu", (1u << width) - 1);
  return "0x" + std::string(buf);
}
// A lane's `part` from the lane `o` apart. bool and the integers under 32 bits travel as int (CUDA's shuffle has
// no overload for them), so they are cast back to the partial's type, which the merge's template needs.
std::string shuffled(DType t, const std::string& type, const std::string& mask, const std::string& part) {
  std::string s = "__shfl_xor_sync(" + mask + ", " + part + ", o)";
  bool narrow = t == DType::Bool || (isInteger(t) && dtypeSize(t) < 4);
  return narrow ? "static_cast<" + type + ">(" + s + ")" : s;
}

}  // namespace

// One reduction's partial in a thread: one value, or online softmax's pair (m, s) merged by tsr_maxsumexp_merge.
struct Generator::Partial {
  const ReduceStmt* reduce = nullptr;
  DType dtype = DType::F32;        // the accumulator's
  std::string type;                // its compute type
  std::vector<std::string> parts;  // "r", or "m" and "s"
  std::vector<std::string> refs;   // where each part lives in the accumulator
  std::string shared;              // the name of its shared slots
  bool pair() const { return reduce->op == ReduceOp::MaxSumExp; }
  std::string slots(const std::string& part) const { return pair() ? shared + "_" + part : shared; }
  // `other(part)` is the partner's value of a part; the statement merges the partner into this thread's.
  std::string merge(const std::function<std::string(const std::string&)>& other, Target target) const {
    if (pair()) return "tsr_maxsumexp_merge(m, s, " + other("m") + ", " + other("s") + ");";
    return "r = " + reduceCombine(reduce->op, dtype, target, "r", other("r")) + ";";
  }
};

// Every thread's partial (or one per warp: `count` of them per row of threads) into shared slots, written by
// the threads `writer` selects at `slotOf`; then each thread merges them in order.
void Generator::combineThroughShared(const Partial& p, unsigned count, const std::string& slotOf,
                                     const std::string& writer) {
  const auto& prov = p.reduce->provenance;
  unsigned rows = out_.launch.block[1] * out_.launch.block[2];
  int64_t slots = int64_t(count) * rows, bytes = isHalf(p.dtype) ? 4 : int64_t(dtypeSize(p.dtype));
  for (const std::string& part : p.parts)
    line(sharedArray(p.type, p.slots(part), std::to_string(slots), slots, bytes), prov);
  line("const unsigned slot = (threadIdx.z * blockDim.y + threadIdx.y) * " + std::to_string(count) + ";", prov);
  line("__syncthreads();", prov);
  std::string writes;
  for (const std::string& part : p.parts) writes += " " + p.slots(part) + "[slot + " + slotOf + "] = " + part + ";";
  line(writer + (p.pair() ? "{" + writes + " }" : writes.substr(1)), prov);
  line("__syncthreads();", prov);
  for (const std::string& part : p.parts) line(part + " = " + p.slots(part) + "[slot];", prov);
  line("for (unsigned w = 1; w < " + std::to_string(count) + "; ++w) " +
           p.merge([&](const std::string& part) { return p.slots(part) + "[slot + w]"; }, target_),
       prov);
}

// The threads' partials of one accumulator element merged: warp shuffles when the block's width allows (then one
// shared slot per warp), else every thread's through shared memory; the total goes back to the accumulator.
void Generator::combineReduce(const Partial& p) {
  const ReduceStmt& r = *p.reduce;
  const auto& prov = r.provenance;
  unsigned bx = out_.launch.block[0];
  line("{  // combine the threads' partial " + std::string(reduceOpName(r.op)) + "s of " + identifier(r.buffer), prov);
  ++indent_;
  for (size_t i = 0; i < p.parts.size(); ++i)
    line(p.type + " " + p.parts[i] + " = " + (p.pair() ? p.refs[i] : ep_.fromStorage(r.buffer, p.refs[i])) + ";", prov);
  bool warpPath = bx % 32 == 0 || (bx < 32 && isPow2(bx));
  if (warpPath) {
    unsigned width = bx < 32 ? bx : 32;
    std::string mask = laneMask(width);
    if (width > 1)
      line("for (int o = " + std::to_string(width / 2) + "; o > 0; o >>= 1) " + (p.pair() ? "{ " : "") +
               p.merge([&](const std::string& part) { return shuffled(p.dtype, p.type, mask, part); }, target_) +
               (p.pair() ? " }" : ""),
           prov);
    if (bx > 32) combineThroughShared(p, bx / 32, "threadIdx.x / 32", "if ((threadIdx.x & 31) == 0) ");
  } else {
    // Block widths that are not whole warps: every thread's value through shared memory, merged in order.
    combineThroughShared(p, bx, "threadIdx.x", "");
  }
  for (size_t i = 0; i < p.parts.size(); ++i)
    line(p.refs[i] + " = " + (p.pair() ? p.parts[i] : ep_.toStorage(r.buffer, p.parts[i])) + ";", prov);
  --indent_;
  line("}", prov);
}

void Generator::combineAcrossThreads(const ForStmt& outer) {
  std::vector<const ReduceStmt*> reduces;
  auto self = std::make_shared<ForStmt>(outer);  // collect() takes a Stmt; a shallow copy is enough
  collect(self, false, reduces);
  std::set<std::string> done;
  for (const ReduceStmt* r : reduces) {
    std::string linear = ep_.linear(r->buffer, r->indices);
    std::string ref = identifier(r->buffer) + "[" + linear + "]";
    if (!done.insert(ref).second) continue;
    Partial p;
    p.reduce = r;
    p.dtype = ep_.buffer(r->buffer).dtype;
    p.type = computeType(p.dtype, target_);
    p.parts = p.pair() ? std::vector<std::string>{"m", "s"} : std::vector<std::string>{"r"};
    p.refs = {ref};
    if (p.pair()) p.refs.push_back(identifier(r->buffer) + "[" + linear + " + 1]");
    p.shared = "tsr_red" + std::to_string(combineCount_++);
    combineReduce(p);
  }
}

}  // namespace tessera::codegen::detail
