// The meaning of lowered and scheduled kernels: each runs in the IR interpreter (interpret.h) and must agree
// with the reference interpreter on random inputs, before and after schedules.
#include <QtTest>

#include <filesystem>

#include "frontend/model_io.h"
#include "ir/error.h"
#include "kernel/interpret.h"
#include "kernel/templates/templates.h"
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

// One row op over rows of `cols`: Softmax, LogSoftmax, LayerNormalization (scale and bias inputs) or ReduceSum.
Case rowOp(const std::string& op, int64_t rows, int64_t cols) {
  GraphBuilder b("row");
  Value* x = b.input("x", {DType::F32, {rows, cols}});
  if (op == "LayerNormalization") {
    Value* scale = b.input("scale", {DType::F32, {cols}});
    Value* bias = b.input("bias", {DType::F32, {cols}});
    b.output(b.op(op, {x, scale, bias}, {{"axis", int64_t(-1)}, {"epsilon", 1e-5}}, "n"));
  } else if (op == "ReduceSum") {
    b.output(b.op(op, {x, b.ints("axes", {1})}, {{"keepdims", int64_t(0)}}, "n"));
  } else {
    b.output(b.op(op, {x}, {{"axis", int64_t(-1)}}, "n"));
  }
  return {b.finish(), {"g0", "reduction", {"n"}}};
}

}  // namespace

class TestKernelSemantics : public QObject {
  Q_OBJECT
 private slots:
  // Integer Mod as ONNX defines it: under fmod = 0 the divisor's sign (Python's %), under fmod = 1 the dividend's
  // (C's); a divisor of 0 or -1 gives 0, as the reference's does. Mixed signs and those divisors on purpose.
  void integerModFollowsTheReference() {
    for (DType t : {DType::I32, DType::I8, DType::I64, DType::U16})
      for (int64_t fmod : {0, 1}) {
        GraphBuilder b("mod");
        Value* x = b.input("x", {t, {8}});
        Value* y = b.input("y", {t, {8}});
        b.output(b.op("Mod", {x, y}, {{"fmod", fmod}}, "mod"));
        Case c{b.finish(), {"g0", "pointwise", {"mod"}}};
        const bool sign = t != DType::U16;
        Tensor xs = Tensor::fromInts(t, {8}, sign ? std::vector<int64_t>{7, -7, 7, -7, 5, -128, 9, 0}
                                                 : std::vector<int64_t>{7, 65535, 7, 3, 5, 128, 9, 0});
        Tensor ys = Tensor::fromInts(t, {8}, sign ? std::vector<int64_t>{3, 3, -3, -3, 0, -1, -4, -2}
                                                 : std::vector<int64_t>{3, 4, 5, 3, 0, 7, 4, 2});
        ReferenceOptions opt;
        opt.keepAll = true;
        ReferenceResult ref = runReference(c.graph, {xs, ys}, opt);
        if (sign && fmod == 0) QCOMPARE(ref.outputs[0].toInts(), (std::vector<int64_t>{1, 2, -2, -1, 0, 0, -3, 0}));
        Kernel k = lower(c);
        applyDefaultSchedule(k);
        const std::string why = agreesWithReference(c.graph, k, ref);
        QVERIFY2(why.empty(), why.c_str());
      }
  }

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
  // Every point of the row-reduction template's space (threads x cache_row x vector_width x online x
  // blocks_per_row; on rows of 8192, blocks_per_row 1, 2 and 32) on rows that 4, 2 or nothing divides and on rows of 8192: each schedules to a kernel that
  // agrees with the reference, or is refused with a ScheduleError for a reason the template gives: a width that
  // does not divide the row (or its part), online softmax on a kernel without a max pass, a row in registers
  // of more than 32 elements a thread, a row split over blocks that do not divide it or with a row cache.
  void rowReductionSpace() {
    int agreed = 0, refused = 0, expectedRefusals = 0;
    for (const char* op : {"Softmax", "LogSoftmax", "LayerNormalization", "ReduceSum"})
      for (int64_t cols : {8192, 64, 42, 37}) {
        Case c = rowOp(op, cols == 8192 ? 1 : 3, cols);
        bool softmaxLike = std::string(op).find("Softmax") != std::string::npos;
        ReferenceResult ref = reference(c.graph);
        Kernel lowered = lower(c);
        std::vector<std::vector<int64_t>> grid;
        for (const TemplateParam& p : parameterSpace(lowered)) grid.push_back(p.candidates);
        QCOMPARE(grid.size(), size_t(5));  // threads, cache_row, vector_width, online, blocks_per_row
        for (int64_t threads : grid[0])
          for (int64_t cache : grid[1])
            for (int64_t width : grid[2])
              for (int64_t online : grid[3])
                for (int64_t blocks : grid[4]) {
                  // Rows of 8192 take the most interpreting: there, one small and one large split (AddressSanitizer
                  // builds run this too).
                  if (cols == 8192 && blocks != 1 && blocks != 2 && blocks != 32) continue;
                  bool split = blocks > 1;
                  int64_t part = split && cols % blocks == 0 ? cols / blocks : cols;
                  bool refusable = part % width != 0 || (online && !softmaxLike) ||
                                   (split && (cache != 0 || cols % blocks != 0)) ||
                                   (!split && cache == 2 && (cols + threads - 1) / threads > 32);
                  expectedRefusals += refusable;
                  std::string point = std::string(op) + " cols " + std::to_string(cols) + " threads " + std::to_string(threads) +
                                      " cache_row " + std::to_string(cache) + " vector_width " + std::to_string(width) +
                                      " online " + std::to_string(online) + " blocks_per_row " + std::to_string(blocks);
                  Kernel k = lowered.clone();
                  TracedSchedule s(k);
                  try {
                    applyTemplate(s, {{"threads", threads}, {"cache_row", cache}, {"vector_width", width}, {"online", online},
                                      {"blocks_per_row", blocks}});
                  } catch (const ScheduleError& e) {
                    QVERIFY2(refusable, (point + ": " + e.what()).c_str());
                    ++refused;
                    continue;
                  }
                  QVERIFY2(!refusable, (point + ": accepted").c_str());
                  std::string why = agreesWithReference(c.graph, k, ref);
                  QVERIFY2(why.empty(), (point + ": " + why).c_str());
                  ++agreed;
                }
      }
    qInfo() << agreed << "schedules agreed with the reference," << refused << "refused";
    QCOMPARE(refused, expectedRefusals);
    QVERIFY(agreed > 1200);
  }
  // An index out of range (1e9, 5, -5 for an axis of 4; 9 in GatherElements) stops the kernel interpreter with
  // the reference interpreter's message, lowered as is and scheduled; a valid -1 agrees with the reference.
  void indexOutOfRangeSaysWhatTheReferenceSays() {
    for (const char* op : {"Gather", "GatherElements"}) {
      bool elements = std::string(op) == "GatherElements";
      GraphBuilder b("gather");
      Value* d = b.input("data", {DType::F32, {4, 3}});
      Value* idx = b.input("idx", {DType::I64, elements ? Shape{2, 3} : Shape{3}});
      b.output(b.op(op, {d, idx}, {{"axis", int64_t(0)}}, "g"));
      Case c{b.finish(), {"g0", "data-movement", {"g"}}};
      Tensor data = filled(DType::F32, {4, 3}, 1.5);
      for (double bad : {1e9, 5.0, -5.0, -1.0}) {
        std::vector<double> v = elements ? std::vector<double>{0, 1, 2, 3, bad, 0} : std::vector<double>{0, bad, 2};
        Tensor t = Tensor::fromDoubles(DType::I64, elements ? Shape{2, 3} : Shape{3}, v);
        std::string want;
        try {
          runReference(c.graph, {data, t});
        } catch (const Error& e) {
          want = e.what();
        }
        QCOMPARE(want.empty(), bad == -1.0);
        for (bool scheduled : {false, true}) {
          Kernel k = lower(c);
          if (scheduled) applyDefaultSchedule(k);
          std::string got;
          try {
            interpretKernel(k, {&data, &t});
          } catch (const Error& e) {
            got = e.what();
          }
          QCOMPARE(got, want);
        }
      }
    }
  }
  // GatherND with batch_dims 1: data [2, 4, 3, 5], tuples of 2 over dims 1 and 2 (extents 4 and 3), slices of 5.
  // Valid tuples (negative ones too) agree with the reference, lowered as is and scheduled; an index out of range
  // in either place of a tuple stops the kernel with the reference's message, naming that axis and extent.
  void gatherNDIsDataMovement() {
    GraphBuilder b("gnd");
    Value* d = b.input("data", {DType::F32, {2, 4, 3, 5}});
    Value* idx = b.input("idx", {DType::I64, {2, 6, 2}});
    b.output(b.op("GatherND", {d, idx}, {{"batch_dims", int64_t(1)}}, "g"));
    Case c{b.finish(), {"g0", "data-movement", {"g"}}};
    Tensor data = randomUniform({DType::F32, {2, 4, 3, 5}}, 3, -1, 1);
    std::vector<double> ok = {0, 0, 3, 2, -1, -1, -4, -3, 1, 1, 2, 0, 3, 0, 0, 2, -2, 1, 1, 1, 2, 2, 0, 1};
    for (std::pair<size_t, double> bad : {std::pair<size_t, double>{0, -1}, {7, 3.0}, {10, -5.0}, {15, 1e9}}) {
      std::vector<double> v = ok;
      if (bad.second != -1) v[bad.first] = bad.second;
      Tensor t = Tensor::fromDoubles(DType::I64, {2, 6, 2}, v);
      std::string want;
      Tensor expected;
      try {
        expected = runReference(c.graph, {data, t}).outputs.at(0);
      } catch (const Error& e) {
        want = e.what();
      }
      QCOMPARE(want.empty(), bad.second == -1);
      if (bad.second != -1) QVERIFY2(has(want, bad.first % 2 ? "axis 2 of extent 3" : "axis 1 of extent 4"), want.c_str());
      for (bool scheduled : {false, true}) {
        Kernel k = lower(c);
        if (scheduled) applyDefaultSchedule(k);
        std::string got;
        try {
          std::vector<Tensor> out = interpretKernel(k, {&data, &t});
          QCOMPARE(out.at(0).toDoubles(), expected.toDoubles());
        } catch (const Error& e) {
          got = e.what();
        }
        QCOMPARE(got, want);
      }
    }
  }
  // Fusion's index-chain rule puts movement ops that feed Slice, Concat, Gather and GatherElements in their
  // group (RotaryEmbedding's expanded form does): the lowering computes those inputs in place (Concat's arms at
  // clamped indices, a gather's data at its checked index) and agrees with the reference.
  void indexChainsIntoSliceConcatGather() {
    GraphBuilder b("chains");
    Value* x = b.input("x", {DType::F32, {2, 4, 6}});
    Value* pos = b.input("pos", {DType::I64, {2, 3}});
    Value* xt = b.op("Transpose", {x}, {{"perm", std::vector<int64_t>{1, 0, 2}}}, "t");          // [4, 2, 6]
    Value* sl = b.op("Slice", {xt, b.ints("s0", {1}), b.ints("s1", {6}), b.ints("ax", {2}), b.ints("st", {2})}, {}, "slice");
    Value* cat = b.op("Concat", {xt, sl}, {{"axis", int64_t(2)}}, "cat");                         // [4, 2, 9]
    Value* flat = b.op("Reshape", {pos, b.ints("shape", {6})}, {}, "flat");
    Value* g = b.op("Gather", {cat, flat}, {{"axis", int64_t(0)}}, "gather");                     // [6, 2, 9]
    Value* ids = b.op("Transpose", {g}, {{"perm", std::vector<int64_t>{1, 0, 2}}}, "t2");         // [2, 6, 9]
    std::vector<double> ei = {0, 1, 2, 3, -1, -4, 3, 2, 1, 0, -2, -3};
    Value* e = b.op("GatherElements", {cat, b.constant("ei", Tensor::fromDoubles(DType::I64, {2, 2, 3}, ei))},
                    {{"axis", int64_t(0)}}, "ge");
    b.output(ids);
    b.output(e);
    Graph graph = b.finish();
    Case c{std::move(graph), {"g0", "data-movement", {"t", "slice", "cat", "flat", "gather", "t2", "ge"}}};
    check(c);
    std::string text = printKernel(lower(c));
    QVERIFY2(has(text, "select(s0_2 - 6 < 0, 0, select(s0_2 - 6 < 3, s0_2 - 6, 2))"), text.c_str());  // a clamped arm
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
