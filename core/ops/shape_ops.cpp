#include "ops/families.h"
#include "ops/registry.h"
namespace tessera {
void registerShapeOps(OpRegistry&) {}
}  // namespace tessera
