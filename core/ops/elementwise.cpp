#include "ops/families.h"
#include "ops/registry.h"
namespace tessera {
void registerElementwiseOps(OpRegistry&) {}
}  // namespace tessera
