#include "kernel/templates/template_util.h"

#include <algorithm>
#include <set>

#include "kernel/launch.h"
#include "kernel/schedule/schedule_util.h"
#include "kernel/visit.h"

namespace tessera::kernel::templ {

// The data-parallel loops of the perfect nest starting at `s`, outermost first.
std::vector<std::string> chainFrom(Stmt s) {
  std::vector<std::string> out;
  for (;;) {
    s = unwrapBlocks(s);
    if (s->kind != StmtKind::For || static_cast<ForStmt&>(*s).h.reduction) return out;
    out.push_back(static_cast<ForStmt&>(*s).h.var);
    s = static_cast<ForStmt&>(*s).body;
  }
}

std::vector<std::string> outerChain(const Kernel& k) { return chainFrom(k.body); }

// The top-level loop nests of the kernel (several for Split), each as its chain of data-parallel loops.
std::vector<std::vector<std::string>> topNests(const Kernel& k) {
  std::vector<std::vector<std::string>> out;
  if (k.body->kind != StmtKind::Block) return {outerChain(k)};
  for (const Stmt& s : static_cast<BlockStmt&>(*k.body).stmts) out.push_back(chainFrom(s));
  return out;
}

int64_t extentOf(Kernel& k, const std::string& loop) {
  auto site = detail::findLoop(k, loop);
  return site ? site->loop->h.extent : 1;
}

int64_t chainExtent(Kernel& k, const std::vector<std::string>& loops) {
  int64_t n = 1;
  for (const std::string& l : loops) n *= extentOf(k, l);
  return n;
}

// The largest candidate not above `limit` that divides `extent` (or the smallest candidate).
int64_t pickDividing(const std::vector<int64_t>& candidates, int64_t extent, int64_t limit) {
  int64_t best = candidates.front();
  for (int64_t c : candidates)
    if (c <= limit && extent % c == 0) best = std::max(best, c);
  return best;
}

// Fuses a list of nested loops into one; returns its name ("" for none).
std::string fuseAll(TracedSchedule& s, const std::vector<std::string>& loops) {
  if (loops.empty()) return "";
  std::string f = loops[0];
  for (size_t i = 1; i < loops.size(); ++i) f = s.fuse(f, loops[i]);
  return f;
}

// Splits `loop` by min(factor, extent): returns {outer, inner}, or {loop, ""} when the factor is 1.
std::pair<std::string, std::string> splitBy(TracedSchedule& s, const std::string& loop, int64_t factor) {
  factor = std::min(factor, extentOf(s.kernel(), loop));
  if (factor <= 1) return {loop, ""};
  auto parts = s.split(loop, factor);
  return {parts[0], parts[1]};
}

// Binds a loop to the threads of a block: split by `threads` when it is longer.
void bindThreads(TracedSchedule& s, const std::string& loop, int64_t threads, ThreadTag tag) {
  if (extentOf(s.kernel(), loop) <= threads) return s.bind(loop, tag);
  auto [outer, inner] = splitBy(s, loop, threads);
  s.bind(inner, tag);
}

void rejectParams(Kernel& k, const std::string& templateName, const std::string& param, const std::string& what) {
  throw ScheduleError("template " + templateName, k.id, param, 0, what);
}

// The input buffers read inside `loop`, in buffer order (the gemm's operands A and B).
std::vector<std::string> inputsReadIn(Kernel& k, const std::string& loop) {
  std::set<std::string> read;
  auto site = detail::findLoop(k, loop);
  if (!site) return {};
  walk(site->loop->body, [&](StmtNode& n) {
    mapDirectExprs(n, [&](const Expr& e) {
      walkExpr(e, [&](const ExprNode& x) {
        if (x.kind == ExprKind::Load) read.insert(static_cast<const Load&>(x).buffer);
      });
      return e;
    });
  });
  std::vector<std::string> out;
  for (const Buffer& b : k.buffers)
    if (b.role == BufferRole::Input && read.count(b.name)) out.push_back(b.name);
  return out;
}

bool operandsOf(Kernel& k, const std::string& loop, std::initializer_list<DType> types) {
  auto inputs = inputsReadIn(k, loop);
  return !inputs.empty() && std::all_of(inputs.begin(), inputs.end(), [&](const std::string& b) {
    return std::find(types.begin(), types.end(), k.findBuffer(b)->dtype) != types.end();
  });
}

void checkTf32(Kernel& k, const std::string& templateName, const TemplateParams& p, const std::string& depthLoop) {
  const int64_t tf32 = p.at("tf32");
  if (tf32 < 0 || tf32 > 3)
    rejectParams(k, templateName, "tf32", "tf32 = " + std::to_string(tf32) + ": 0 (off), 1 (rounded), 2 (truncated) or 3 (rounded by an add)");
  if (tf32 && !operandsOf(k, depthLoop, {DType::F32}))
    rejectParams(k, templateName, "tf32", "tf32 rounds f32 operands; these are not f32: set tf32 = 0");
}

namespace {
// Edge tiles guard the lanes (a tile that does not divide the output): vectorize refuses them, and the lanes
// stay an unrolled loop of plain accesses.
bool tryVectorize(TracedSchedule& s, const std::string& loop) {
  try {
    s.vectorize(loop);
    return true;
  } catch (const ScheduleError&) {
    return false;
  }
}
}  // namespace

void bindFill(TracedSchedule& s, const std::vector<std::string>& fillLoops, const ThreadDims& dims, int64_t lanes,
              bool vectorized) {
  std::string rest = fuseAll(s, fillLoops);
  int64_t n = extentOf(s.kernel(), rest);
  if (lanes > 1 && n > lanes && n % lanes == 0) {
    auto [outer, inner] = splitBy(s, rest, lanes);
    if (!vectorized || !tryVectorize(s, inner)) s.unroll(inner);
    rest = outer;
  }
  for (auto [threads, tag] : dims) {
    if (threads <= 1) continue;
    if (extentOf(s.kernel(), rest) <= threads) return s.bind(rest, tag);
    auto [outer, inner] = splitBy(s, rest, threads);
    s.bind(inner, tag);
    rest = outer;
  }
  if (extentOf(s.kernel(), rest) <= 16) s.unroll(rest);
}

std::vector<std::string> stageOperands(TracedSchedule& s, const std::string& ko, const ThreadDims& dims, int64_t pad,
                                       int64_t copyBytes) {
  return stageOperands(s, ko, dims, [pad](const std::string&) { return pad; }, copyBytes);
}

std::vector<std::string> stageOperands(TracedSchedule& s, const std::string& ko, const ThreadDims& dims, const PadOf& padOf,
                                       int64_t copyBytes) {
  std::vector<std::string> caches;
  for (const std::string& operand : inputsReadIn(s.kernel(), ko)) {
    int64_t lanes = copyBytes / int64_t(dtypeSize(s.kernel().findBuffer(operand)->dtype));
    auto fill = s.cacheRead(ko, operand, MemScope::Shared, padOf(operand));
    caches.push_back(fill[0]);
    bindFill(s, std::vector<std::string>(fill.begin() + 1, fill.end()), dims, lanes);
  }
  return caches;
}

bool indexUses(Kernel& k, const std::string& loop, const std::string& buffer, const std::string& var, bool front) {
  auto site = detail::findLoop(k, loop);
  if (!site) return false;
  bool found = false;
  walk(site->loop->body, [&](StmtNode& n) {
    mapDirectExprs(n, [&](const Expr& e) {
      walkExpr(e, [&](const ExprNode& x) {
        if (x.kind != ExprKind::Load) return;
        const auto& ld = static_cast<const Load&>(x);
        if (ld.buffer == buffer && !ld.indices.empty() && usesVar(front ? ld.indices.front() : ld.indices.back(), var)) found = true;
      });
      return e;
    });
  });
  return found;
}

void pipelineStages(TracedSchedule& s, const std::string& ko, const TemplateParams& p) {
  int64_t stages = std::min(p.at("stages"), extentOf(s.kernel(), ko));
  int64_t perStage = sharedBytesPerBlock(s.kernel());  // the tiles staged at ko: all the block's shared memory
  while (stages > 1 && stages * perStage > kSharedBytesLimit) --stages;
  if (stages > 1) s.pipeline(ko, int(stages));
}

int64_t splitKParam(const TemplateParams& p) { return p.count("split_k") ? p.at("split_k") : 1; }

void splitKOuter(TracedSchedule& s, const std::string& ko, const TemplateParams& p, const std::string& templateName) {
  int64_t parts = splitKParam(p);
  if (parts <= 1) return;
  int64_t steps = extentOf(s.kernel(), ko);
  if (steps % parts != 0)
    rejectParams(s.kernel(), templateName, "split_k",
                 std::to_string(parts) + " parts do not divide the " + std::to_string(steps) + " k steps");
  s.splitK(ko, parts);
}

std::pair<std::string, std::string> splitLanes(TracedSchedule& s, const std::string& loop) {
  if (extentOf(s.kernel(), loop) <= kVectorLanes) return {"", loop};
  return splitBy(s, loop, kVectorLanes);
}

bool holdsGuard(Kernel& k, const std::string& loop) {
  auto site = detail::findLoop(k, loop);
  return site && detail::containsKind(site->loop->body, StmtKind::IfThen);
}

void unrollAndVectorize(TracedSchedule& s, const std::vector<std::string>& copies, const std::vector<std::string>& unrolled,
                        const std::string& lanes, bool guarded) {
  auto each = [&](const std::string& loop, bool vectorized) {
    if (loop.empty()) return;
    auto apply = [&](const std::string& l) { vectorized && !guarded ? s.vectorize(l) : s.unroll(l); };
    apply(loop);
    for (const std::string& c : copies)
      if (c == loop + "_init" || c == loop + "_epi") apply(c);
  };
  for (const std::string& l : unrolled) each(l, false);
  each(lanes, true);
}

}  // namespace tessera::kernel::templ
