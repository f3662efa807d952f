// Cross-thread reductions on the GPU: after the outermost reduction loop, the partial results of the threads
// bound to a threadIdx.x reduction loop are combined (warp shuffles, then one shared slot per warp) and every
// thread gets the total (docs/kernel-ir.md, Reductions).
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
}  // namespace

void Generator::combineAcrossThreads(const ForStmt& outer) {
  std::vector<const ReduceStmt*> reduces;
  auto self = std::make_shared<ForStmt>(outer);  // collect() takes a Stmt; a shallow copy is enough
  collect(self, false, reduces);
  std::set<std::string> done;
  unsigned bx = out_.launch.block[0], rows = out_.launch.block[1] * out_.launch.block[2];
  for (const ReduceStmt* r : reduces) {
    std::string linear = ep_.linear(r->buffer, r->indices);
    std::string ref = identifier(r->buffer) + "[" + linear + "]";
    if (!done.insert(ref).second) continue;
    const Buffer& b = ep_.buffer(r->buffer);
    std::string t = computeType(b.dtype, target_);
    // The partial is one value, or online softmax's pair (m, s) merged by tsr_maxsumexp_merge.
    bool pair = r->op == ReduceOp::MaxSumExp;
    std::vector<std::string> parts = pair ? std::vector<std::string>{"m", "s"} : std::vector<std::string>{"r"};
    std::vector<std::string> refs = {ref};
    if (pair) refs.push_back(identifier(r->buffer) + "[" + linear + " + 1]");
    // `other(part)` is the partner's value of a part; the statement merges the partner into this thread's.
    auto merge = [&](const std::function<std::string(const std::string&)>& other) {
      if (pair) return "tsr_maxsumexp_merge(m, s, " + other("m") + ", " + other("s") + ");";
      return "r = " + reduceCombine(r->op, b.dtype, target_, "r", other("r")) + ";";
    };
    std::string red = "tsr_red" + std::to_string(combineCount_++);
    auto slots = [&](const std::string& part) { return pair ? red + "_" + part : red; };
    const auto& prov = r->provenance;
    line("{  // combine the threads' partial " + std::string(reduceOpName(r->op)) + "s of " + identifier(r->buffer), prov);
    ++indent_;
    for (size_t i = 0; i < parts.size(); ++i)
      line(t + " " + parts[i] + " = " + (pair ? refs[i] : ep_.fromStorage(r->buffer, refs[i])) + ";", prov);
    // Every thread's partial (or one per warp) into shared slots, then each thread merges them in order.
    auto throughShared = [&](unsigned count, const std::string& slotOf, const std::string& writer) {
      for (const std::string& p : parts) line("__shared__ " + t + " " + slots(p) + "[" + std::to_string(count * rows) + "];", prov);
      line("const unsigned slot = (threadIdx.z * blockDim.y + threadIdx.y) * " + std::to_string(count) + ";", prov);
      line("__syncthreads();", prov);
      std::string writes;
      for (const std::string& p : parts) writes += " " + slots(p) + "[slot + " + slotOf + "] = " + p + ";";
      line(writer + (pair ? "{" + writes + " }" : writes.substr(1)), prov);
      line("__syncthreads();", prov);
      for (const std::string& p : parts) line(p + " = " + slots(p) + "[slot];", prov);
      line("for (unsigned w = 1; w < " + std::to_string(count) + "; ++w) " +
               merge([&](const std::string& p) { return slots(p) + "[slot + w]"; }),
           prov);
    };
    bool warpPath = bx % 32 == 0 || (bx < 32 && isPow2(bx));
    if (warpPath) {
      unsigned width = bx < 32 ? bx : 32;
      std::string mask = width == 32 ? "0xffffffffu" : "0x" + [&] {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%xu", (1u << width) - 1);
        return std::string(buf);
      }();
      if (width > 1)
        line("for (int o = " + std::to_string(width / 2) + "; o > 0; o >>= 1) " + (pair ? "{ " : "") +
                 merge([&](const std::string& p) { return "__shfl_xor_sync(" + mask + ", " + p + ", o)"; }) +
                 (pair ? " }" : ""),
             prov);
      if (bx > 32) throughShared(bx / 32, "threadIdx.x / 32", "if ((threadIdx.x & 31) == 0) ");
    } else {
      // Block widths that are not whole warps: every thread's value through shared memory, merged in order.
      throughShared(bx, "threadIdx.x", "");
    }
    for (size_t i = 0; i < parts.size(); ++i)
      line(refs[i] + " = " + (pair ? parts[i] : ep_.toStorage(r->buffer, parts[i])) + ";", prov);
    --indent_;
    line("}", prov);
  }
}

}  // namespace tessera::codegen::detail
