#pragma once
// What the schedule picture draws, as plain data computed from a scheduled kernel, its launch and a device:
// the grid of block tiles over the output with the wave of SMs each block runs in, one block's tile and the
// operand tiles it reads (gemm: A rows × block_k, B block_k × columns), and shared memory and registers
// against the device's limits. Occupancy and waves come from the cost model (core/cost), the launch from the
// CUDA generator, so the picture shows what runs.
#include <QString>
#include <QStringList>
#include <vector>

#include "codegen/codegen.h"
#include "cost/cost_model.h"
#include "kernel/kernel_ir.h"

namespace tessera::ui {

struct OperandTile {
  QString name;            // "A", "B"
  int64_t rows = 0, cols = 0;          // the whole operand (per batch)
  int64_t tileRows = 0, tileCols = 0;  // what one block reads per step of the reduction
  QString caption;         // "A 512×256: rows 64 × block_k 16 per step"
};

struct TilingPicture {
  QString templateName;
  QString outputShape;            // "f32[4,512,1024]"
  int64_t gridX = 1, gridY = 1, gridZ = 1;
  int64_t blockX = 1, blockY = 1, blockZ = 1;
  int64_t tileRows = 1, tileCols = 1;  // one block's share of the output, in elements (1-D grids: 1 × n)
  QString tileCaption;            // "64 × 64 outputs per block", "256 threads × 4 elements"
  std::vector<OperandTile> operands;
  int64_t blocks = 1, slotsPerWave = 1, waves = 1;  // slots = resident blocks per SM × SMs
  int blocksPerSm = 0;
  QString occupancyLimit;         // what caps the resident blocks (threads, shared, registers, blocks)
  int64_t sharedBytes = 0, sharedLimit = 0;
  int registersPerThread = 0, registerLimit = 0;  // the estimate and the per-thread maximum
  int64_t registersPerBlock = 0, registersPerBlockLimit = 0;
  QString deviceName;
  int smCount = 0;
  QString estimate;               // the cost model's one-line summary
  bool feasible = true;
  QString infeasible;             // why the launch cannot run on the device
  // The wave of block (x, y, z) in launch order (x fastest), as the hardware schedules a grid.
  int64_t waveOf(int64_t x, int64_t y, int64_t z) const;
};

TilingPicture describeTiling(const kernel::Kernel& k, const codegen::LaunchDims& launch, const cost::Device& device);

}  // namespace tessera::ui
