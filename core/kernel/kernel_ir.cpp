#include "kernel/kernel_ir.h"

#include <cmath>
#include <cstring>
#include <optional>

#include "ir/error.h"
#include "ir/tensor.h"
#include "kernel/visit.h"
#include "ops/op_support.h"

namespace tessera::kernel {

std::string_view unaryOpName(UnaryOp op) {
  switch (op) {
#define X(N, S) \
  case UnaryOp::N: return S;
    TESSERA_KERNEL_UNARY_OPS(X)
#undef X
  }
  return "?";
}

std::string_view binaryOpName(BinaryOp op) {
  switch (op) {
#define X(N, S) \
  case BinaryOp::N: return S;
    TESSERA_KERNEL_BINARY_OPS(X)
#undef X
  }
  return "?";
}

bool isInfix(BinaryOp op) {
  return op != BinaryOp::Max && op != BinaryOp::Min && op != BinaryOp::Pow && op != BinaryOp::Xor;
}

bool isComparison(BinaryOp op) {
  switch (op) {
    case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge: case BinaryOp::Eq:
    case BinaryOp::Ne: case BinaryOp::And: case BinaryOp::Or: case BinaryOp::Xor: return true;
    default: return false;
  }
}

std::string_view memScopeName(MemScope s) {
  switch (s) {
    case MemScope::Global: return "global";
    case MemScope::Shared: return "shared";
    case MemScope::Register: return "register";
  }
  return "?";
}

std::string_view loopKindName(LoopKind k) {
  switch (k) {
    case LoopKind::Serial: return "serial";
    case LoopKind::Parallel: return "parallel";
    case LoopKind::Vectorized: return "vectorized";
    case LoopKind::Unrolled: return "unrolled";
    case LoopKind::Bound: return "bound";
  }
  return "?";
}

namespace {
constexpr std::pair<ThreadTag, std::string_view> kTagNames[] = {
    {ThreadTag::BlockX, "blockIdx.x"},  {ThreadTag::BlockY, "blockIdx.y"},  {ThreadTag::BlockZ, "blockIdx.z"},
    {ThreadTag::ThreadX, "threadIdx.x"}, {ThreadTag::ThreadY, "threadIdx.y"}, {ThreadTag::ThreadZ, "threadIdx.z"},
    {ThreadTag::Warp, "warp"}, {ThreadTag::MmaRow, "mma.row"}, {ThreadTag::MmaCol, "mma.col"}};
}

std::string_view threadTagName(ThreadTag t) {
  for (auto& [tag, name] : kTagNames)
    if (tag == t) return name;
  return "none";
}

ThreadTag parseThreadTag(std::string_view name) {
  for (auto& [tag, n] : kTagNames)
    if (n == name) return tag;
  return ThreadTag::None;
}

bool isBlockTag(ThreadTag t) { return t == ThreadTag::BlockX || t == ThreadTag::BlockY || t == ThreadTag::BlockZ; }
bool isThreadTag(ThreadTag t) { return t != ThreadTag::None && !isBlockTag(t); }
bool isMmaTag(ThreadTag t) { return t == ThreadTag::MmaRow || t == ThreadTag::MmaCol; }

std::string_view reduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    case ReduceOp::MaxSumExp: return "maxsumexp";
  }
  return "?";
}

Expr reduceInit(ReduceOp op, DType t) {
  if (op == ReduceOp::Sum) return Cast::make(t, intImm(0));
  bool max = op == ReduceOp::Max;
  if (isFloat(t)) return FloatImm::make(max ? -INFINITY : INFINITY, t);
  if (t == DType::Bool) return Cast::make(t, intImm(max ? 0 : 1));
  int64_t bits = int64_t(dtypeSize(t)) * 8;
  if (!isSigned(t)) {
    // The highest value of u64 is not an i64: -1 converted to the type (C's modular conversion).
    return Cast::make(t, intImm(max ? 0 : bits == 64 ? -1 : (int64_t(1) << bits) - 1));
  }
  int64_t highest = bits == 64 ? INT64_MAX : (int64_t(1) << (bits - 1)) - 1;
  return Cast::make(t, intImm(max ? -highest - 1 : highest));
}

std::string_view stmtKindName(StmtKind k) {
  switch (k) {
#define X(K) \
  case StmtKind::K: return #K;
    TESSERA_KERNEL_STMTS(X)
#undef X
  }
  return "?";
}

std::string_view exprKindName(ExprKind k) {
  switch (k) {
#define X(K) \
  case ExprKind::K: return #K;
    TESSERA_KERNEL_EXPRS(X)
#undef X
  }
  return "?";
}

// ---------------------------------------------------------------- expression makers

namespace {
template <class T>
std::shared_ptr<T> node(ExprKind k, DType t) {
  auto n = std::make_shared<T>();
  n->kind = k;
  n->dtype = t;
  return n;
}
template <class T>
std::shared_ptr<T> stmt(StmtKind k) {
  auto n = std::make_shared<T>();
  n->kind = k;
  return n;
}
std::optional<int64_t> constOf(const Expr& e) {
  if (e->kind != ExprKind::IntImm) return std::nullopt;
  return static_cast<const IntImm&>(*e).value;
}
}  // namespace

Expr IntImm::make(int64_t v) {
  auto n = node<IntImm>(ExprKind::IntImm, DType::I64);
  n->value = v;
  return n;
}
Expr FloatImm::make(double v, DType t) {
  auto n = node<FloatImm>(ExprKind::FloatImm, t);
  n->value = v;
  return n;
}
Expr Var::make(const std::string& name, DType t) {
  auto n = node<Var>(ExprKind::Var, t);
  n->name = name;
  return n;
}
Expr Load::make(const std::string& buffer, DType t, std::vector<Expr> indices) {
  auto n = node<Load>(ExprKind::Load, t);
  n->buffer = buffer;
  n->indices = std::move(indices);
  return n;
}
Expr Unary::make(UnaryOp op, Expr a) {
  bool boolResult = op == UnaryOp::Not || op == UnaryOp::IsNan || op == UnaryOp::IsInf;
  auto n = node<Unary>(ExprKind::Unary, boolResult ? DType::Bool : a->dtype);
  n->op = op;
  n->a = std::move(a);
  return n;
}
Expr Binary::make(BinaryOp op, Expr a, Expr b) {
  auto n = node<Binary>(ExprKind::Binary, isComparison(op) ? DType::Bool : a->dtype);
  n->op = op;
  n->a = std::move(a);
  n->b = std::move(b);
  return n;
}
Expr Select::make(Expr cond, Expr t, Expr f) {
  auto n = node<Select>(ExprKind::Select, t->dtype);
  n->cond = std::move(cond);
  n->t = std::move(t);
  n->f = std::move(f);
  return n;
}
Expr Cast::make(DType to, Expr a) {
  if (a->dtype == to) return a;
  auto n = node<Cast>(ExprKind::Cast, to);
  n->a = std::move(a);
  return n;
}

Expr CheckedIndex::make(Expr value, int64_t extent, int check, Expr position) {
  auto n = node<CheckedIndex>(ExprKind::CheckedIndex, DType::I64);
  n->value = Cast::make(DType::I64, std::move(value));
  n->position = std::move(position);
  n->extent = extent;
  n->check = check;
  return n;
}

Expr intImm(int64_t v) { return IntImm::make(v); }
Expr var(const std::string& name) { return Var::make(name, DType::I64); }
bool isConst(const Expr& e, int64_t v) {
  auto c = constOf(e);
  return c && *c == v;
}

Expr add(Expr a, Expr b) {
  auto ca = constOf(a), cb = constOf(b);
  if (ca && cb) return intImm(*ca + *cb);
  if (ca && *ca == 0) return b;
  if (cb && *cb == 0) return a;
  // a + (x + y) → (a + x) + y on indices: one flat sum instead of nested parentheses.
  if (a->dtype == DType::I64 && b->kind == ExprKind::Binary && static_cast<const Binary&>(*b).op == BinaryOp::Add) {
    const auto& bb = static_cast<const Binary&>(*b);
    return add(add(a, bb.a), bb.b);
  }
  return Binary::make(BinaryOp::Add, std::move(a), std::move(b));
}
Expr sub(Expr a, Expr b) {
  auto ca = constOf(a), cb = constOf(b);
  if (ca && cb) return intImm(*ca - *cb);
  if (cb && *cb == 0) return a;
  return Binary::make(BinaryOp::Sub, std::move(a), std::move(b));
}
// (x * c1) * c2 → x * (c1*c2) and (x + y) * c → x*c + y*c on integer indices, so split and fuse keep
// indices in the flat form `a*32 + b*4 + c`.
static Expr scaleIndex(const Expr& e, int64_t c) {
  if (e->dtype != DType::I64 || e->kind != ExprKind::Binary) return nullptr;
  const auto& b = static_cast<const Binary&>(*e);
  if (b.op == BinaryOp::Mul && constOf(b.b)) return mul(b.a, intImm(*constOf(b.b) * c));
  if (b.op == BinaryOp::Add) return add(mul(b.a, intImm(c)), mul(b.b, intImm(c)));
  return nullptr;
}

Expr mul(Expr a, Expr b) {
  auto ca = constOf(a), cb = constOf(b);
  if (ca && cb) return intImm(*ca * *cb);
  if (cb && *cb != 0 && *cb != 1)
    if (Expr s = scaleIndex(a, *cb)) return s;
  if ((ca && *ca == 0) || (cb && *cb == 0)) return intImm(0);
  if (ca && *ca == 1) return b;
  if (cb && *cb == 1) return a;
  return Binary::make(BinaryOp::Mul, std::move(a), std::move(b));
}
Expr idiv(Expr a, Expr b) {
  auto ca = constOf(a), cb = constOf(b);
  if (ca && cb && *cb != 0) return intImm(*ca / *cb);
  if (cb && *cb == 1) return a;
  return Binary::make(BinaryOp::Div, std::move(a), std::move(b));
}
Expr imod(Expr a, Expr b) {
  auto ca = constOf(a), cb = constOf(b);
  if (ca && cb && *cb != 0) return intImm(*ca % *cb);
  if (cb && *cb == 1) return intImm(0);
  return Binary::make(BinaryOp::Mod, std::move(a), std::move(b));
}

// ---------------------------------------------------------------- statement makers

std::shared_ptr<ForStmt> ForStmt::make(LoopHeader h, Stmt body) {
  auto n = stmt<ForStmt>(StmtKind::For);
  n->h = std::move(h);
  n->body = std::move(body);
  return n;
}
std::shared_ptr<BlockStmt> BlockStmt::make(std::vector<Stmt> stmts) {
  auto n = stmt<BlockStmt>(StmtKind::Block);
  n->stmts = std::move(stmts);
  return n;
}
std::shared_ptr<AllocateStmt> AllocateStmt::make(const std::string& buffer) {
  auto n = stmt<AllocateStmt>(StmtKind::Allocate);
  n->buffer = buffer;
  return n;
}
std::shared_ptr<ComputeStmt> ComputeStmt::make(const std::string& name, DType t, Expr value) {
  auto n = stmt<ComputeStmt>(StmtKind::Compute);
  n->name = name;
  n->dtype = t;
  n->value = std::move(value);
  return n;
}
std::shared_ptr<StoreStmt> StoreStmt::make(const std::string& buffer, std::vector<Expr> indices, Expr value) {
  auto n = stmt<StoreStmt>(StmtKind::Store);
  n->buffer = buffer;
  n->indices = std::move(indices);
  n->value = std::move(value);
  return n;
}
std::shared_ptr<ReduceStmt> ReduceStmt::make(ReduceOp op, const std::string& buffer, std::vector<Expr> indices,
                                             Expr value) {
  auto n = stmt<ReduceStmt>(StmtKind::Reduce);
  n->op = op;
  n->buffer = buffer;
  n->indices = std::move(indices);
  n->value = std::move(value);
  return n;
}
std::shared_ptr<IfThenStmt> IfThenStmt::make(Expr cond, Stmt body) {
  auto n = stmt<IfThenStmt>(StmtKind::IfThen);
  n->cond = std::move(cond);
  n->body = std::move(body);
  return n;
}
std::shared_ptr<SyncStmt> SyncStmt::make(bool warpOnly) {
  auto n = stmt<SyncStmt>(StmtKind::Sync);
  n->warpOnly = warpOnly;
  return n;
}
std::shared_ptr<SyncStmt> SyncStmt::makeGrid() {
  auto n = make(false);
  n->grid = true;
  return n;
}
std::shared_ptr<AsyncCopyStmt> AsyncCopyStmt::make(const std::string& dst, std::vector<Expr> dstIndices,
                                                   const std::string& src, std::vector<Expr> srcIndices, Expr inside) {
  auto n = stmt<AsyncCopyStmt>(StmtKind::AsyncCopy);
  n->inside = std::move(inside);
  n->dst = dst;
  n->src = src;
  n->dstIndices = std::move(dstIndices);
  n->srcIndices = std::move(srcIndices);
  return n;
}
std::shared_ptr<PipelineMarkerStmt> PipelineMarkerStmt::make(bool wait, int pending) {
  auto n = stmt<PipelineMarkerStmt>(StmtKind::PipelineMarker);
  n->wait = wait;
  n->pending = pending;
  return n;
}

// ---------------------------------------------------------------- kernels

namespace {
struct Cloner {
  template <class T>
  Stmt operator()(T& s) const {
    auto c = std::make_shared<T>(s);
    forEachChild(*c, [](Stmt& child) { child = cloneStmt(child); });
    return c;
  }
};
}  // namespace

Stmt cloneStmt(const Stmt& s) { return visitStmt(*s, Cloner{}); }

const Buffer* Kernel::findBuffer(const std::string& name) const {
  for (const Buffer& b : buffers)
    if (b.name == name) return &b;
  return nullptr;
}
Buffer* Kernel::findBuffer(const std::string& name) {
  for (Buffer& b : buffers)
    if (b.name == name) return &b;
  return nullptr;
}

std::string indexCheckError(const IndexCheck& c, int64_t index, int64_t position) {
  return ops::nodeMessage(c.node, c.op, ops::indexOutOfRange(c.input, c.value, c.indexShape, position, index, c.axis, c.extent));
}

std::string_view machineName(Machine m) { return m == Machine::Cpu ? "cpu" : "gpu"; }

namespace {
// The packed copy's loops, written in its order (consecutive stores): `copy(to, from)` moves one element.
template <class Copy>
void packLoops(const Shape& v, size_t axis, int64_t block, const Copy& copy) {
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= v[d];
  for (size_t d = axis + 1; d < v.size(); ++d) inner *= v[d];
  const int64_t along = v[axis], blocks = along / block;
  int64_t to = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t b = 0; b < blocks; ++b)
      for (int64_t j = 0; j < inner; ++j)
        for (int64_t r = 0; r < block; ++r) copy(to++, (o * along + b * block + r) * inner + j);
}
}  // namespace

void packBytes(const Buffer& b, const std::byte* value, std::byte* out, size_t elementBytes) {
  const Shape& v = b.graphShape();
  if (b.packBlock <= 0 || b.packAxis < 0 || size_t(b.packAxis) >= v.size() || v[size_t(b.packAxis)] % b.packBlock != 0)
    fail("buffer '" + b.name + "' is not packed along an axis its blocks divide");
  if (elementBytes == 4) {  // f32 weights, the common case: typed copies, not memcpy calls
    const auto* from = reinterpret_cast<const uint32_t*>(value);
    auto* to = reinterpret_cast<uint32_t*>(out);
    packLoops(v, size_t(b.packAxis), b.packBlock, [&](int64_t t, int64_t f) { to[t] = from[f]; });
    return;
  }
  packLoops(v, size_t(b.packAxis), b.packBlock, [&](int64_t t, int64_t f) {
    std::memcpy(out + t * int64_t(elementBytes), value + f * int64_t(elementBytes), elementBytes);
  });
}

Tensor packTensor(const Buffer& b, const Tensor& value) {
  if (!b.packBlock) return value;
  if (value.shape() != b.graphShape())
    fail("buffer '" + b.name + "' packs a value of shape " + shapeToString(b.graphShape()) + ", not " + shapeToString(value.shape()));
  Tensor out(value.dtype(), b.shape);
  if (value.byteSize()) packBytes(b, value.bytes().data(), out.mutableBytes().data(), dtypeSize(value.dtype()));
  return out;
}

Kernel Kernel::clone() const {
  Kernel k = *this;
  k.body = cloneStmt(body);
  return k;
}

}  // namespace tessera::kernel

namespace tessera::kernel {

Tf32Policy Tf32Policy::parse(const std::string& name) {
  if (name == "off") return {};
  if (name == "conv" || name == "pytorch") return {true, false};
  if (name == "matmul") return {false, true};
  if (name == "all") return {true, true};
  fail("tf32 policy '" + name + "': expected off, conv, matmul, all or pytorch (= conv, PyTorch's defaults)");
}

std::string Tf32Policy::name() const { return conv ? (matmul ? "all" : "conv") : (matmul ? "matmul" : "off"); }

}  // namespace tessera::kernel
