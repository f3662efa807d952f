// Pointwise groups: one nest over the output shape.

#include "kernel/lower/lower_context.h"

namespace tessera::kernel {

void lowerPointwise(LowerCtx& ctx) {
  const Shape& domain = ctx.outputs.empty() ? ctx.nodes.back()->output(0)->shape() : ctx.outputs.front()->shape();
  std::vector<std::string> loopVars = names("i", domain.size());
  auto body = BlockStmt::make();
  Emitter em(ctx, domain, vars(loopVars), *body);
  storeOutputs(em);
  ctx.k.body = BlockStmt::make({loopNest(loopVars, domain, body)});
}


}  // namespace tessera::kernel
