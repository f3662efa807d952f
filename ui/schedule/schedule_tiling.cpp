#include "ui/schedule/schedule_tiling.h"

#include <QObject>
#include <algorithm>

#include "kernel/launch.h"
#include "kernel/templates/templates.h"

namespace tessera::ui {
namespace {

int64_t param(const kernel::Kernel& k, const char* name, int64_t fallback) {
  auto it = k.params.find(name);
  return it == k.params.end() ? fallback : it->second;
}

const kernel::Buffer* firstBuffer(const kernel::Kernel& k, kernel::BufferRole role, size_t nth = 0) {
  for (const kernel::Buffer& b : k.buffers)
    if (b.role == role && nth-- == 0) return &b;
  return nullptr;
}

int64_t dim(const Shape& s, int fromEnd) {
  return int64_t(s.size()) >= fromEnd ? s[s.size() - size_t(fromEnd)] : 1;
}

// gemm: C = A × B over the last two axes; the first two inputs are A [.., M, K] and B [.., K, N].
void gemmTiles(const kernel::Kernel& k, TilingPicture& p) {
  const kernel::Buffer* out = firstBuffer(k, kernel::BufferRole::Output);
  const kernel::Buffer* a = firstBuffer(k, kernel::BufferRole::Input, 0);
  const kernel::Buffer* b = firstBuffer(k, kernel::BufferRole::Input, 1);
  if (!out || !a || !b) return;
  const int64_t M = dim(out->shape, 2), N = dim(out->shape, 1), K = dim(a->shape, 1);
  const int64_t bm = std::min(param(k, "block_m", M), M), bn = std::min(param(k, "block_n", N), N);
  const int64_t bk = std::min(param(k, "block_k", K), K);
  p.tileRows = bm;
  p.tileCols = bn;
  p.tileCaption = QObject::tr("%1 × %2 outputs per block (of %3 × %4), k in steps of %5").arg(bm).arg(bn).arg(M).arg(N).arg(bk);
  p.operands.push_back({"A", M, K, bm, bk, QObject::tr("A %1×%2: %3 rows × block_k %4 per step").arg(M).arg(K).arg(bm).arg(bk)});
  p.operands.push_back({"B", K, N, bk, bn, QObject::tr("B %1×%2: block_k %3 × %4 columns per step").arg(K).arg(N).arg(bk).arg(bn)});
}

void otherTiles(const kernel::Kernel& k, const std::string& name, TilingPicture& p) {
  const kernel::Buffer* out = firstBuffer(k, kernel::BufferRole::Output);
  const int64_t n = out ? numElements(out->shape) : 1;
  const int64_t threads = p.blockX * p.blockY * p.blockZ;
  if (name == "transpose") {
    const int64_t t = param(k, "tile", 32);
    p.tileRows = p.tileCols = t;
    p.tileCaption = QObject::tr("%1 × %1 tile per block%2").arg(t).arg(param(k, "shared_tile", 0) ? QObject::tr(", staged in shared memory") : QString());
    return;
  }
  if (name == "row-reduction") {
    p.tileRows = 1;
    p.tileCols = out ? std::max<int64_t>(1, n / std::max<int64_t>(1, p.blocks)) : 1;
    const int64_t split = param(k, "blocks_per_row", 1);
    const int launches = kernel::launchCount(k);
    p.tileCaption = split > 1 ? QObject::tr("each row over %1 blocks, %2 threads across each part; %3 launches, one per pass")
                                    .arg(split).arg(threads).arg(launches)
                              : QObject::tr("one row per block, %1 threads across it").arg(threads);
    return;
  }
  const int64_t parts = param(k, "split_k", 1);
  if (parts > 1) {  // every output tile computed by `parts` blocks, each over its share of k
    const int64_t perTile = (n * parts + p.blocks - 1) / std::max<int64_t>(1, p.blocks);
    p.tileRows = 1;
    p.tileCols = perTile;
    p.tileCaption = QObject::tr("%1 outputs per block, each block summing 1/%2 of k (split-K); %3 launches: the parts, then "
                                "their sum and the epilogue; %4 threads")
                        .arg(perTile).arg(parts).arg(kernel::launchCount(k)).arg(threads);
    return;
  }
  const int64_t per = (n + p.blocks - 1) / std::max<int64_t>(1, p.blocks);
  p.tileRows = 1;
  p.tileCols = per;
  if (name == "pointwise")
    p.tileCaption = QObject::tr("%1 elements per block: %2 threads × %3 per thread × vector %4")
                        .arg(per).arg(threads).arg(param(k, "elems_per_thread", 1)).arg(param(k, "vector_width", 1));
  else
    p.tileCaption = QObject::tr("%1 outputs per block, %2 threads").arg(per).arg(threads);
}

}  // namespace

int64_t TilingPicture::waveOf(int64_t x, int64_t y, int64_t z) const {
  const int64_t linear = (z * gridY + y) * gridX + x;
  return linear / std::max<int64_t>(1, slotsPerWave);
}

TilingPicture describeTiling(const kernel::Kernel& k, const codegen::LaunchDims& launch, const cost::Device& device) {
  TilingPicture p;
  const std::string name = kernel::templateName(k);
  p.templateName = QString::fromStdString(name);
  p.gridX = launch.grid[0], p.gridY = launch.grid[1], p.gridZ = launch.grid[2];
  p.blockX = launch.block[0], p.blockY = launch.block[1], p.blockZ = launch.block[2];
  p.blocks = p.gridX * p.gridY * p.gridZ;
  if (const kernel::Buffer* out = firstBuffer(k, kernel::BufferRole::Output))
    p.outputShape = QString::fromStdString(std::string(dtypeName(out->dtype)) + shapeToString(out->shape));
  const cost::Estimate e = cost::predict(k, device);
  p.blocksPerSm = std::max(0, e.blocksPerSm);
  p.occupancyLimit = QString::fromStdString(e.occupancyLimit);
  p.smCount = device.smCount;
  p.slotsPerWave = std::max<int64_t>(1, int64_t(p.blocksPerSm) * device.smCount);
  p.waves = (p.blocks + p.slotsPerWave - 1) / p.slotsPerWave;
  p.sharedBytes = e.figures.sharedBytesPerBlock;
  p.sharedLimit = device.sharedBytesPerBlock;
  p.registersPerThread = e.figures.registersPerThread;
  p.registerLimit = device.maxRegistersPerThread;
  p.registersPerBlock = int64_t(p.registersPerThread) * e.figures.threadsPerBlock;
  p.registersPerBlockLimit = device.registersPerBlock;
  p.deviceName = QString::fromStdString(device.name);
  p.estimate = QString::fromStdString(e.summary());
  p.feasible = e.feasible;
  p.infeasible = QString::fromStdString(e.infeasible);
  if (name == "gemm") gemmTiles(k, p);
  else otherTiles(k, name, p);
  return p;
}

}  // namespace tessera::ui
