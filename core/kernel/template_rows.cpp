#include "kernel/template_util.h"

#include <cctype>

#include "kernel/schedule_util.h"
#include "kernel/visit.h"

namespace tessera::kernel::templ {
namespace {

// The loops over the last axis inside the row body (k0, k1, ..., j), and the buffer the first one reads.
std::vector<std::string> rowLoops(Kernel& k, std::string* rowBuffer) {
  std::vector<std::string> out;
  walk(k.body, [&](StmtNode& n) {
    if (n.kind != StmtKind::For) return;
    const std::string& v = static_cast<ForStmt&>(n).h.var;
    if ((v.size() > 1 && v[0] == 'k' && std::isdigit(static_cast<unsigned char>(v[1]))) || v == "j") out.push_back(v);
    if (out.size() == 1 && rowBuffer && rowBuffer->empty())
      walk(static_cast<ForStmt&>(n).body, [&](StmtNode& m) {
        mapDirectExprs(m, [&](const Expr& e) {
          walkExpr(e, [&](const ExprNode& x) {
            if (x.kind == ExprKind::Load && rowBuffer->empty() && k.findBuffer(static_cast<const Load&>(x).buffer)->role == BufferRole::Input)
              *rowBuffer = static_cast<const Load&>(x).buffer;
          });
          return e;
        });
      });
  });
  return out;
}

void rowReduction(TracedSchedule& s, const TemplateParams& p) {
  int64_t threads = p.at("threads");
  std::string row = fuseAll(s, outerChain(s.kernel()));
  std::string buffer;
  std::vector<std::string> loops = rowLoops(s.kernel(), &buffer);
  if (!row.empty()) s.bind(row, ThreadTag::BlockX);
  if (p.at("cache_row") && !row.empty() && !buffer.empty()) {
    auto fill = s.cacheRead(row, buffer, MemScope::Shared);
    bindThreads(s, fill.back(), threads);
  }
  for (const std::string& l : loops) bindThreads(s, l, threads);
}

int64_t rowExtent(Kernel& k) {
  auto loops = rowLoops(k, nullptr);
  return loops.empty() ? 1 : extentOf(k, loops[0]);
}

// A row can be staged in shared memory when the first pass reads it at indices affine in the pass's loop:
// one reduced axis, or several that a flat index maps onto by division (not affine) are read from global.
bool rowCacheable(Kernel& k) {
  std::string buffer;
  auto loops = rowLoops(k, &buffer);
  if (loops.empty() || buffer.empty()) return false;
  bool affine = true;
  walk(detail::findLoop(k, loops[0])->loop->body, [&](StmtNode& n) {
    mapDirectExprs(n, [&](const Expr& e) {
      walkExpr(e, [&](const ExprNode& x) {
        if (x.kind != ExprKind::Load || static_cast<const Load&>(x).buffer != buffer) return;
        for (const Expr& i : static_cast<const Load&>(x).indices) affine = affine && detail::affine(i, {loops[0]}).has_value();
      });
      return e;
    });
  });
  return affine;
}

TemplateParams rowReductionDefaults(Kernel& k) {
  int64_t K = rowExtent(k);
  int64_t bytes = K * 4;
  int phases = int(rowLoops(k, nullptr).size());
  return {{"threads", K <= 1024 ? 32 : 256}, {"cache_row", phases >= 2 && bytes <= 16 * 1024 && rowCacheable(k) ? 1 : 0}};
}

}  // namespace

const TemplateDef& rowReductionTemplate() {
  static const TemplateDef def = {
      rowReduction,
      {{"threads", {32, 64, 128, 256, 512, 1024}, "threads per row: 32 is one warp per row, more is one block per row"},
       {"cache_row", {0, 1}, "keep the row in shared memory across the passes over it"}},
      rowReductionDefaults};
  return def;
}

}  // namespace tessera::kernel::templ
