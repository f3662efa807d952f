#pragma once
// Running one case: compile it with its overrides, schedule every kernel with its template parameters, run it on
// a backend and check every kernel and output against the reference interpreter (the executor's own check).
// evaluateIsolated does it in a child process, so a crash or a hang of generated code is a verdict too.
#include <string>

#include "fuzz_case.h"
#include "runtime/execute/executor.h"

namespace tessera::fuzz {

// In this process. Never throws for a case: what goes wrong is the verdict.
Verdict evaluateCase(const FuzzCase& c, execute::BackendKind backend);
// In a forked child that is killed after `timeoutSeconds`; its death by a signal is Outcome::Crash.
Verdict evaluateIsolated(const FuzzCase& c, execute::BackendKind backend, double timeoutSeconds);

}  // namespace tessera::fuzz
