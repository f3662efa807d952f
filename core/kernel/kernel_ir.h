#pragma once
// Kernel IR: one loop nest per fused group. Expressions are immutable and shared (a rewrite returns the same
// node when nothing changed); statements form a tree owned by the kernel and are rewritten in place by the
// schedule primitives. Node kinds are listed once (the X-lists below); the printer and the visitors follow
// from those lists. docs/kernel-ir.md says what code each node kind stands for.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/shape.h"

namespace tessera {
class Tensor;
}

namespace tessera::kernel {

// ---------------------------------------------------------------- enums

#define TESSERA_KERNEL_UNARY_OPS(X)                                                                      \
  X(Neg, "neg") X(Abs, "abs") X(Exp, "exp") X(Log, "log") X(Sqrt, "sqrt") X(Rsqrt, "rsqrt")             \
  X(Tanh, "tanh") X(Erf, "erf") X(Sigmoid, "sigmoid") X(Sin, "sin") X(Cos, "cos") X(Floor, "floor")      \
  X(Ceil, "ceil") X(Round, "round") X(Sign, "sign") X(Recip, "recip") X(Not, "not") X(IsNan, "isnan")    \
  X(IsInf, "isinf") X(Tan, "tan") X(Asin, "asin") X(Acos, "acos") X(Atan, "atan") X(Sinh, "sinh")      \
  X(Cosh, "cosh") X(Asinh, "asinh") X(Acosh, "acosh") X(Atanh, "atanh")
#define TESSERA_KERNEL_BINARY_OPS(X)                                                                     \
  X(Add, "+") X(Sub, "-") X(Mul, "*") X(Div, "/") X(Mod, "%") X(Max, "max") X(Min, "min") X(Pow, "pow") \
  X(Lt, "<") X(Le, "<=") X(Gt, ">") X(Ge, ">=") X(Eq, "==") X(Ne, "!=") X(And, "&&") X(Or, "||")        \
  X(Xor, "xor")

enum class UnaryOp : uint8_t {
#define X(N, S) N,
  TESSERA_KERNEL_UNARY_OPS(X)
#undef X
};
enum class BinaryOp : uint8_t {
#define X(N, S) N,
  TESSERA_KERNEL_BINARY_OPS(X)
#undef X
};
std::string_view unaryOpName(UnaryOp op);
std::string_view binaryOpName(BinaryOp op);
bool isInfix(BinaryOp op);       // printed as `a op b` rather than `op(a, b)`
bool isComparison(BinaryOp op);  // result is bool

// Where a buffer lives. Global: device memory, visible to all blocks (kernel parameters live here).
// Shared: per thread block, fast, small (48 KiB static, up to 227 KiB dynamic: launch.h); needs a barrier between writers and readers.
// Register: per thread, fastest, tiny; indices must be compile-time constants after unrolling to stay in registers.
enum class MemScope : uint8_t { Global, Shared, Register };
std::string_view memScopeName(MemScope s);  // "global", "shared", "register"

// How a loop runs. Serial: a plain loop. Parallel: iterations on CPU threads (OpenMP) — no GPU meaning.
// Vectorized: one vector instruction (extent = lanes); cheap, needs contiguous accesses. Unrolled: copied
// extent times; removes loop overhead and lets register arrays be indexed by constants, costs code size.
// Bound: replaced by a hardware index (see ThreadTag); the extent becomes a launch dimension.
enum class LoopKind : uint8_t { Serial, Parallel, Vectorized, Unrolled, Bound };
std::string_view loopKindName(LoopKind k);

// Hardware indices a loop can be bound to. Block*: grid dimensions (blockIdx), independent blocks, no
// sharing. Thread*: threads of one block (threadIdx), can share memory and synchronize. Warp: the warp index
// within the block (threadIdx.x / 32 with threadIdx.x bound to the 32 lanes inside it). MmaRow, MmaCol: the
// lanes of one warp holding a 16 x 8 tile the way a tensor-core mma (m16n8k16) holds its accumulator: a
// 16-row loop bound to MmaRow and the 8-column loop directly inside it bound to MmaCol give lane l the rows
// l/4 and l/4 + 8 and the columns 2(l%4) and 2(l%4) + 1; a 16-deep reduction under them becomes one mma.
enum class ThreadTag : uint8_t { None, BlockX, BlockY, BlockZ, ThreadX, ThreadY, ThreadZ, Warp, MmaRow, MmaCol };
std::string_view threadTagName(ThreadTag t);  // "blockIdx.x", ..., "warp"
ThreadTag parseThreadTag(std::string_view name);  // None when unknown
bool isBlockTag(ThreadTag t);
bool isThreadTag(ThreadTag t);  // threadIdx.*, warp and the mma lanes
bool isMmaTag(ThreadTag t);     // mma.row, mma.col

// MaxSumExp is online softmax's pair (Milakov and Gimelshein, 2018): the accumulator's last dimension holds
// [m, s], the running max and the sum of exp(x - m) so far; a Reduce addresses element 0 of the pair, and each
// value x updates both (s rescaled by exp(m - m') when the max grows), so one pass gives what a max pass and
// a sum-of-exponentials pass give.
enum class ReduceOp : uint8_t { Sum, Max, Min, MaxSumExp };
std::string_view reduceOpName(ReduceOp op);

// ---------------------------------------------------------------- expressions

#define TESSERA_KERNEL_EXPRS(X) \
  X(IntImm) X(FloatImm) X(Var) X(Load) X(Unary) X(Binary) X(Select) X(Cast) X(CheckedIndex)

enum class ExprKind : uint8_t {
#define X(K) K,
  TESSERA_KERNEL_EXPRS(X)
#undef X
};

struct ExprNode {
  ExprKind kind{};
  DType dtype{};
  virtual ~ExprNode() = default;
};
using Expr = std::shared_ptr<const ExprNode>;

// An integer constant (indices, extents) of type i64.
struct IntImm : ExprNode {
  int64_t value;
  static Expr make(int64_t v);
};
// A floating constant of the given type; inf and -inf allowed.
struct FloatImm : ExprNode {
  double value;
  static Expr make(double v, DType t = DType::F32);
};
// A loop variable (i64) or a value defined by a Compute statement.
struct Var : ExprNode {
  std::string name;
  static Expr make(const std::string& name, DType t = DType::I64);
};
// buffer[indices...], row-major; a rank-0 buffer has no indices.
struct Load : ExprNode {
  std::string buffer;
  std::vector<Expr> indices;
  static Expr make(const std::string& buffer, DType t, std::vector<Expr> indices);
};
struct Unary : ExprNode {
  UnaryOp op;
  Expr a;
  static Expr make(UnaryOp op, Expr a);
};
// Arithmetic keeps the operand type; comparisons and logic give bool. Integer / and % are C's (indices
// are non-negative where they occur).
struct Binary : ExprNode {
  BinaryOp op;
  Expr a, b;
  static Expr make(BinaryOp op, Expr a, Expr b);
};
// cond ? t : f — lazy, like C's ?: (the arm not taken is not evaluated, so it may load out of bounds).
struct Select : ExprNode {
  Expr cond, t, f;
  static Expr make(Expr cond, Expr t, Expr f);
};
struct Cast : ExprNode {
  Expr a;
  static Expr make(DType to, Expr a);  // returns `a` when it already has type `to`
};
// An index read from a tensor (Gather's indices), checked before it addresses memory. ONNX's rule:
// -extent..extent-1 are valid and a negative one counts from the end; the node's value is the index wrapped
// into [0, extent). Outside the rule, generated code writes the kernel's error record (first error wins) and
// takes 0, so no access leaves its buffer; the interpreter throws. `check` indexes Kernel::indexChecks (which
// node and input); `position` (i64) is the element's flat offset in the index tensor, only for the message
// (arithmetic of loop variables, or of another check's index where gathers chain). One compare a use
// (docs/kernel-ir.md, Index checks).
struct CheckedIndex : ExprNode {
  Expr value, position;
  int64_t extent = 0;
  int check = 0;
  static Expr make(Expr value, int64_t extent, int check, Expr position);
};

// Folding builders used by lowering and by the primitives (so printed indices stay short).
Expr add(Expr a, Expr b);
Expr sub(Expr a, Expr b);
Expr mul(Expr a, Expr b);
Expr idiv(Expr a, Expr b);
Expr imod(Expr a, Expr b);
// The initial value of an accumulator of `op` (Sum, Max, Min) in type `t`: 0, or the lowest (Max) or highest
// (Min) value; the lowering's accumulators and rfactor's lanes start from it.
Expr reduceInit(ReduceOp op, DType t);
Expr intImm(int64_t v);
Expr var(const std::string& name);  // an i64 loop variable
bool isConst(const Expr& e, int64_t v);

// ---------------------------------------------------------------- statements

#define TESSERA_KERNEL_STMTS(X) \
  X(For) X(Block) X(Allocate) X(Compute) X(Store) X(Reduce) X(IfThen) X(Sync) X(AsyncCopy) X(PipelineMarker)

enum class StmtKind : uint8_t {
#define X(K) K,
  TESSERA_KERNEL_STMTS(X)
#undef X
};

struct StmtNode {
  StmtKind kind{};
  std::vector<std::string> provenance;  // ids of the graph nodes this statement came from
  virtual ~StmtNode() = default;
};
using Stmt = std::shared_ptr<StmtNode>;

// The header of a loop; the primitives move headers between loops (reorder) and split them.
struct LoopHeader {
  std::string var;   // unique in the kernel: primitives and the UI name loops by it
  int64_t extent = 1;  // iterations 0 .. extent-1
  LoopKind loopKind = LoopKind::Serial;
  ThreadTag tag = ThreadTag::None;  // set when loopKind is Bound
  bool reduction = false;           // iterates a reduction axis (its Reduce statements accumulate across it)
  int pipelineStages = 0;           // > 1: software-pipelined, see docs/kernel-ir.md
};

// for var in 0..extent { body }
struct ForStmt : StmtNode {
  LoopHeader h;
  Stmt body;
  static std::shared_ptr<ForStmt> make(LoopHeader h, Stmt body);
};
// Statements in order. Compute and Allocate are visible to the statements after them in the same block.
struct BlockStmt : StmtNode {
  std::vector<Stmt> stmts;
  static std::shared_ptr<BlockStmt> make(std::vector<Stmt> stmts = {});
};
// Declares a shared or register buffer (see Kernel::buffers) for the rest of the enclosing block.
struct AllocateStmt : StmtNode {
  std::string buffer;
  static std::shared_ptr<AllocateStmt> make(const std::string& buffer);
};
// name : dtype = value — a scalar local (one per graph node or piece of a decomposed node).
struct ComputeStmt : StmtNode {
  std::string name;
  DType dtype;
  Expr value;
  static std::shared_ptr<ComputeStmt> make(const std::string& name, DType t, Expr value);
};
// buffer[indices] = value
struct StoreStmt : StmtNode {
  std::string buffer;
  std::vector<Expr> indices;
  Expr value;
  static std::shared_ptr<StoreStmt> make(const std::string& buffer, std::vector<Expr> indices, Expr value);
};
// buffer[indices] = op(buffer[indices], value); the element is initialized by a Store before the loops over
// the reduction axes. A reduction loop bound to threads makes it a cross-thread reduction.
struct ReduceStmt : StmtNode {
  ReduceOp op;
  std::string buffer;
  std::vector<Expr> indices;
  Expr value;
  static std::shared_ptr<ReduceStmt> make(ReduceOp op, const std::string& buffer, std::vector<Expr> indices,
                                          Expr value);
};
// if (cond) { body } — guards from splits whose factor does not divide the extent, and cache fills.
struct IfThenStmt : StmtNode {
  Expr cond;
  Stmt body;
  static std::shared_ptr<IfThenStmt> make(Expr cond, Stmt body);
};
// Barrier: all threads of the block (__syncthreads) or of the warp (__syncwarp). A grid barrier (only
// directly in the kernel's top-level block, between loop nests) waits for every block: on the GPU the kernel
// is launched once per phase it separates (docs/kernel-ir.md, Phases).
struct SyncStmt : StmtNode {
  bool warpOnly = false;
  bool grid = false;
  static std::shared_ptr<SyncStmt> make(bool warpOnly = false);
  static std::shared_ptr<SyncStmt> makeGrid();
};
// dst[dstIndices] = src[srcIndices] issued asynchronously (cp.async global → shared); completes at a wait.
struct AsyncCopyStmt : StmtNode {
  std::string dst, src;
  std::vector<Expr> dstIndices, srcIndices;
  // Null: always copy. Else the copy's element where `inside` holds and 0 where it does not (a zero-filled
  // halo: cp.async reading 0 source bytes); the source is not read there.
  Expr inside;
  static std::shared_ptr<AsyncCopyStmt> make(const std::string& dst, std::vector<Expr> dstIndices,
                                             const std::string& src, std::vector<Expr> srcIndices, Expr inside = nullptr);
};
// commit: close the group of async copies issued so far; wait: block until at most `pending` groups are
// still in flight (cp.async.commit_group / cp.async.wait_group).
struct PipelineMarkerStmt : StmtNode {
  bool wait = false;
  int pending = 0;
  static std::shared_ptr<PipelineMarkerStmt> make(bool wait, int pending);
};

// Calls f with the node cast to its concrete type (one case per entry of the X-list).
template <class F>
decltype(auto) visitStmt(StmtNode& s, F&& f) {
  switch (s.kind) {
#define X(K) \
  case StmtKind::K: return f(static_cast<K##Stmt&>(s));
    TESSERA_KERNEL_STMTS(X)
#undef X
  }
  return f(static_cast<BlockStmt&>(s));  // unreachable: every kind is listed above
}
template <class F>
decltype(auto) visitExpr(const ExprNode& e, F&& f) {
  switch (e.kind) {
#define X(K) \
  case ExprKind::K: return f(static_cast<const K&>(e));
    TESSERA_KERNEL_EXPRS(X)
#undef X
  }
  return f(static_cast<const IntImm&>(e));  // unreachable
}
std::string_view stmtKindName(StmtKind k);
std::string_view exprKindName(ExprKind k);

// ---------------------------------------------------------------- buffers and kernels

enum class BufferRole : uint8_t { Input, Output, Temp };

struct Buffer {
  std::string name;  // generated (in0, out0, acc0, in0_shared): model names never become identifiers
  DType dtype = DType::F32;
  Shape shape;
  MemScope scope = MemScope::Global;
  BufferRole role = BufferRole::Temp;
  std::string value;  // the graph value an Input/Output buffer holds
  // A cache made by cache_read/cache_write: the buffer it copies and the offset of its element 0 there.
  std::string cacheOf;
  bool cacheIsRead = true;
  std::vector<Expr> cacheBase;
  int64_t cachePad = 0;  // elements added to the last dimension of a read cache (shifts shared-memory banks)
  // A read cache whose fill writes 0 where its box leaves the source (a conv's padding), so the selects that
  // masked those reads are gone (cache_read).
  bool cacheZeroOutside = false;
  // A register copy indexed by the iterations of the loops that read it (keep_in_registers), not by a box of
  // the source: cacheBase is empty, and compute_at cannot move it.
  bool cacheByIteration = false;
  // Rows added to the second-to-last dimension of a read cache (cache_read pad_rows): where padding each row
  // cannot (a conv halo of 16 rows: 16 x any width is 0 or 16 words modulo 32), this moves the cache's planes
  // to other shared-memory banks.
  int64_t cacheRowPad = 0;
  // The read cache's box along its last dimension starts at a multiple of this many elements of the source and
  // spans whole such runs (cache_read align): a conv halo whose rows are filled 16 bytes a copy. 0: the box
  // as read.
  int64_t cacheAlign = 0;
  // 0: row-major. 128 (swizzle): stored in atoms of 8 rows of 128 bytes, the layout the tensor cores' 128-byte
  // swizzle descriptors read (wgmma) — the last dimension cut into 128-byte chunks stored one after another
  // (chunk-major), and in row r the 16-byte pieces of a chunk permuted by XOR with r % 8, so that the 8 rows
  // of an atom spread one piece over all banks. Only addresses change: the buffer is indexed as its shape says.
  int64_t swizzleBytes = 0;
  // The value's shape where the kernel indexes the same elements, row-major, in another shape (`shape`): a
  // batched matmul's [batch, M, K] operand read as one [batch·M, K] matrix. Empty: the value's shape is `shape`.
  Shape valueShape = {};
  const Shape& graphShape() const { return valueShape.empty() ? shape : valueShape; }  // the value's shape
  // An input stored packed (the pack primitive, docs/kernel-ir.md): axis `packAxis` of the value cut into blocks
  // of `packBlock` elements, each element's place in its block moved to a last axis: conv weights [OC, IC, 3, 3]
  // as [OC/32, IC, 3, 3, 32] (oneDNN's OIhw32o), so a vector of 32 output channels loads consecutive elements.
  // The runtime makes that copy of the value before the kernel runs (packBytes), once a run; `valueShape` is
  // the value's own shape. packBlock 0: the buffer holds the value as it is.
  int64_t packAxis = 0, packBlock = 0;
};

// `value`'s elements (row-major in b.graphShape(), `elementBytes` each) in b's packed order (Buffer::packAxis),
// written to `out` (as many bytes).
void packBytes(const Buffer& b, const std::byte* value, std::byte* out, size_t elementBytes);
// `value` (of b.graphShape()) as the packed buffer holds it (b.shape); `value` itself when b is not packed.
Tensor packTensor(const Buffer& b, const Tensor& value);

// What a CheckedIndex checks: the node and input its index comes from, for the error's message.
struct IndexCheck {
  std::string node, op;  // the graph node's id and op
  size_t input = 0;      // which input of the node holds the indices
  std::string value;     // the graph value of that input
  Shape indexShape;      // its shape (a flat position becomes [i, j, ...])
  int64_t axis = 0, extent = 0;
};
// "node 'g' (Gather): input 1 ('idx') holds 5 at [2], out of range for axis 0 of extent 4 (-4..3 are valid)":
// the reference interpreter's words for the same input (ops::indexOutOfRange).
std::string indexCheckError(const IndexCheck& c, int64_t index, int64_t position);

// Where f32 products may run on the tensor cores rounded to tf32 (a 10-bit mantissa): a choice of precision
// per op kind, off by default. PyTorch's defaults allow it for convolutions (cuDNN) and not for matmuls, so
// "pytorch" names that setting for like-for-like comparisons.
struct Tf32Policy {
  bool conv = false, matmul = false;
  // off | conv | matmul | all | pytorch (= conv); throws Error naming the value otherwise.
  static Tf32Policy parse(const std::string& name);
  std::string name() const;  // off, conv, matmul or all
  friend bool operator==(const Tf32Policy&, const Tf32Policy&) = default;
};

// The machine a kernel's template schedules it for. The schedule is what differs: a GPU schedule binds loops to
// blocks and threads and stages tiles in shared memory; a CPU schedule parallelizes outer tiles over cores and
// keeps a register tile in vector registers. Either runs on either backend (the C++ generator runs bound loops
// as loops), only slower on the machine it was not made for.
enum class Machine : uint8_t { Gpu, Cpu };
std::string_view machineName(Machine m);  // "gpu", "cpu"

struct Kernel {
  std::string id;     // the group id
  std::string kind;   // pointwise, reduction, gemm, conv, pool, data-movement
  std::vector<std::string> nodeIds;  // provenance of the whole kernel
  std::vector<Buffer> buffers;       // inputs and outputs first, in order, then temps and caches
  Stmt body;
  std::map<std::string, int64_t> params;  // template parameters (set_param)
  std::vector<IndexCheck> indexChecks;    // CheckedIndex::check indexes it
  // The policy lets this kernel's f32 products round to tf32: its template may then pick the tensor cores.
  bool allowTf32 = false;
  Machine machine = Machine::Gpu;  // which form of its template schedules it (templates.h)

  const Buffer* findBuffer(const std::string& name) const;
  Buffer* findBuffer(const std::string& name);
  Kernel clone() const;  // deep copy of the statement tree
};

Stmt cloneStmt(const Stmt& s);

}  // namespace tessera::kernel
