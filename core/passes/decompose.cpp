#include "passes/decompose.h"

namespace tessera {
namespace {
class DecomposePass : public Pass {
 public:
  std::string name() const override { return "decompose"; }
  std::string summary() const override { return "TODO"; }
  void run(Graph&, PassContext&) override {}
};
}  // namespace
std::unique_ptr<Pass> createDecomposePass() { return std::make_unique<DecomposePass>(); }
}  // namespace tessera
