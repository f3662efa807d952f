#include "ops/families.h"
#include "ops/registry.h"
namespace tessera {
void registerNormalizationOps(OpRegistry&) {}
}  // namespace tessera
