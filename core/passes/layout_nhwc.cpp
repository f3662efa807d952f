#include "passes/layout_nhwc.h"

namespace tessera {
namespace {
class LayoutNhwcPass : public Pass {
 public:
  std::string name() const override { return "layout-nhwc"; }
  std::string summary() const override { return "TODO"; }
  void run(Graph&, PassContext&) override {}
};
}  // namespace
std::unique_ptr<Pass> createLayoutNhwcPass() { return std::make_unique<LayoutNhwcPass>(); }
}  // namespace tessera
