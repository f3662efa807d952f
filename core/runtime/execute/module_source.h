#pragma once
// Internal: the source a kernel's module is built from. Kernels of one model often differ only in their entry's
// name and their provenance comments (resnet50's repeated blocks: 59 kernels, 34 distinct), so the backends build
// the generated source with its comments blanked (newlines kept, so compiler messages keep their line numbers)
// and its entry renamed to kModuleEntry: kernels with the same text share one compile, one module and one cache
// entry. The source shown to people (RunReport::generated) is the generated one.
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "runtime/execute/backend.h"

namespace tessera::execute::detail {

constexpr const char* kModuleEntry = "tsr_module_entry";

// Every whole-identifier `name`, and `name` as the prefix of name_call and name_region (the CPU wrapper and its
// marker, codegen's callWrapper), becomes `to`.
std::string renamed(const std::string& text, const std::string& name, const std::string& to);

// `k.source` without comments, k.entry (and k.entry + "_call") renamed to kModuleEntry (+ "_call").
std::string moduleSource(const codegen::GeneratedKernel& k);
// The start of moduleSource(k) that is its prelude (k.prelude without comments).
std::string modulePrelude(const codegen::GeneratedKernel& k);

constexpr size_t kNoModule = size_t(-1);

// Which kernel builds each kernel's module: the first with the same module source (itself when it is the
// first; kNoModule for a null entry). `sources` gets every kernel's module source (with a test's fault, when
// $TESSERA_TEST_FAULT asks for one: fault_hook.h).
std::vector<size_t> moduleOwners(const std::vector<const codegen::GeneratedKernel*>& kernels, codegen::Target target,
                                 std::vector<std::string>& sources);

// For each kernel whose module another kernel built: that kernel's build, with no compile time of its own.
void shareBuilds(const std::vector<size_t>& owners, std::vector<KernelBuild>& builds);

}  // namespace tessera::execute::detail
