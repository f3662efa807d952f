// The code generator's proofs that a loop's lanes touch consecutive elements (codegen/vector_access.h), checked
// against brute force: a shared tile's fill reads its source through one fused index split back into the tile's
// dimensions (f / a3 / a2 % a1, f / a3 % a2, f % a3, as cache_read writes it). For random tiles and sources, every
// form laneOffset claims must give each lane's true offset, every alignment alignedLaneOffset claims must hold,
// and a tile of whole source rows (the conv's weights) must be proven one run.
#include <QtTest>

#include <map>
#include <random>

#include "codegen/vector_access.h"
#include "kernel/visit.h"

using namespace tessera;
using namespace tessera::kernel;
using tessera::codegen::detail::alignedLaneOffset;
using tessera::codegen::detail::laneOffset;

namespace {

int64_t eval(const Expr& e, const std::map<std::string, int64_t>& vars) {
  switch (e->kind) {
    case ExprKind::IntImm: return static_cast<const IntImm&>(*e).value;
    case ExprKind::Var: return vars.at(static_cast<const Var&>(*e).name);
    case ExprKind::Binary: {
      const auto& b = static_cast<const Binary&>(*e);
      int64_t x = eval(b.a, vars), y = eval(b.b, vars);
      switch (b.op) {
        case BinaryOp::Add: return x + y;
        case BinaryOp::Sub: return x - y;
        case BinaryOp::Mul: return x * y;
        case BinaryOp::Div: return x / y;
        case BinaryOp::Mod: return x % y;
        default: break;
      }
      break;
    }
    default: break;
  }
  throw std::runtime_error("unexpected expression in an index");
}

// A fill of a tile `tile` at `origin` of a source `shape`: the source indices of fused element
// f = o * step + lane, each dimension's index origin + (f / (product of the inner extents)) % extent.
struct Fill {
  Shape shape, tile;
  std::vector<int64_t> origin;
  int64_t step = 4;

  std::vector<Expr> indices() const {
    Expr f = add(mul(var("o"), intImm(step)), var("lane"));
    std::vector<Expr> out(tile.size());
    for (size_t d = tile.size(); d-- > 0;) {
      Expr q = f;
      for (size_t inner = tile.size() - 1; inner > d; --inner) q = idiv(q, intImm(tile[inner]));
      if (d > 0) q = imod(q, intImm(tile[d]));
      out[d] = add(intImm(origin[d]), q);
    }
    return out;
  }
  int64_t trueOffset(int64_t element) const {
    int64_t offset = 0, rest = element;
    std::vector<int64_t> at(tile.size());
    for (size_t d = tile.size(); d-- > 0;) {
      at[d] = rest % tile[d];
      rest /= tile[d];
    }
    for (size_t d = 0; d < tile.size(); ++d) offset = offset * shape[d] + origin[d] + at[d];
    return offset;
  }
  int64_t elements() const { return numElements(tile); }
};

}  // namespace

class TestLaneOffsets : public QObject {
  Q_OBJECT
 private slots:
  // 3000 random fills of 2-4 dimensions, 4 and 2 lanes: whatever is claimed is true for every group of lanes.
  void claimsHoldForRandomFills() {
    std::mt19937 rng(7);
    auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    int claimed = 0, aligned = 0;
    for (int trial = 0; trial < 3000; ++trial) {
      Fill fill;
      size_t rank = size_t(pick(2, 4));
      fill.step = pick(0, 1) ? 4 : 2;
      for (size_t d = 0; d < rank; ++d) {
        int64_t t = pick(1, 9);
        bool wholeRow = d > 0 && pick(0, 1);  // the tile spans the source's dimension (a weight row's taps)
        int64_t s = wholeRow ? t : t + pick(0, 6);
        fill.tile.push_back(t);
        fill.shape.push_back(s);
        fill.origin.push_back(wholeRow ? 0 : pick(0, s - t));
      }
      if (fill.elements() % fill.step != 0) continue;
      Buffer src{"src", DType::F32, fill.shape, MemScope::Global, BufferRole::Input, "", "", true, {}};
      std::vector<Expr> idx = fill.indices();
      auto form = laneOffset(src, idx, "lane", fill.step);
      auto base = alignedLaneOffset(src, idx, "lane", fill.step);
      if (!form) continue;
      ++claimed;
      aligned += base.has_value();
      for (int64_t o = 0; o * fill.step < fill.elements(); ++o) {
        std::map<std::string, int64_t> vars = {{"o", o}, {"lane", 0}};
        int64_t b = eval(form->base, vars);
        for (int64_t lane = 0; lane < fill.step; ++lane)
          QCOMPARE(b + form->coef * lane, fill.trueOffset(o * fill.step + lane));
        if (base) QCOMPARE(eval(*base, vars) % fill.step, int64_t(0));
      }
    }
    QVERIFY2(claimed > 1000 && aligned > 100, qPrintable(QString("%1 forms, %2 aligned").arg(claimed).arg(aligned)));
  }
  // A conv's weight tile: 64 output channels x 8 input channels x 3 x 3 from weights [256, 256, 3, 3], read at
  // channel 16: the rows of 72 taps are one run each, so 4 lanes are 16 aligned bytes.
  void wholeRowsAreOneRun() {
    Fill fill{{256, 256, 3, 3}, {64, 8, 3, 3}, {128, 16, 0, 0}, 4};
    Buffer src{"w", DType::F32, fill.shape, MemScope::Global, BufferRole::Input, "", "", true, {}};
    auto base = alignedLaneOffset(src, fill.indices(), "lane", 4);
    QVERIFY(base.has_value());
    for (int64_t o : {0, 1, 17, 18, 1151})
      QCOMPARE(eval(*base, {{"o", o}, {"lane", 0}}), fill.trueOffset(o * 4));
    // At channel 15 (not a multiple of 4) the runs start unaligned: not claimed.
    Fill odd = fill;
    odd.origin = {128, 15, 0, 0};
    QVERIFY(!alignedLaneOffset(src, odd.indices(), "lane", 4));
  }
};

QTEST_GUILESS_MAIN(TestLaneOffsets)
#include "test_lane_offsets.moc"
