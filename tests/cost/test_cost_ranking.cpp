// The cost model's ranking against H200 measurements (tuned_h200.json: the candidates `tessera-cli tune`
// measured for the kernels of three samples, and their times). For each kernel the model picks, among the
// measured candidates, the one it predicts fastest; issue 5's target is that this pick runs within 1.25x of the
// measured best on at least 80% of the kernels. Runs without a GPU: the kernels are rebuilt from their shapes.
#include <QtTest>

#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "cost/cost_model.h"
#include "kernel/kernel_fixtures.h"
#include "kernel/templates/templates.h"
#include "kernel/schedule/trace.h"
#include "ops/builder.h"

using namespace tessera;
using namespace tessera::kernel;
using nlohmann::json;

namespace {

Shape shapeOf(const json& j) { return j.get<std::vector<int64_t>>(); }

// The group's main op with the sample's shapes: a gemm with its bias epilogue, a row reduction, a transpose.
fixtures::Case rebuild(const json& d) {
  GraphBuilder b("k");
  std::string op = d.at("op");
  std::vector<std::string> nodes;
  if (op == "gemm") {
    Shape bs = shapeOf(d.at("b"));
    DType t = d.value("dtype", "f32") == "bf16" ? DType::BF16 : DType::F32;
    Value* x = b.input("x", {t, shapeOf(d.at("a"))});
    Value* w = b.constant("w", fixtures::filled(t, bs, 0.5));
    Value* bias = b.constant("bias", fixtures::filled(t, {bs.back()}, 1.0));
    b.output(b.op("Add", {b.op("MatMul", {x, w}, {}, "matmul"), bias}, {}, "add"));
    nodes = {"matmul", "add"};
  } else if (op == "softmax") {
    Value* x = b.input("x", {DType::F32, shapeOf(d.at("shape"))});
    b.output(b.op("Softmax", {x}, {{"axis", int64_t(-1)}}, "softmax"));
    nodes = {"softmax"};
  } else if (op == "layernorm") {
    Shape s = shapeOf(d.at("shape"));
    Value* x = b.input("x", {DType::F32, s});
    Value* g = b.constant("scale", fixtures::filled(DType::F32, {s.back()}, 1.0));
    Value* be = b.constant("bias", fixtures::filled(DType::F32, {s.back()}, 0.0));
    b.output(b.op("LayerNormalization", {x, g, be}, {{"axis", int64_t(-1)}, {"epsilon", 1e-5}}, "ln"));
    nodes = {"ln"};
  } else if (op == "transpose") {
    Value* x = b.input("x", {DType::F32, shapeOf(d.at("shape"))});
    b.output(b.op("Transpose", {x}, {{"perm", d.at("perm").get<std::vector<int64_t>>()}}, "transpose"));
    nodes = {"transpose"};
  } else {
    throw std::runtime_error("tuned_h200.json: unknown kernel op '" + op + "'");
  }
  return {b.finish(), {"g0", op, nodes}};
}

double predicted(const Kernel& lowered, const TemplateParams& params, const cost::Device& d) {
  Kernel k = lowered.clone();
  TracedSchedule s(k);
  TemplateParams p = params;
  // The row kernels were measured before online softmax and split rows existed: three passes, a block a row.
  if (templateName(lowered) == "row-reduction") {
    p.emplace("online", 0);
    p.emplace("blocks_per_row", 1);
  }
  // The gemms were measured before the wgmma form (Hopper's warpgroup MMA, TMA fills): in the forms they ran in.
  if (templateName(lowered) == "gemm") {
    p.emplace("wgmma", 0);
    p.emplace("tma", 0);
  }
  applyTemplate(s, p);
  cost::Estimate e = cost::predict(k, d);
  if (qEnvironmentVariableIsSet("TESSERA_COST_RANKING_TERMS"))  // the terms behind each prediction, for calibrating
    qInfo("    %s | dram %.3f l2 %.3f l1 %.3f shared %.3f compute %.3f chain %.3f | waves %lld x %d blocks/SM, regs %d",
          e.limiter.c_str(), e.dramMs, e.l2Ms, e.l1Ms, e.sharedMs, e.computeMs, e.chainMs, (long long)e.waves, e.blocksPerSm,
          e.figures.registersPerThread);
  return e.ms;
}

struct Tally {
  int within = 0, total = 0;
  std::map<std::string, double> pickOverBest;  // by "sample group"
};

// For each kernel: the measured time of the candidate the model predicts fastest (the first of equals, as the
// tuner's stable ranking takes), against the best measured time.
Tally rank(const json& doc, const cost::Device& d, bool print) {
  Tally t;
  for (const json& e : doc.at("kernels")) {
    fixtures::Case c = rebuild(e.at("kernel"));
    Kernel lowered = fixtures::lower(c);
    std::string where = e.at("sample").get<std::string>() + " " + e.at("group").get<std::string>();
    if (templateName(lowered) != e.at("template").get<std::string>())
      throw std::runtime_error(where + ": rebuilt kernel has template '" + templateName(lowered) + "', the run had '" +
                               e.at("template").get<std::string>() + "'");
    double best = INFINITY, pickPredicted = INFINITY, pickMs = 0;
    for (const json& m : e.at("measured")) {
      TemplateParams params = m.at("params").get<TemplateParams>();
      // Row reductions measured before vector_width existed read scalars: schedule them as measured.
      if (templateName(lowered) == "row-reduction") params.emplace("vector_width", 1);
      double ms = m.at("ms"), p = predicted(lowered, params, d);
      best = std::min(best, ms);
      if (print && qEnvironmentVariableIsSet("TESSERA_COST_RANKING_ALL"))  // every candidate, for calibrating
        qInfo("  %s predicted %.4f measured %.4f", m.at("params").dump().c_str(), p, ms);
      if (p < pickPredicted) pickPredicted = p, pickMs = ms;
    }
    bool ok = pickMs <= 1.25 * best;
    t.pickOverBest[where] = pickMs / best;
    t.within += ok;
    t.total += 1;
    if (print)
      qInfo("%-20s %-14s pick %.4f ms (predicted %.4f), best %.4f ms: %.2fx%s", where.c_str(),
            e.at("template").get<std::string>().c_str(), pickMs, pickPredicted, best, pickMs / best, ok ? "" : "  MISS");
  }
  return t;
}

// $TESSERA_COST_RANKING_FILE: another run in the same format (to check the model against new measurements).
json loadFixture() {
  QByteArray other = qgetenv("TESSERA_COST_RANKING_FILE");
  std::string path = other.isEmpty() ? TESSERA_COST_FIXTURE : other.toStdString();
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  return json::parse(in);
}

}  // namespace

class TestCostRanking : public QObject {
  Q_OBJECT
 private slots:
  void firstPickWithinOneQuarterOfBest();
  void dependentChainsSeparateTiledFromUntiled();
  void registerTileCopiesDoNotChain();
};

void TestCostRanking::firstPickWithinOneQuarterOfBest() {
  json doc = loadFixture();
  cost::Device h200 = cost::loadDevice(doc.at("device").get<std::string>());
  // The model without the dependent-chain term, for the record (the figure before it was added).
  cost::Device noChain = h200;
  noChain.globalLoadCycles = noChain.sharedLoadCycles = noChain.syncCycles = 0;
  Tally before = rank(doc, noChain, false);
  Tally after = rank(doc, h200, true);
  qInfo("first pick within 1.25x of the best: %d of %d kernels (without the chain term: %d of %d)", after.within,
        after.total, before.within, before.total);
  QCOMPARE(size_t(after.total), doc.at("kernels").size());
  QVERIFY(after.total > 0);
  QVERIFY2(after.within * 5 >= after.total * 4, qPrintable(QString("%1 of %2").arg(after.within).arg(after.total)));
  // The bench's bf16 4096^3 gemm: without the fills' 16-byte copies and the fragments' bank conflicts in the
  // model, its pick was a one-stage schedule measured 3.3x slower than the best.
  if (after.pickOverBest.count("bench gemm_bf16 k0"))
    QVERIFY2(after.pickOverBest.at("bench gemm_bf16 k0") <= 1.25, qPrintable(QString::number(after.pickOverBest.at("bench gemm_bf16 k0"))));
}

// Without shared tiles every thread waits on a global load per k step; with them, on a shared load: the
// un-tiled gemm is predicted slower although it moves no more bytes through L2 per block.
void TestCostRanking::dependentChainsSeparateTiledFromUntiled() {
  json d = {{"op", "gemm"}, {"a", {64, 1024}}, {"b", {1024, 256}}};
  Kernel lowered = fixtures::lower(rebuild(d));
  cost::Device h200 = cost::loadDevice("h200");
  TemplateParams common = {{"block_m", 16}, {"block_n", 16}, {"block_k", 16}, {"thread_m", 1}, {"thread_n", 1},
                           {"warp_m", 0},   {"warp_n", 0},   {"mma", 0},      {"split_k", 1}};  // unsplit: one thread walks all of k
  TemplateParams tiled = common, untiled = common;
  tiled["shared"] = 1;
  untiled["shared"] = 0;
  Kernel kt = lowered.clone(), ku = lowered.clone();
  TracedSchedule st(kt), su(ku);
  applyTemplate(st, tiled);
  applyTemplate(su, untiled);
  cost::Estimate et = cost::predict(kt, h200), eu = cost::predict(ku, h200);
  QVERIFY2(eu.figures.serialGlobalLoads >= 1024, qPrintable(QString::number(eu.figures.serialGlobalLoads)));
  QVERIFY2(et.figures.serialSharedLoads >= 1024, qPrintable(QString::number(et.figures.serialSharedLoads)));
  QVERIFY2(et.figures.serialGlobalLoads < 1024, qPrintable(QString::number(et.figures.serialGlobalLoads)));
  QVERIFY2(eu.ms > et.ms, qPrintable(QString("%1 vs %2").arg(eu.ms).arg(et.ms)));
  QCOMPARE(eu.limiter, std::string("chain"));
}

// A 64x64 tile with 4x4 outputs a thread: the 16 accumulators are independent, so the unrolled micro-tile's
// loads are issued together and only the k steps chain: a large gemm is set by its throughput, not the chain.
void TestCostRanking::registerTileCopiesDoNotChain() {
  json d = {{"op", "gemm"}, {"a", {2048, 2048}}, {"b", {2048, 2048}}};
  Kernel k = fixtures::lower(rebuild(d));
  TracedSchedule s(k);
  applyTemplate(s, {{"block_m", 64}, {"block_n", 64}, {"block_k", 16}, {"thread_m", 4}, {"thread_n", 4},
                    {"warp_m", 0}, {"warp_n", 0}, {"mma", 0}, {"shared", 1}});
  cost::Estimate e = cost::predict(k, cost::loadDevice("h200"));
  QVERIFY2(e.feasible, e.infeasible.c_str());
  QVERIFY2(e.figures.serialSharedLoads <= 2048 * 1.01, qPrintable(QString::number(e.figures.serialSharedLoads)));
  QVERIFY2(e.chainMs < e.computeMs, qPrintable(QString("chain %1 ms, compute %2 ms").arg(e.chainMs).arg(e.computeMs)));
  QVERIFY2(e.bound != cost::Bound::Latency, e.summary().c_str());
}

QTEST_GUILESS_MAIN(TestCostRanking)
#include "test_cost_ranking.moc"
