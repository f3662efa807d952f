#pragma once
// Internal helpers shared by the primitives: finding loops, perfect nests, fresh names, affine indices.
#include <map>
#include <optional>
#include <set>

#include "kernel/schedule/schedule.h"

namespace tessera::kernel::detail {

struct LoopSite {
  Stmt* slot = nullptr;      // the statement slot holding the loop (replace *slot to rewrite it)
  ForStmt* loop = nullptr;
  std::vector<ForStmt*> enclosing;  // outermost first
};

// Numbered precondition checks of one primitive application.
class Checker {
 public:
  Checker(const Kernel& k, std::string primitive, std::string subject)
      : k_(k), primitive_(std::move(primitive)), subject_(std::move(subject)) {}
  // Step n: throws ScheduleError when `ok` is false.
  void check(int step, bool ok, const std::string& what) const;
  [[noreturn]] void fail(int step, const std::string& what) const;
  void setSubject(std::string s) { subject_ = std::move(s); }

 private:
  const Kernel& k_;
  std::string primitive_, subject_;
};

std::optional<LoopSite> findLoop(Kernel& k, const std::string& name);
LoopSite requireLoop(Kernel& k, const Checker& c, int step, const std::string& name);

// A perfect nest: loops each directly inside the previous (through single-statement blocks and guards).
struct Chain {
  std::vector<ForStmt*> loops;
  std::vector<Expr> guards;  // conditions met on the way; they only read loop variables
  Stmt inner;                // the body of the last loop
};
// The perfect nest from `outer` down to the deepest of `needed`; nullopt when one of them is not in it
// (`missing` names it).
std::optional<Chain> perfectChain(ForStmt* outer, const std::set<std::string>& needed, std::string* missing);
// Rebuilds a nest from headers (outermost first); the guards go innermost, around `inner`.
Stmt buildNest(const std::vector<LoopHeader>& headers, const std::vector<Expr>& guards, Stmt inner);
Stmt asBlock(Stmt s);

// A name not used by any loop, compute or buffer of the kernel: base, base_1, base_2, ...
std::string freshName(const Kernel& k, const std::string& base);
// Names one primitive makes: each unique in the kernel (freshName) and among the others it made, though none is
// in the kernel yet.
class Names {
 public:
  explicit Names(const Kernel& k) : k_(k) {}
  std::string fresh(const std::string& base) {
    std::string name = freshName(k_, base);
    for (int i = 1; taken_.count(name); ++i) name = freshName(k_, base + "_" + std::to_string(i));
    taken_.insert(name);
    return name;
  }

 private:
  const Kernel& k_;
  std::set<std::string> taken_;
};
bool containsLoop(const Stmt& s);
// Some statement of `kind` is in `s` (itself included).
bool containsKind(const Stmt& s, StmtKind kind);
// The indices of every load of `buffer` in `s`.
std::vector<std::vector<Expr>> loadsOf(const Stmt& s, const std::string& buffer);
// Indices of the Store, Reduce and AsyncCopy statements writing `buffer`; `reduces` counts the Reduce ones.
std::vector<std::vector<Expr>> writesOf(const Stmt& s, const std::string& buffer, int* reduces = nullptr);
// Loop variables declared inside `s`, with their extents.
std::map<std::string, int64_t> loopsInside(const Stmt& s);

// e = sum(coef[v] * v) + rest, `rest` free of the local variables.
struct Affine {
  std::map<std::string, int64_t> coef;
  Expr rest;
};
std::optional<Affine> affine(const Expr& e, const std::set<std::string>& local);
Expr linearPart(const Affine& a);
// (c*A + B) / c -> A and (c*A + B) % c -> B where c*A + B is affine in the loops with non-negative steps
// and offset and B stays below c over the loops' extents: a split loop's index divided by its own factor (a
// grouped conv's channel over its group once the channels are split by the group's size).
Expr simplifyDivMod(const Expr& e, const std::map<std::string, int64_t>& extents);
// The largest value `e` takes over loops with the given extents; nullopt when unknown.
std::optional<int64_t> upperBound(const Expr& e, const std::map<std::string, int64_t>& extents);

// The loops inside a cache's loop, and their quotients and remainders by constants (a fused loop's p / 14
// and p % 14) as atoms: variables of their own whose extents bound the values they take. An index affine in
// loops and atoms still has a box (cache_read) and a phase (deinterleave).
class LocalTerms {
 public:
  explicit LocalTerms(const std::map<std::string, int64_t>& loops);
  Expr withAtoms(const Expr& e);
  Expr withoutAtoms(const Expr& e) const;
  const std::set<std::string>& vars() const { return vars_; }
  int64_t extent(const std::string& v) const { return extents_.at(v); }

 private:
  Expr atomFor(const Expr& x);

  std::map<std::string, int64_t> extents_;
  std::set<std::string> vars_;
  std::map<std::string, Expr> atoms_;          // atom -> the quotient or remainder it stands for
  std::map<std::string, std::string> byText_;  // equal terms share one atom
};

}  // namespace tessera::kernel::detail
