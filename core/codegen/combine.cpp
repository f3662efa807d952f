// Cross-thread reductions on the GPU: after the outermost reduction loop, the partial results of the threads
// bound to a threadIdx.x reduction loop are combined (warp shuffles, then one shared slot per warp) and every
// thread gets the total (docs/kernel-ir.md, Reductions).
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
    std::string ref = identifier(r->buffer) + "[" + ep_.linear(r->buffer, r->indices) + "]";
    if (!done.insert(ref).second) continue;
    const Buffer& b = ep_.buffer(r->buffer);
    std::string t = computeType(b.dtype, target_);
    std::string red = "tsr_red" + std::to_string(combineCount_++);
    auto comb = [&](const std::string& a, const std::string& c) { return reduceCombine(r->op, b.dtype, target_, a, c); };
    const auto& prov = r->provenance;
    line("{  // combine the threads' partial " + std::string(reduceOpName(r->op)) + "s of " + identifier(r->buffer), prov);
    ++indent_;
    line(t + " r = " + ep_.fromStorage(r->buffer, ref) + ";", prov);
    bool warpPath = bx % 32 == 0 || (bx < 32 && isPow2(bx));
    if (warpPath) {
      unsigned width = bx < 32 ? bx : 32;
      std::string mask = width == 32 ? "0xffffffffu" : "0x" + [&] {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%xu", (1u << width) - 1);
        return std::string(buf);
      }();
      if (width > 1)
        line("for (int o = " + std::to_string(width / 2) + "; o > 0; o >>= 1) r = " +
                 comb("r", "__shfl_xor_sync(" + mask + ", r, o)") + ";",
             prov);
      if (bx > 32) {
        unsigned warps = bx / 32;
        line("__shared__ " + t + " " + red + "[" + std::to_string(warps * rows) + "];", prov);
        line("const unsigned slot = (threadIdx.z * blockDim.y + threadIdx.y) * " + std::to_string(warps) + ";", prov);
        line("__syncthreads();", prov);
        line("if ((threadIdx.x & 31) == 0) " + red + "[slot + threadIdx.x / 32] = r;", prov);
        line("__syncthreads();", prov);
        line("r = " + red + "[slot];", prov);
        line("for (unsigned w = 1; w < " + std::to_string(warps) + "; ++w) r = " + comb("r", red + "[slot + w]") + ";", prov);
      }
    } else {
      // Block widths that are not whole warps: every thread's value through shared memory, summed in order.
      line("__shared__ " + t + " " + red + "[" + std::to_string(bx * rows) + "];", prov);
      line("const unsigned slot = (threadIdx.z * blockDim.y + threadIdx.y) * " + std::to_string(bx) + ";", prov);
      line("__syncthreads();", prov);
      line(red + "[slot + threadIdx.x] = r;", prov);
      line("__syncthreads();", prov);
      line("r = " + red + "[slot];", prov);
      line("for (unsigned w = 1; w < " + std::to_string(bx) + "; ++w) r = " + comb("r", red + "[slot + w]") + ";", prov);
    }
    line(ref + " = " + ep_.toStorage(r->buffer, "r") + ";", prov);
    --indent_;
    line("}", prov);
  }
}

}  // namespace tessera::codegen::detail
