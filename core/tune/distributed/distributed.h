#pragma once
// Distributed tuning over MPI (`mpirun -np N tessera-cli tune MODEL --distributed`, docs/remote.md): every rank
// loads and compiles the same model; rank 0 plans the tune (tune/tuner.h) and, through TuneOptions::measure,
// splits the candidates of all kernels over the ranks, round-robin, measures its own share, gathers the others'
// timings and concludes as one process would (rank 0 alone writes the tuning cache). A rank whose measuring
// fails (its device lost, or it cannot run kernels) gives its candidates back, and they are measured again by
// the ranks still healthy. Ranks on one host take its GPUs round-robin (CUDA_VISIBLE_DEVICES).
//
// A rank whose process dies (a signal, an exit) is retried the same way when mpirun keeps the job going
// (`--enable-recovery`) and the rank ran on rank 0's host, where rank 0 sees its process gone; without that flag
// OpenMPI ends the whole job. A generated kernel that crashes ends the cpu worker process, not the rank.
#include <functional>
#include <string>
#include <vector>

#include "runtime/execute/compiled_model.h"
#include "runtime/execute/measure.h"
#include "tune/tuner.h"

namespace tessera::tune::distributed {

// Whether this program was built with MPI (TESSERA_MPI).
bool builtWithMpi();

// MPI for the life of the object: initialized (once per process), the rank and the world's size; each rank
// picks its GPU among its host's (before any CUDA call). Throws Error when built without MPI.
class Session {
 public:
  Session();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::string& gpuNote() const { return gpuNote_; }  // "rank 1 uses GPU 1 of 8", or ""
  // False once `rank`'s process is known to be gone: a rank on this host whose process no longer exists. A rank
  // on another host counts as alive.
  bool alive(int rank) const;

 private:
  int rank_ = 0, size_ = 1;
  std::string gpuNote_;
  std::vector<int> localPids_;  // each rank's process id when it runs on this rank's host, else 0
};

// Per-rank progress: (rank, candidates measured, of its share).
using RankProgress = std::function<void(int rank, size_t done, size_t total)>;

// Rank 0: the measurement engine for TuneOptions::measure; `note` gets a line for each rank that failed and
// whose candidates went to the others. Call stopWorkers() once the tune is over (or failed).
decltype(TuneOptions::measure) coordinator(const Session& s, RankProgress progress,
                                           std::function<void(const std::string&)> note);
void stopWorkers(const Session& s);

// Ranks other than 0: measure the shares rank 0 sends (variants of `model`, the template defaults' compiled
// model as Driver::defaultKernels makes it) until it says stop.
void serveRank(const Session& s, const execute::CompiledModel& model, execute::BackendKind backend,
               const RankProgress& progress);

}  // namespace tessera::tune::distributed
