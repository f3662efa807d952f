// The analytic cost model: bytes implied by tilings, the bound of simple kernels, occupancy, wave quantization,
// and the device data files.
#include <QtTest>

#include "cost/cost_model.h"
#include "ir/error.h"
#include "kernel/kernel_fixtures.h"
#include "kernel/templates/templates.h"
#include "kernel/schedule/trace.h"
#include "ops/builder.h"

using namespace tessera;
using namespace tessera::kernel;

namespace {

Kernel scheduled(const fixtures::Case& c, const TemplateParams& params) {
  Kernel k = fixtures::lower(c);
  TracedSchedule s(k);
  applyTemplate(s, params);
  return k;
}

// y = relu(x * x + 1) over n elements: one read, one write per element.
fixtures::Case bigPointwise(int64_t n) {
  GraphBuilder b("pw");
  Value* x = b.input("x", {DType::F32, {n}});
  Value* one = b.constant("one", fixtures::filled(DType::F32, {1}, 1.0));
  Value* m = b.op("Mul", {x, x}, {}, "mul");
  Value* a = b.op("Add", {m, one}, {}, "add");
  b.output(b.op("Relu", {a}, {}, "relu"));
  return {b.finish(), {"g0", "pointwise", {"mul", "add", "relu"}}};
}

TemplateParams onePerThread(int64_t blockSize) {
  return {{"vector_width", 1}, {"elems_per_thread", 1}, {"block_size", blockSize}, {"grid_stride", 0}};
}

}  // namespace

class TestCostModel : public QObject {
  Q_OBJECT
 private slots:
  void smallerTilesRereadMore();
  void pointwiseIsMemoryBound();
  void gridStrideFootprintIsItsElements();
  void tensorCoreTilesRunAtTheMatrixRate();
  void tf32FragmentsArePricedByTheirBanks();
  void columnRunsAreWideSharedReads();
  void waveQuantizationStepsAtFullWaves();
  void occupancyFromSharedMemoryAndThreads();
  void uncoalescedReadsCostMore();
  void cpuPredictionUsesCores();
  void deviceFilesLoad();
  void badDeviceFieldIsNamed();
};

// A gemm's operands are re-read once per block along the other dimension: 16x16 tiles read A and B four times as
// often as 64x64 tiles, so they move more bytes to the SMs and are predicted slower.
void TestCostModel::smallerTilesRereadMore() {
  auto c = fixtures::gemm(512, 512, 512);
  cost::Device h200 = cost::loadDevice("h200");
  TemplateParams small = {{"block_m", 16}, {"block_n", 16}, {"warp_m", 0}, {"warp_n", 0}, {"thread_m", 1}, {"thread_n", 1}};
  TemplateParams large = {{"block_m", 64}, {"block_n", 64}, {"warp_m", 0}, {"warp_n", 0}, {"thread_m", 4}, {"thread_n", 4}};
  cost::Estimate s = cost::predict(scheduled(c, small), h200);
  cost::Estimate l = cost::predict(scheduled(c, large), h200);
  QVERIFY2(s.feasible && l.feasible, (s.infeasible + l.infeasible).c_str());
  // Per block: (bm + bn) * K elements; blocks = M/bm * N/bn. Ratio (1/16 + 1/16) / (1/64 + 1/64) = 4.
  double ratio = (s.figures.l2Bytes - 512.0 * 512 * 4) / (l.figures.l2Bytes - 512.0 * 512 * 4);
  QVERIFY2(std::abs(ratio - 4.0) < 0.05, qPrintable(QString::number(ratio)));
  QCOMPARE(s.figures.compulsoryBytes, l.figures.compulsoryBytes);
  QVERIFY(s.dramBytes >= l.dramBytes);
  QCOMPARE(s.flops, l.flops);  // the same arithmetic however it is tiled
}

void TestCostModel::pointwiseIsMemoryBound() {
  auto c = bigPointwise(int64_t(1) << 24);
  cost::Estimate e = cost::predict(scheduled(c, onePerThread(256)), cost::loadDevice("h200"));
  QVERIFY(e.feasible);
  QCOMPARE(e.bound, cost::Bound::Memory);
  QCOMPARE(e.limiter, std::string("dram"));
  QCOMPARE(e.figures.compulsoryBytes, double(int64_t(1) << 24) * 8 + 4);  // x read, y written, the constant
  // Near the copy bandwidth: 134 MB at 4.3 TB/s is 31 us, plus the launch.
  QVERIFY2(e.ms > 0.031 && e.ms < 0.04, qPrintable(QString::number(e.ms)));
  // A tiny kernel is latency-bound (the launch dominates).
  cost::Estimate tiny = cost::predict(scheduled(bigPointwise(1024), onePerThread(256)), cost::loadDevice("h200"));
  QCOMPARE(tiny.bound, cost::Bound::Latency);
}

// A grid-stride block's index range spans the whole buffer, but it reads only its own elements: the L2 traffic
// stays near the compulsory bytes and the prediction near the one-element-per-thread form (it was 80x slower).
void TestCostModel::gridStrideFootprintIsItsElements() {
  auto c = bigPointwise(int64_t(1) << 24);
  cost::Device h200 = cost::loadDevice("h200");
  cost::Estimate plain = cost::predict(scheduled(c, onePerThread(256)), h200);
  TemplateParams strided = {{"vector_width", 4}, {"elems_per_thread", 1}, {"block_size", 1024}, {"grid_stride", 1}, {"max_blocks", 264}};
  cost::Estimate e = cost::predict(scheduled(c, strided), h200);
  QVERIFY(e.feasible);
  QVERIFY2(e.figures.l2Bytes < 1.5 * e.figures.compulsoryBytes, qPrintable(QString::number(e.figures.l2Bytes)));
  QVERIFY2(e.ms < 2 * plain.ms, qPrintable(QString("%1 vs %2 ms").arg(e.ms).arg(plain.ms)));
}

// The FLOPs of tiles bound to the mma lanes are priced at the matrix rate (TF32 here), the CUDA-core form's at
// the fp32 rate: the tensor-core schedule's compute term is several times smaller.
// ResNet-50's 3 x 3 conv over 14² in tf32: the halo's fragment loads are priced from the lanes' addresses, so the
// template's 4 rows of padding a plane (1 wavefront a load) read a quarter of the shared bytes of none (4: the
// four channels of a load 160 words apart), and the conv is predicted faster padded.
void TestCostModel::tf32FragmentsArePricedByTheirBanks() {
  GraphBuilder b("c3");
  Value* x = b.input("x", {DType::F32, {32, 256, 14, 14}});
  Value* w = b.constant("w", fixtures::filled(DType::F32, {256, 256, 3, 3}, 0.01));
  Value* y = b.op("Conv", {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "conv");
  b.output(b.op("Relu", {y}, {}, "relu"));
  fixtures::Case c{b.finish(), {"g0", "conv+epilogue", {"conv", "relu"}}};
  c.spec.tf32 = {true, false};
  TemplateParams padded = defaultParams(fixtures::lower(c));
  QCOMPARE(padded.at("pad_rows"), int64_t(4));
  TemplateParams unpadded = padded;
  unpadded["pad_rows"] = 0;
  const cost::Device h200 = cost::loadDevice("h200");
  cost::Estimate p = cost::predict(scheduled(c, padded), h200), u = cost::predict(scheduled(c, unpadded), h200);
  QVERIFY2(u.figures.sharedBytes > 2.5 * p.figures.sharedBytes, qPrintable(QString("%1 vs %2").arg(u.figures.sharedBytes).arg(p.figures.sharedBytes)));
  QVERIFY2(u.ms > p.ms, qPrintable(QString("%1 vs %2 ms").arg(u.ms).arg(p.ms)));
  // The tf32 gemm's tiles likewise (a 1 x 1 conv from 64 channels as the template's defaults pad it: A's rows by
  // 4, B's by 4 more): unpadded, both operands' fragment loads take 4 wavefronts.
  GraphBuilder g("c1");
  Value* gx = g.input("x", {DType::F32, {32, 64, 56, 56}});
  Value* gw = g.constant("w", fixtures::filled(DType::F32, {256, 64, 1, 1}, 0.01));
  g.output(g.op("Relu", {g.op("Conv", {gx, gw}, {}, "conv")}, {}, "relu"));
  fixtures::Case pw{g.finish(), {"g0", "conv+epilogue", {"conv", "relu"}}};
  pw.spec.tf32 = {true, false};
  TemplateParams gemmPadded = defaultParams(fixtures::lower(pw));
  QCOMPARE(gemmPadded.at("pad") + gemmPadded.at("pad_b"), int64_t(8));
  TemplateParams gemmUnpadded = gemmPadded;
  gemmUnpadded["pad"] = gemmUnpadded["pad_b"] = 0;
  p = cost::predict(scheduled(pw, gemmPadded), h200);
  u = cost::predict(scheduled(pw, gemmUnpadded), h200);
  QVERIFY2(u.figures.sharedBytes > 2.5 * p.figures.sharedBytes, qPrintable(QString("%1 vs %2").arg(u.figures.sharedBytes).arg(p.figures.sharedBytes)));
  QVERIFY2(u.ms > p.ms, qPrintable(QString("%1 vs %2 ms").arg(u.ms).arg(p.ms)));
}

void TestCostModel::tensorCoreTilesRunAtTheMatrixRate() {
  auto c = fixtures::gemm(2048, 2048, 2048);
  cost::Device h200 = cost::loadDevice("h200");
  TemplateParams cores = {{"block_m", 128}, {"block_n", 128}, {"block_k", 16}, {"thread_m", 8}, {"thread_n", 8},
                          {"shared", 1}, {"mma", 0}, {"warp_m", 0}, {"warp_n", 0}};
  TemplateParams tensor = {{"block_m", 128}, {"block_n", 128}, {"block_k", 32}, {"shared", 1}, {"mma", 1},
                           {"tf32", 1}, {"warp_m", 64}, {"warp_n", 64}, {"pad", 8}};
  cost::Estimate a = cost::predict(scheduled(c, cores), h200);
  cost::Estimate b = cost::predict(scheduled(c, tensor), h200);
  // Unpadded, a fragment's 8 rows (128 and 512 bytes apart) all fall in the same banks: 8 passes a read.
  TemplateParams unpadded = tensor;
  unpadded["pad"] = 0;
  cost::Estimate conflicted = cost::predict(scheduled(c, unpadded), h200);
  QVERIFY2(conflicted.figures.sharedBytes > 2 * b.figures.sharedBytes,
           qPrintable(QString("%1 vs %2").arg(conflicted.figures.sharedBytes).arg(b.figures.sharedBytes)));
  QVERIFY(a.feasible && b.feasible);
  QCOMPARE(a.figures.tensorFlops, 0.0);
  QVERIFY2(b.figures.tensorFlops > 0.9 * b.figures.irFlops, qPrintable(QString::number(b.figures.tensorFlops / b.figures.irFlops)));
  QVERIFY(b.figures.tf32);
  QVERIFY2(b.computeMs * 4 < a.computeMs, qPrintable(QString("%1 vs %2 ms").arg(b.computeMs).arg(a.computeMs)));
  // Each 16 x 8 tile's A fragment serves its 8 columns and its B fragment its 16 rows: the 64 x 64 warp tiles
  // read less shared memory than 8 x 8 thread micro-tiles, and the whole is predicted faster.
  QVERIFY2(b.figures.sharedBytes < a.figures.sharedBytes, qPrintable(QString("%1 vs %2").arg(b.figures.sharedBytes).arg(a.figures.sharedBytes)));
  QVERIFY2(b.ms < a.ms, qPrintable(QString("%1 vs %2 ms").arg(b.ms).arg(a.ms)));
}

// A thread's columns in runs of 4 (column_run) are read from B's shared tile as one 16-byte load a run, which
// the CUDA compiler merges from the unrolled run (measured: 3.60 -> 3.36 ms at 4096^3 on the H100): no more
// shared bytes than columns a thread apart, where counted as four scalar loads 4 words apart they were 4-way
// bank conflicts, and the whole no slower.
void TestCostModel::columnRunsAreWideSharedReads() {
  auto c = fixtures::gemm(2048, 2048, 2048);
  cost::Device h200 = cost::loadDevice("h200");
  TemplateParams apart = {{"block_m", 128}, {"block_n", 128}, {"block_k", 16}, {"thread_m", 8}, {"thread_n", 8},
                          {"shared", 1}, {"mma", 0}, {"warp_m", 0}, {"warp_n", 0}, {"column_run", 1}};
  TemplateParams runs = apart;
  runs["column_run"] = 4;
  cost::Estimate a = cost::predict(scheduled(c, apart), h200);
  cost::Estimate r = cost::predict(scheduled(c, runs), h200);
  QVERIFY2(r.figures.sharedBytes <= a.figures.sharedBytes, qPrintable(QString("%1 vs %2").arg(r.figures.sharedBytes).arg(a.figures.sharedBytes)));
  QVERIFY2(r.ms <= a.ms * 1.01, qPrintable(QString("%1 vs %2 ms").arg(r.ms).arg(a.ms)));
}

// Blocks run in waves of (blocks per SM) x 132: one block past a full wave costs a whole wave of the per-SM
// work (here arithmetic, forced by the FLOP count passed in).
void TestCostModel::waveQuantizationStepsAtFullWaves() {
  cost::Device h200 = cost::loadDevice("h200");
  auto at = [&](int64_t blocks) {
    int64_t n = blocks * 1024;
    return cost::predict(scheduled(bigPointwise(n), onePerThread(1024)), h200, double(n) * 20000);
  };
  cost::Estimate one = at(1);
  int64_t waveSlots = int64_t(one.blocksPerSm) * 132;
  QCOMPARE(waveSlots % 132, int64_t(0));
  cost::Estimate full = at(waveSlots), over = at(waveSlots + 1), two = at(2 * waveSlots);
  QCOMPARE(full.figures.blocks, waveSlots);
  QCOMPARE(full.waves, int64_t(1));
  QCOMPARE(over.waves, int64_t(2));
  QCOMPARE(two.waves, int64_t(2));
  QCOMPARE(over.bound, cost::Bound::Compute);
  QVERIFY2(over.ms / full.ms > 1.8, qPrintable(QString::number(over.ms / full.ms)));
  QVERIFY2(two.ms / over.ms < 1.05, qPrintable(QString::number(two.ms / over.ms)));
  QCOMPARE(full.waveEfficiency, 1.0);
  QVERIFY(over.waveEfficiency < 0.51);
}

// Shared memory per block comes from the shared-scope buffers; threads per block from the bind tags.
void TestCostModel::occupancyFromSharedMemoryAndThreads() {
  auto c = fixtures::transpose(1024, 1024);
  cost::Device h200 = cost::loadDevice("h200");
  cost::Estimate tiled = cost::predict(scheduled(c, {{"tile", 32}, {"shared_tile", 1}}), h200);
  QCOMPARE(tiled.figures.sharedBytesPerBlock, int64_t(32 * 32 * 4));
  QCOMPARE(tiled.figures.threadsPerBlock, int64_t(1024));
  QCOMPARE(tiled.figures.blocks, int64_t(32 * 32));
  QCOMPARE(tiled.blocksPerSm, 2);  // 2048 threads per SM
  QCOMPARE(tiled.occupancyLimit, std::string("threads"));
  h200.sharedBytesPerSm = 4096 + 100;  // room for one tile only
  cost::Estimate starved = cost::predict(scheduled(c, {{"tile", 32}, {"shared_tile", 1}}), h200);
  QCOMPARE(starved.blocksPerSm, 1);
  QCOMPARE(starved.occupancyLimit, std::string("shared"));
  h200.sharedBytesPerBlockOptin = 1024;
  cost::Estimate refused = cost::predict(scheduled(c, {{"tile", 32}, {"shared_tile", 1}}), h200);
  QVERIFY(!refused.feasible);
  QVERIFY(refused.infeasible.find("shared memory") != std::string::npos);
}

// A transpose read straight from global memory strides across the warp; staged through shared memory both
// sides are coalesced, so fewer sectors move through L1.
void TestCostModel::uncoalescedReadsCostMore() {
  auto c = fixtures::transpose(1024, 1024);
  cost::Device h200 = cost::loadDevice("h200");
  cost::Estimate direct = cost::predict(scheduled(c, {{"tile", 32}, {"shared_tile", 0}}), h200);
  cost::Estimate staged = cost::predict(scheduled(c, {{"tile", 32}, {"shared_tile", 1}}), h200);
  QVERIFY2(direct.figures.l1Bytes > 4 * staged.figures.l1Bytes,
           qPrintable(QString("%1 vs %2").arg(direct.figures.l1Bytes).arg(staged.figures.l1Bytes)));
  QVERIFY(staged.figures.sharedBytes > 0);
  QCOMPARE(direct.figures.sharedBytes, 0.0);
}

void TestCostModel::cpuPredictionUsesCores() {
  cost::Device cpu = cost::loadDevice("cpu");
  cpu.smCount = 8;
  auto c = bigPointwise(int64_t(1) << 20);
  cost::Estimate e = cost::predict(scheduled(c, onePerThread(256)), cpu);
  QVERIFY(e.feasible);
  QCOMPARE(e.figures.cpuParallelIterations, int64_t(1) << 12);  // the block loop is the OpenMP loop
  QCOMPARE(e.occupancy, 1.0);
  QVERIFY(e.ms > 0);
  // One parallel iteration uses one core of eight.
  cost::Estimate serial = cost::predict(scheduled(bigPointwise(256), onePerThread(256)), cpu);
  QCOMPARE(serial.figures.cpuParallelIterations, int64_t(1));
  QCOMPARE(serial.occupancy, 1.0 / 8);
  // Contiguous pointwise code vectorizes; a float sum reduced along the vector loop stays scalar and is
  // predicted slower per FLOP.
  QCOMPARE(e.figures.vectorFlops, e.figures.irFlops);
  cost::Estimate sm = cost::predict(scheduled(fixtures::softmax(64, 1024), {}), cpu);
  QVERIFY(sm.figures.vectorFlops < sm.figures.irFlops);
  cpu.simdLanes = 1;
  cost::Estimate smNoSimd = cost::predict(scheduled(fixtures::softmax(64, 1024), {}), cpu);
  QVERIFY(smNoSimd.computeMs < sm.computeMs);
}

void TestCostModel::deviceFilesLoad() {
  cost::Device h200 = cost::loadDevice("h200");
  QCOMPARE(h200.smCount, 132);
  QCOMPARE(h200.kind, cost::DeviceKind::Gpu);
  QCOMPARE(h200.dramGBps, 4300.0);
  QCOMPARE(h200.bf16MatrixGflops, 790000.0);
  cost::Device cpu = cost::loadDevice("cpu");
  QCOMPARE(cpu.kind, cost::DeviceKind::Cpu);
  // Round trip through JSON.
  cost::Device again = cost::Device::fromJson(h200.toJson(), "round trip");
  QCOMPARE(again.toJson(), h200.toJson());
  // $TESSERA_DEVICE_DIR comes first.
  QTemporaryDir dir;
  nlohmann::json j = h200.toJson();
  j["sm_count"] = 7;
  QFile f(dir.filePath("h200.json"));
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(QByteArray::fromStdString(j.dump()));
  f.close();
  qputenv("TESSERA_DEVICE_DIR", dir.path().toUtf8());
  QCOMPARE(cost::loadDevice("h200").smCount, 7);
  qunsetenv("TESSERA_DEVICE_DIR");
  QVERIFY_THROWS_EXCEPTION(Error, cost::loadDevice("nonesuch"));
}

void TestCostModel::badDeviceFieldIsNamed() {
  nlohmann::json j = cost::loadDevice("h200").toJson();
  j["dram_gbps"] = "fast";
  try {
    cost::Device::fromJson(j, "my.json");
    QFAIL("no error");
  } catch (const Error& e) {
    QVERIFY2(std::string(e.what()).find("my.json: field 'dram_gbps'") != std::string::npos, e.what());
  }
}

QTEST_GUILESS_MAIN(TestCostModel)
#include "test_cost_model.moc"
