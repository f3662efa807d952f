// The meaning of lowered and scheduled kernels: each runs in the IR interpreter (interpret.h) and must agree
// with the reference interpreter on random inputs, before and after schedules.
#include <QtTest>

#include <filesystem>

#include "frontend/model_io.h"
#include "kernel/interpret.h"
#include "kernel/templates.h"
#include "runtime/reference/compare.h"
#include "runtime/reference/interpreter.h"
#include "reference_check.h"
#include "schedule_check.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;

namespace {

// Statement executions of a serial run (to keep the interpreted cases small).
double work(const Stmt& s, double mult = 1) {
  if (s->kind == StmtKind::For) return work(static_cast<ForStmt&>(*s).body, mult * double(static_cast<ForStmt&>(*s).h.extent));
  if (s->kind == StmtKind::IfThen) return work(static_cast<IfThenStmt&>(*s).body, mult);
  if (s->kind != StmtKind::Block) return mult;
  double w = 0;
  for (const Stmt& c : static_cast<BlockStmt&>(*s).stmts) w += work(c, mult);
  return w;
}

ReferenceResult reference(const Graph& g, uint64_t seed = 7) {
  ReferenceOptions opt;
  opt.keepAll = true;
  return runReference(g, randomInputs(g, seed), opt);
}

// Lowered as is, with the default schedule, and with `steps`: all three agree with the reference.
void check(const Case& c, const std::function<void(TracedSchedule&)>& steps = {}) {
  ReferenceResult ref = reference(c.graph);
  Kernel plain = lower(c);
  std::string why = agreesWithReference(c.graph, plain, ref);
  QVERIFY2(why.empty(), why.c_str());
  Kernel def = lower(c);
  applyDefaultSchedule(def);
  why = agreesWithReference(c.graph, def, ref);
  QVERIFY2(why.empty(), why.c_str());
  if (!steps) return;
  Kernel custom = lower(c);
  TracedSchedule s(custom);
  steps(s);
  why = agreesWithReference(c.graph, custom, ref);
  QVERIFY2(why.empty(), why.c_str());
}

}  // namespace

class TestKernelSemantics : public QObject {
  Q_OBJECT
 private slots:
  void pointwiseGuardedAndCached() {
    check(pointwise(), [](TracedSchedule& s) {
      s.split("i1", 3);
      s.cacheWrite("i0", "out0", MemScope::Register);
    });
  }
  void softmaxPipelined() {
    check(softmax(3, 40), [](TracedSchedule& s) {
      s.split("k0", 16);
      s.cacheRead("k0_o", "in0", MemScope::Shared);
      s.pipeline("k0_o", 2);
    });
  }
  void layerNormAndReduceMean() {
    check(layernorm());
    check(reduceMean());
  }
  void gemmTiled() {
    check(gemm(40, 24, 20), [](TracedSchedule& s) {
      s.tile({"i", "j"}, {16, 16});
      s.split("k", 8);
      s.cacheRead("k_o", "in0", MemScope::Register);
    });
    check(gemm(64, 64, 16));  // the warp-level default schedule
  }
  void convAndPool() {
    check(conv());
    check(maxpool());
  }
  void transposeWithPartialTiles() {
    check(transpose(40, 24), [](TracedSchedule& s) {
      s.tile({"i0", "i1"}, {16, 16});
      s.cacheRead("i1_o", "in0", MemScope::Shared);
      s.computeAt("in0_shared", "i0_i");
    });
  }
  void everyNodeOfEverySample() {
    std::filesystem::path dir = std::filesystem::path(TESSERA_SOURCE_DIR) / "samples";
    if (!std::filesystem::exists(dir)) QSKIP("no samples folder");
    int checked = 0, skipped = 0;
    for (auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() != ".tsr") continue;
      Graph g = loadModel(e.path().string());
      ReferenceResult ref = reference(g);
      for (const Node* n : g.topoOrder()) {
        if (n->op() == "Constant") continue;
        Kernel k = lowerToLoops(g, {n->id(), "", {n->id()}});
        applyDefaultSchedule(k);
        if (work(k.body) > 5e5) {
          ++skipped;
          continue;
        }
        std::string why = agreesWithReference(g, k, ref);
        QVERIFY2(why.empty(), (e.path().stem().string() + ": " + why).c_str());
        ++checked;
      }
    }
    qInfo() << "checked" << checked << "scheduled one-node kernels against the reference;" << skipped << "too large to interpret";
    QVERIFY(checked >= 25);
  }
};

QTEST_APPLESS_MAIN(TestKernelSemantics)
#include "test_kernel_semantics.moc"
