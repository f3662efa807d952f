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

int launchCount(const Kernel& k) {
  int n = 1;
  walk(k.body, [&](StmtNode& s) { n += s.kind == StmtKind::Sync && static_cast<SyncStmt&>(s).grid; });
  return n;
}

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

int64_t bufferCopies(const Kernel& k, const std::string& buffer) {
  int64_t copies = 1;
  if (!k.body) return copies;
  walk(k.body, [&](StmtNode& s) {
    if (s.kind != StmtKind::For || static_cast<ForStmt&>(s).h.pipelineStages <= 1) return;
    int64_t stages = static_cast<ForStmt&>(s).h.pipelineStages;
    walk(static_cast<ForStmt&>(s).body, [&](StmtNode& n) {
      if (n.kind == StmtKind::AsyncCopy && static_cast<AsyncCopyStmt&>(n).dst == buffer) copies = std::max(copies, stages);
    });
  });
  return copies;
}

int64_t sharedBytesPerBlock(const Kernel& k) {
  int64_t bytes = 0;
  for (const Buffer& b : k.buffers)
    if (b.scope == MemScope::Shared) bytes += numElements(b.shape) * int64_t(dtypeSize(b.dtype)) * bufferCopies(k, b.name);
  return bytes;
}

std::string sharedLimitText() { return std::to_string(kSharedBytesLimit / 1024) + " KiB"; }

}  // namespace tessera::kernel
