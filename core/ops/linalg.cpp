#include "ops/families.h"
#include "ops/registry.h"
namespace tessera {
void registerLinalgOps(OpRegistry&) {}
}  // namespace tessera
