#include "ops/families.h"
#include "ops/registry.h"
namespace tessera {
void registerReductionOps(OpRegistry&) {}
}  // namespace tessera
