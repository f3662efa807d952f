#include "kernel/printer.h"

#include <charconv>
#include <cmath>
#include <sstream>

namespace tessera::kernel {
namespace {

std::string number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string bare(const Expr& e);

std::string list(const std::vector<Expr>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + bare(v[i]);
  return s;
}

std::string access(const std::string& buffer, const std::vector<Expr>& idx) { return buffer + "[" + list(idx) + "]"; }

// Binding strength of infix operators; operands that bind weaker than their parent get parentheses.
int opPrecedence(BinaryOp op) {
  switch (op) {
    case BinaryOp::Or: return 1;
    case BinaryOp::And: return 2;
    case BinaryOp::Add: case BinaryOp::Sub: return 4;
    case BinaryOp::Mul: case BinaryOp::Div: case BinaryOp::Mod: return 5;
    default: return 3;  // comparisons
  }
}

int precedence(const Expr& e) {
  if (e->kind != ExprKind::Binary || !isInfix(static_cast<const Binary&>(*e).op)) return 100;
  return opPrecedence(static_cast<const Binary&>(*e).op);
}

std::string operand(const Expr& e, int parent, bool right) {
  int p = precedence(e);
  std::string s = printExpr(e);
  if (p < parent || (right && p == parent)) return "(" + s + ")";
  return s;
}

std::string bare(const Expr& e) { return printExpr(e); }

struct ExprPrinter {
  std::string operator()(const IntImm& n) const { return std::to_string(n.value); }
  std::string operator()(const FloatImm& n) const {
    std::string s = number(n.value);
    return n.dtype == DType::F32 ? s : s + ":" + std::string(dtypeName(n.dtype));
  }
  std::string operator()(const Var& n) const { return n.name; }
  std::string operator()(const Load& n) const { return access(n.buffer, n.indices); }
  std::string operator()(const Unary& n) const {
    return std::string(unaryOpName(n.op)) + "(" + bare(n.a) + ")";
  }
  std::string operator()(const Binary& n) const {
    // Appends rather than chained operator+ (GCC 12 warns falsely on the temporaries, -Wrestrict).
    std::string s;
    if (!isInfix(n.op)) {
      s.append(binaryOpName(n.op)).append("(").append(printExpr(n.a)).append(", ").append(printExpr(n.b)).append(")");
      return s;
    }
    int p = opPrecedence(n.op);
    s.append(operand(n.a, p, false)).append(" ").append(binaryOpName(n.op)).append(" ").append(operand(n.b, p, true));
    return s;
  }
  std::string operator()(const Select& n) const {
    return "select(" + bare(n.cond) + ", " + bare(n.t) + ", " + bare(n.f) + ")";
  }
  std::string operator()(const Cast& n) const {
    return std::string(dtypeName(n.dtype)) + "(" + bare(n.a) + ")";
  }
  std::string operator()(const CheckedIndex& n) const {
    return "checked(" + bare(n.value) + ", " + std::to_string(n.extent) + ")";
  }
};

std::string provenance(const StmtNode& s) {
  if (s.provenance.empty()) return "";
  std::string r = "  # ";
  for (size_t i = 0; i < s.provenance.size(); ++i) r += (i ? ", " : "") + s.provenance[i];
  return r;
}

struct StmtPrinter {
  std::ostringstream& os;
  int indent;
  std::string pad() const { return std::string(size_t(indent) * 2, ' '); }
  void child(const Stmt& s, int extra) const { os << printStmt(s, indent + extra); }

  void operator()(const ForStmt& s) const {
    os << pad() << "for " << s.h.var << " in 0.." << s.h.extent;
    if (s.h.loopKind == LoopKind::Bound) os << " bind(" << threadTagName(s.h.tag) << ")";
    else if (s.h.loopKind != LoopKind::Serial) os << " " << loopKindName(s.h.loopKind);
    if (s.h.reduction) os << " reduce";
    if (s.h.pipelineStages > 1) os << " pipeline(" << s.h.pipelineStages << ")";
    os << " {" << provenance(s) << "\n";
    child(s.body, 1);
    os << pad() << "}\n";
  }
  void operator()(const BlockStmt& s) const {
    // A block prints its statements at the enclosing level: nesting is shown by loops and ifs only.
    for (const Stmt& c : s.stmts) os << printStmt(c, indent + 1);
  }
  void operator()(const AllocateStmt& s) const { os << pad() << "alloc " << s.buffer << provenance(s) << "\n"; }
  void operator()(const ComputeStmt& s) const {
    os << pad() << s.name << ": " << dtypeName(s.dtype) << " = " << bare(s.value) << provenance(s) << "\n";
  }
  void operator()(const StoreStmt& s) const {
    os << pad() << access(s.buffer, s.indices) << " = " << bare(s.value) << provenance(s) << "\n";
  }
  void operator()(const ReduceStmt& s) const {
    os << pad() << access(s.buffer, s.indices) << " " << reduceOpName(s.op) << "= " << bare(s.value)
       << provenance(s) << "\n";
  }
  void operator()(const IfThenStmt& s) const {
    os << pad() << "if " << bare(s.cond) << " {" << provenance(s) << "\n";
    child(s.body, 1);
    os << pad() << "}\n";
  }
  void operator()(const SyncStmt& s) const {
    os << pad() << (s.grid ? "sync grid" : s.warpOnly ? "sync warp" : "sync block") << provenance(s) << "\n";
  }
  void operator()(const AsyncCopyStmt& s) const {
    os << pad() << access(s.dst, s.dstIndices) << " <- async " << access(s.src, s.srcIndices);
    if (s.inside) os << " where " << printExpr(s.inside) << " else 0";
    os << provenance(s) << "\n";
  }
  void operator()(const PipelineMarkerStmt& s) const {
    if (s.wait) os << pad() << "pipeline wait(" << s.pending << ")\n";
    else os << pad() << "pipeline commit\n";
  }
};

std::string shapeText(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

}  // namespace

std::string printExpr(const Expr& e) { return visitExpr(*e, ExprPrinter{}); }

std::string printStmt(const Stmt& s, int indent) {
  std::ostringstream os;
  // A Block is transparent: print its children at the caller's level.
  visitStmt(*s, StmtPrinter{os, s->kind == StmtKind::Block ? indent - 1 : indent});
  return os.str();
}

std::string printKernel(const Kernel& k) {
  std::ostringstream os;
  os << "kernel " << k.id << " (" << k.kind << ")  # ";
  for (size_t i = 0; i < k.nodeIds.size(); ++i) os << (i ? ", " : "") << k.nodeIds[i];
  os << "\n";
  if (k.allowTf32) os << "  precision f32 products may round to tf32\n";
  if (k.machine != Machine::Gpu) os << "  scheduled for the " << machineName(k.machine) << "\n";
  for (auto& [name, value] : k.params) os << "  param " << name << " = " << value << "\n";
  for (const Buffer& b : k.buffers) {
    const char* role = b.role == BufferRole::Input ? "in " : b.role == BufferRole::Output ? "out" : "tmp";
    os << "  " << role << " " << b.name << ": " << memScopeName(b.scope) << " " << dtypeName(b.dtype)
       << shapeText(b.shape);
    if (!b.value.empty()) os << "  # value '" << b.value << "'";
    if (!b.valueShape.empty()) os << " of shape " << shapeText(b.valueShape);
    if (b.packBlock) os << ", packed in blocks of " << b.packBlock << " along axis " << b.packAxis;
    if (!b.cacheOf.empty()) os << "  # " << (b.cacheIsRead ? "read" : "write") << " cache of " << b.cacheOf;
    if (b.cachePad) os << ", rows padded by " << b.cachePad;
    if (b.cacheRowPad) os << ", " << b.cacheRowPad << " rows of padding a plane";
    if (b.cacheAlign) os << ", columns aligned to " << b.cacheAlign;
    if (b.cacheZeroOutside) os << ", zero outside " << b.cacheOf;
    if (b.cacheByIteration) os << ", by iteration";
    if (b.swizzleBytes) os << ", " << b.swizzleBytes << "-byte swizzle";
    os << "\n";
  }
  os << printStmt(k.body, 1);
  return os.str();
}

}  // namespace tessera::kernel
