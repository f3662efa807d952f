// Pointwise groups: one nest over the output shape.

#include "kernel/lower/lower_context.h"

namespace tessera::kernel {

// The nest runs over the output of highest rank: outputs of lower rank are the same elements without its
// leading 1s (fusion joins [7,3] and [1,7,3]; storeOutputs indexes them by the trailing loops).
void lowerPointwise(LowerCtx& ctx) {
  const Value* widest = nullptr;
  for (const Value* v : ctx.outputs)
    if (!widest || v->shape().size() > widest->shape().size()) widest = v;
  const Shape& domain = widest ? widest->shape() : ctx.nodes.back()->output(0)->shape();
  std::vector<std::string> loopVars = names("i", domain.size());
  auto body = BlockStmt::make();
  Emitter em(ctx, domain, vars(loopVars), *body);
  storeOutputs(em);
  ctx.k.body = BlockStmt::make({loopNest(loopVars, domain, body)});
}


}  // namespace tessera::kernel
