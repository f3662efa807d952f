#pragma once
// Internal, for tests only: $TESSERA_TEST_FAULT = "<kernel id>=<fault>" (or "*=<fault>" for every kernel) makes
// that kernel's module fault on purpose, so tests can show a crash ends its run and nothing else. Faults:
// null-write (a store through a null pointer: SIGSEGV on the CPU, an illegal address on the GPU), abort (SIGABRT
// on the CPU, a trap on the GPU) and loop (never returns: cancel or a time limit must end it). The variable is read
// when a module's source is made, so a faulty module never shares a cache entry with a sound one. Unset, nothing
// changes.
#include <string>

#include "codegen/codegen.h"

namespace tessera::execute::detail {

// `moduleSource` (kernel k's, for `target`) with the fault $TESSERA_TEST_FAULT asks of k at the top of its
// entry; unchanged when it asks none. Throws Error for a fault it does not know.
std::string withTestFault(std::string moduleSource, const codegen::GeneratedKernel& k, codegen::Target target);

}  // namespace tessera::execute::detail
