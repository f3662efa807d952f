#pragma once
// Internal: several C++ modules compiled by one compiler run. Starting the compiler, its front end and the linker
// costs about 140 ms a module whatever the kernel (light_densenet121: 195 modules), so the cpu backend compiles
// the modules the cache lacks in batches: one translation unit holding one prelude and every member's body, each
// member's entry renamed to its tagged entry (kModuleEntry + "_" + a hash of its module source) so that they do
// not collide. Every module is built this way, a lone one as a batch of one, so the symbol a module's image is
// called by follows from its source alone: a cache hit needs nothing else. A batch's image is stored under every
// member's key (an image may hold other modules besides the key's own).
#include <string>
#include <vector>

namespace tessera::execute::detail {

// kModuleEntry + "_" + 16 hex digits of the module source's hash.
std::string taggedEntry(const std::string& moduleSource);

// One unit building the given module sources, each of which starts with `prelude`: the prelude once, then each
// body with kModuleEntry (and its _call and _region) renamed to the module's taggedEntry.
std::string batchSource(const std::string& prelude, const std::vector<const std::string*>& modules);

// The modules to build (indices into `sources`, each source starting with `prelude`) split into batches for
// `threads` compilers at once: at least two batches a thread while there are modules enough, at most
// kMaxBatch modules in one, the larger sources spread first so that batches take about as long. 32: each
// compiler run still costs its start, the prelude and the link (light_densenet121's 195 modules on two cores:
// 17.0 s of g++ in batches of 8, 15.2 in 16, 14.3 in 32).
constexpr size_t kMaxBatch = 32;
std::vector<std::vector<size_t>> formBatches(const std::vector<size_t>& modules, const std::vector<std::string>& sources,
                                             size_t preludeBytes, unsigned threads);

}  // namespace tessera::execute::detail
