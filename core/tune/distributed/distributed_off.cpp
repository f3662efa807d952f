// Built without MPI (TESSERA_MPI off, or no MPI found): --distributed says so.
#include "ir/error.h"
#include "tune/distributed/distributed.h"

namespace tessera::tune::distributed {

bool builtWithMpi() { return false; }

Session::Session() {
  fail("--distributed: this tessera-cli was built without MPI (install libopenmpi-dev and openmpi-bin, and "
       "configure with -DTESSERA_MPI=ON)");
}

Session::~Session() = default;
bool Session::alive(int) const { return true; }

decltype(TuneOptions::measure) coordinator(const Session&, RankProgress, std::function<void(const std::string&)>) { return {}; }
void stopWorkers(const Session&) {}
void serveRank(const Session&, const execute::CompiledModel&, execute::BackendKind, const RankProgress&) {}

}  // namespace tessera::tune::distributed
