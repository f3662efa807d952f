#include "ops/elementwise_parts.h"
#include "ops/families.h"
#include "ops/registry.h"

namespace tessera {

void registerElementwiseOps(OpRegistry& r) {
  registerUnaryOps(r);
  registerBinaryOps(r);
  registerConversionOps(r);
  registerConstantOps(r);
}

}  // namespace tessera
