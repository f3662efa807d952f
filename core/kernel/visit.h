#pragma once
// Generic traversals of the kernel IR, written once over the node lists of kernel_ir.h.
#include <functional>
#include <map>

#include "kernel/kernel_ir.h"

namespace tessera::kernel {

using ExprFn = std::function<Expr(const Expr&)>;

// The child statement slots of a statement (loop and if bodies, block entries).
void forEachChild(StmtNode& s, const std::function<void(Stmt&)>& f);
// Replaces each expression held directly by the statement (not those of children) by f(expr).
void mapDirectExprs(StmtNode& s, const ExprFn& f);
// Rebuilds an expression bottom-up: f sees each node with already-rewritten children; unchanged
// subtrees keep their node.
Expr mapExpr(const Expr& e, const ExprFn& f);
// Pre-order walk over a statement tree.
void walk(const Stmt& s, const std::function<void(StmtNode&)>& f);
// Applies f to every expression of every statement in the tree (rewriting in place).
void mapAllExprs(const Stmt& s, const ExprFn& f);
// Calls f on every node of an expression.
void walkExpr(const Expr& e, const std::function<void(const ExprNode&)>& f);
// Replaces variables by expressions.
Expr substitute(const Expr& e, const std::map<std::string, Expr>& vars);
void substitute(const Stmt& s, const std::map<std::string, Expr>& vars);
bool usesVar(const Expr& e, const std::string& name);
// The statement inside any blocks of a single statement (a body written as { s }).
Stmt unwrapBlocks(Stmt s);

}  // namespace tessera::kernel
