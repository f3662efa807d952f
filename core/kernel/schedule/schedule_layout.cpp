// Storage layouts of caches: swizzle (a shared buffer's layout, the one the tensor cores' descriptors read;
// kernel_ir.h, Buffer::swizzleBytes; docs/kernel-ir.md, Swizzled tiles) and deinterleave (a strided conv's
// packed columns stored by phase, so its lanes read consecutive elements) and permute (a cache's axes in another
// order: an NHWC input's packed patch stored channels first); pack (an input, a conv's weights, stored in
// blocks of one axis, its block index last: kernel_ir.h, Buffer::packAxis).
#include <functional>

#include "kernel/printer.h"
#include "kernel/schedule/schedule_util.h"
#include "kernel/visit.h"

namespace tessera::kernel::sched {

void swizzle(Kernel& k, const std::string& buffer, int64_t bytes) {
  detail::Checker c(k, "swizzle", buffer);
  Buffer* b = k.findBuffer(buffer);
  c.check(1, b != nullptr, "no buffer named '" + buffer + "'");
  c.check(2, b->scope == MemScope::Shared, "'" + buffer + "' is not in shared memory");
  c.check(3, bytes == 128, "the swizzle is 128 bytes (the tensor cores' widest), not " + std::to_string(bytes));
  c.check(4, b->swizzleBytes == 0, "'" + buffer + "' is already swizzled");
  c.check(5, b->cachePad == 0 && b->cacheRowPad == 0, "'" + buffer + "' is padded (cache_read pad): a swizzled tile spreads its rows over the banks itself");
  c.check(6, b->shape.size() >= 2, "'" + buffer + "' has fewer than 2 dimensions");
  int64_t rowBytes = b->shape.back() * int64_t(dtypeSize(b->dtype));
  c.check(7, rowBytes > 0 && rowBytes % bytes == 0,
          "a row of '" + buffer + "' is " + std::to_string(rowBytes) + " bytes, not a multiple of " + std::to_string(bytes));
  int64_t rows = numElements(b->shape) / b->shape.back();
  c.check(8, rows % 8 == 0, "'" + buffer + "' has " + std::to_string(rows) + " rows, not a multiple of 8");
  b->swizzleBytes = bytes;
}

namespace {

// x (affine in the loops and their quotients and remainders by constants, non-negative steps and offset)
// stored at phase (x % f) of ⌈E/f⌉ elements each: (x % f) * phaseLength + x / f, written so that a term whose
// step f divides leaves both the phase and the quotient's remainder part: 2*ow + kw over f = 2 is phase kw % 2
// at ow + kw / 2, consecutive in ow (a fused pixel loop's 2*(p % 14) + kw likewise, p % 14 for ow).
std::optional<Expr> phaseIndex(const Expr& x, int64_t f, int64_t phaseLength, const std::map<std::string, int64_t>& loops) {
  detail::LocalTerms terms(loops);
  auto a = detail::affine(terms.withAtoms(x), terms.vars());
  if (!a || a->rest->kind != ExprKind::IntImm || static_cast<const IntImm&>(*a->rest).value < 0) return std::nullopt;
  Expr whole = intImm(0), rest = a->rest;
  for (auto& [v, c] : a->coef) {
    if (c < 0) return std::nullopt;
    whole = add(whole, mul(var(v), intImm(c / f)));
    rest = add(rest, mul(var(v), intImm(c % f)));
  }
  return terms.withoutAtoms(add(mul(imod(rest, intImm(f)), intImm(phaseLength)), add(whole, idiv(rest, intImm(f)))));
}

// Rewrites the indices of every access of cache `buffer` by `rewrite` on a copy of the kernel, and gives the copy
// back only when all succeed (a refusal leaves the kernel as it was). `c` names the primitive; step 6 refuses
// the caches a layout cannot follow (accumulated into, or filled by async copies).
void relayout(Kernel& k, const detail::Checker& c, const std::string& buffer,
              const std::function<void(std::vector<Expr>&)>& rewrite, const std::function<void(Buffer&)>& reshape) {
  Kernel trial = k.clone();
  walk(trial.body, [&](StmtNode& n) {
    c.check(6, n.kind != StmtKind::Reduce || static_cast<ReduceStmt&>(n).buffer != buffer, "'" + buffer + "' is accumulated into");
    c.check(6, n.kind != StmtKind::AsyncCopy || static_cast<AsyncCopyStmt&>(n).dst != buffer, "'" + buffer + "' is filled by async copies");
    if (n.kind == StmtKind::Store && static_cast<StoreStmt&>(n).buffer == buffer) rewrite(static_cast<StoreStmt&>(n).indices);
    mapDirectExprs(n, [&](const Expr& e) {
      return mapExpr(e, [&](const Expr& x) {
        if (x->kind != ExprKind::Load || static_cast<const Load&>(*x).buffer != buffer) return x;
        auto ld = std::make_shared<Load>(static_cast<const Load&>(*x));
        rewrite(ld->indices);
        return Expr(ld);
      });
    });
  });
  reshape(*trial.findBuffer(buffer));
  k = std::move(trial);
}

// A cache whose storage may change: steps 1, 2 and 4 of deinterleave and permute (a padded one only where
// `padded` allows: deinterleave keeps each row's and plane's padding past the phases).
Buffer* layoutCache(Kernel& k, const detail::Checker& c, const std::string& buffer, bool padded = false) {
  Buffer* b = k.findBuffer(buffer);
  c.check(1, b != nullptr, "no buffer named '" + buffer + "'");
  c.check(2, b->scope != MemScope::Global && !b->shape.empty(), "'" + buffer + "' is not a cache");
  c.check(4, b->swizzleBytes == 0, "'" + buffer + "' already has a storage layout (swizzled)");
  c.check(4, padded || (b->cachePad == 0 && b->cacheRowPad == 0), "'" + buffer + "' already has a storage layout (padded)");
  return b;
}

}  // namespace

void deinterleave(Kernel& k, const std::string& buffer, int64_t factor) {
  detail::Checker c(k, "deinterleave", buffer);
  Buffer* b = layoutCache(k, c, buffer, /*padded=*/true);
  c.check(3, factor >= 2 && factor <= 16, "the factor " + std::to_string(factor) + " is not between 2 and 16");
  // The phases hold the box's columns; a row's padding (cache_read pad) stays after them.
  const int64_t pad = b->cachePad, phaseLength = (b->shape.back() - pad + factor - 1) / factor;
  const std::map<std::string, int64_t> loops = detail::loopsInside(k.body);
  auto rewrite = [&](std::vector<Expr>& idx) {
    auto at = phaseIndex(idx.back(), factor, phaseLength, loops);
    c.check(5, at.has_value(), "the last index of an access of '" + buffer + "' (" + printExpr(idx.back()) +
                                   ") is not affine in the loops with non-negative steps and offset");
    idx.back() = *at;
  };
  relayout(k, c, buffer, rewrite, [&](Buffer& out) { out.shape.back() = phaseLength * factor + pad; });
}

void permute(Kernel& k, const std::string& buffer, const std::vector<int64_t>& perm) {
  detail::Checker c(k, "permute", buffer);
  Buffer* b = layoutCache(k, c, buffer);
  std::vector<bool> seen(b->shape.size(), false);
  c.check(3, perm.size() == b->shape.size(), "the permutation has " + std::to_string(perm.size()) + " axes, the cache " +
                                                 std::to_string(b->shape.size()));
  for (int64_t a : perm) {
    c.check(3, a >= 0 && a < int64_t(perm.size()) && !seen[size_t(a)], "the axes are not a permutation of 0.." +
                                                                            std::to_string(perm.size() - 1));
    seen[size_t(a)] = true;
  }
  auto permuted = [&](const auto& v) {
    std::decay_t<decltype(v)> out;
    for (int64_t a : perm) out.push_back(v[size_t(a)]);
    return out;
  };
  relayout(k, c, buffer, [&](std::vector<Expr>& idx) { idx = permuted(idx); }, [&](Buffer& out) { out.shape = permuted(out.shape); });
}

void pack(Kernel& k, const std::string& buffer, int64_t axis, int64_t block) {
  detail::Checker c(k, "pack", buffer);
  Buffer* b = k.findBuffer(buffer);
  c.check(1, b != nullptr, "no buffer named '" + buffer + "'");
  c.check(2, b->role == BufferRole::Input && b->scope == MemScope::Global, "'" + buffer + "' is not an input of the kernel");
  c.check(3, b->packBlock == 0 && b->valueShape.empty(), "'" + buffer + "' is already stored in another shape");
  c.check(4, axis >= 0 && axis < int64_t(b->shape.size()), "axis " + std::to_string(axis) + " is not one of its " +
                                                               std::to_string(b->shape.size()) + " axes");
  const int64_t along = b->shape[size_t(axis)];
  c.check(5, block >= 2 && along % block == 0,
          "blocks of " + std::to_string(block) + " do not divide axis " + std::to_string(axis) + " (" + std::to_string(along) + ")");
  const std::map<std::string, int64_t> extents = detail::loopsInside(k.body);
  auto rewrite = [&](std::vector<Expr>& idx) {
    const Expr at = idx[size_t(axis)];
    idx[size_t(axis)] = detail::simplifyDivMod(idiv(at, intImm(block)), extents);
    idx.push_back(detail::simplifyDivMod(imod(at, intImm(block)), extents));
  };
  relayout(k, c, buffer, rewrite, [&](Buffer& out) {
    out.valueShape = out.shape;
    out.shape[size_t(axis)] = along / block;
    out.shape.push_back(block);
    out.packAxis = axis;
    out.packBlock = block;
  });
}

}  // namespace tessera::kernel::sched
