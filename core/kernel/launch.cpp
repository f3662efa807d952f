#include "kernel/launch.h"

#include <algorithm>

#include "kernel/visit.h"

namespace tessera::kernel {

namespace {
int axisOf(ThreadTag t) {
  switch (t) {
    case ThreadTag::BlockY: case ThreadTag::ThreadY: return 1;
    case ThreadTag::BlockZ: case ThreadTag::ThreadZ: return 2;
    default: return 0;
  }
}
}  // namespace

LaunchShape launchShape(const Kernel& k) {
  LaunchShape out;
  int64_t warps = 0;
  walk(k.body, [&](StmtNode& s) {
    if (s.kind != StmtKind::For) return;
    const LoopHeader& h = static_cast<ForStmt&>(s).h;
    if (h.loopKind != LoopKind::Bound) return;
    int64_t n = std::max<int64_t>(1, h.extent);
    if (h.tag == ThreadTag::Warp) warps = std::max(warps, n);
    else if (isMmaTag(h.tag)) warps = std::max<int64_t>(warps, 1);  // the lanes of one warp
    else if (isBlockTag(h.tag)) out.grid[axisOf(h.tag)] = std::max(out.grid[axisOf(h.tag)], n);
    else out.block[axisOf(h.tag)] = std::max(out.block[axisOf(h.tag)], n);
  });
  if (warps) out.block[0] = std::max(out.block[0], warps * 32);
  return out;
}

}  // namespace tessera::kernel
