// The MPI side of a distributed tune: the session, point-to-point messages of JSON text, rank 0's rounds and the
// other ranks' loop.
#include <mpi.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <filesystem>
#include <map>
#include <numeric>
#include <sstream>

#include "ir/error.h"
#include "tune/distributed/distributed.h"
#include "tune/distributed/shares.h"

namespace tessera::tune::distributed {
namespace {

constexpr int kTagShare = 1, kTagResult = 2;

void sendText(int to, int tag, const std::string& s) {
  MPI_Send(s.data(), int(s.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD);
}

// Rank 0's send to a rank that may die: a large message waits for the receiver, so it is sent without blocking
// and abandoned when the rank's process goes. False when it did.
bool sendWhileAlive(const Session& session, int to, int tag, const std::string& s) {
  MPI_Request request;
  MPI_Isend(s.data(), int(s.size()), MPI_CHAR, to, tag, MPI_COMM_WORLD, &request);
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return true;
    if (!session.alive(to)) return false;  // the request is left behind: its receiver will never take it
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::string receiveText(int from, int tag) {
  MPI_Status status;
  MPI_Probe(from, tag, MPI_COMM_WORLD, &status);
  int n = 0;
  MPI_Get_count(&status, MPI_CHAR, &n);
  std::string s(size_t(n), '\0');
  MPI_Recv(s.data(), n, MPI_CHAR, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return s;
}

// This rank's place among the ranks of its host.
int localRank() {
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  int r = 0;
  MPI_Comm_rank(local, &r);
  MPI_Comm_free(&local);
  return r;
}

// One GPU per rank, round-robin over the host's (those CUDA_VISIBLE_DEVICES lists, else the driver's), chosen
// before any CUDA call of this process.
std::string pickGpu(int rank, int local) {
  std::vector<std::string> gpus;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"); v && *v) {
    std::stringstream list(v);
    for (std::string id; std::getline(list, id, ',');) gpus.push_back(id);
  } else {
    std::error_code ec;
    size_t n = 0;
    for (auto it = std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec); !ec && it != std::filesystem::directory_iterator(); ++it) ++n;
    for (size_t i = 0; i < n; ++i) gpus.push_back(std::to_string(i));
  }
  if (gpus.empty()) return "";
  const std::string& id = gpus[size_t(local) % gpus.size()];
  setenv("CUDA_VISIBLE_DEVICES", id.c_str(), 1);
  return "rank " + std::to_string(rank) + " uses GPU " + id + " (" + std::to_string(gpus.size()) + " on its host)";
}

bool gInitializedHere = false;

// Where a rank runs: its process id and host name, exchanged once so rank 0 can tell a dead process on its host.
struct Place {
  int pid = 0;
  char host[64] = {};
};

// A rank's share measured here; a failure to measure at all is the result's error.
ShareResult measureShare(int rank, const execute::CompiledModel& m, const std::vector<execute::KernelVariant>& variants,
                         std::vector<size_t> batchIndex, execute::BackendKind backend, execute::MeasureOptions o,
                         const RankProgress& progress) {
  ShareResult r;
  r.batchIndex = std::move(batchIndex);
  if (variants.empty()) return r;
  o.progress = [&](size_t done, size_t total) {
    if (progress) progress(rank, done, total);
  };
  try {
    if (const char* f = std::getenv("TESSERA_TEST_RANK_FAILS"); f && std::atoi(f) == rank && rank != 0)
      fail("rank " + std::to_string(rank) + " fails on purpose ($TESSERA_TEST_RANK_FAILS)");
    execute::MeasureReport mr = execute::measureVariants(m, variants, backend, o);
    if (!mr.cannotRun.empty()) fail("rank " + std::to_string(rank) + " cannot run kernels: " + mr.cannotRun);
    r.timings = std::move(mr.timings);
    r.expected = std::move(mr.expected);
  } catch (const Cancelled&) {
    throw;
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

// Puts a rank's timings into the batch's report.
void merge(const ShareResult& r, execute::MeasureReport& out) {
  for (size_t i = 0; i < r.timings.size(); ++i) out.timings.at(r.batchIndex.at(i)) = r.timings[i];
  for (size_t k = 0; k < r.expected.size() && k < out.expected.size(); ++k)
    if (out.expected[k] == execute::Expected::Nothing) out.expected[k] = r.expected[k];
}

}  // namespace

bool builtWithMpi() { return true; }

Session::Session() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    gInitializedHere = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);  // a send to a dead rank must not end this one
  gpuNote_ = pickGpu(rank_, localRank());
  Place mine;
  mine.pid = int(getpid());
  gethostname(mine.host, sizeof mine.host - 1);
  std::vector<Place> all(static_cast<size_t>(size_));
  MPI_Allgather(&mine, int(sizeof mine), MPI_BYTE, all.data(), int(sizeof mine), MPI_BYTE, MPI_COMM_WORLD);
  for (const Place& p : all) localPids_.push_back(std::strncmp(p.host, mine.host, sizeof mine.host) == 0 ? p.pid : 0);
}

bool Session::alive(int rank) const {
  if (rank < 0 || rank >= size_ || localPids_[size_t(rank)] == 0) return true;
  return kill(pid_t(localPids_[size_t(rank)]), 0) == 0 || errno != ESRCH;
}

Session::~Session() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (gInitializedHere && !finalized) MPI_Finalize();
}

void stopWorkers(const Session& s) {
  for (int r = 1; r < s.size(); ++r) sendWhileAlive(s, r, kTagShare, nlohmann::json{{"stop", true}}.dump());
}

void serveRank(const Session& s, const execute::CompiledModel& model, execute::BackendKind backend,
               const RankProgress& progress) {
  for (;;) {
    const nlohmann::json j = nlohmann::json::parse(receiveText(0, kTagShare));
    if (j.contains("stop")) return;
    if (const char* d = std::getenv("TESSERA_TEST_RANK_DIES"); d && std::atoi(d) == s.rank()) raise(SIGKILL);
    ShareResult r;
    try {
      execute::MeasureOptions o;
      std::vector<size_t> batchIndex;
      std::vector<execute::KernelVariant> variants = shareFromJson(j, model, batchIndex, o);
      r = measureShare(s.rank(), model, variants, std::move(batchIndex), backend, o, progress);
    } catch (const std::exception& e) {
      r.error = e.what();
    }
    sendText(0, kTagResult, resultToJson(r).dump());
  }
}

namespace {

// One round: the pending variants split over the healthy ranks, measured, merged; returns those of the ranks
// that failed (which leave `healthy`).
// The results of `ranks`, polled: a rank whose process goes meanwhile gets an error result instead.
std::map<int, ShareResult> gather(const Session& session, std::vector<int> ranks) {
  std::map<int, ShareResult> results;
  while (!ranks.empty()) {
    for (auto it = ranks.begin(); it != ranks.end();) {
      int flag = 0;
      MPI_Iprobe(*it, kTagResult, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      if (flag) {
        results[*it] = resultFromJson(nlohmann::json::parse(receiveText(*it, kTagResult)));
      } else if (!session.alive(*it)) {
        results[*it].error = "its process died";
      } else {
        ++it;
        continue;
      }
      it = ranks.erase(it);
    }
    if (!ranks.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return results;
}

std::vector<size_t> measureRound(const Session& session, const execute::CompiledModel& m,
                                 const std::vector<execute::KernelVariant>& variants,
                                 const std::vector<kernel::Trace>& traces, const std::vector<size_t>& pending,
                                 std::vector<int>& healthy, execute::BackendKind backend,
                                 const execute::MeasureOptions& o, const RankProgress& progress,
                                 const std::function<void(const std::string&)>& note, execute::MeasureReport& out) {
  std::map<int, std::vector<size_t>> shares;
  for (size_t i = 0; i < pending.size(); ++i) shares[healthy[i % healthy.size()]].push_back(pending[i]);
  std::vector<int> sent;
  std::map<int, ShareResult> results;
  for (int r : healthy) {
    if (r == 0) continue;
    std::vector<ShareItem> items;
    for (size_t v : shares[r]) items.push_back({v, variants[v].kernel, traces.at(v)});
    if (sendWhileAlive(session, r, kTagShare, shareToJson(items, o).dump())) sent.push_back(r);
    else results[r].error = "its process died";
  }
  if (std::find(healthy.begin(), healthy.end(), 0) != healthy.end()) {
    std::vector<execute::KernelVariant> own;
    for (size_t v : shares[0]) own.push_back(variants[v]);
    results[0] = measureShare(0, m, own, shares[0], backend, o, progress);
  }
  results.merge(gather(session, sent));
  std::vector<size_t> failed;
  for (auto& [r, result] : results) {
    if (result.error.empty()) {
      merge(result, out);
      continue;
    }
    if (note) note("rank " + std::to_string(r) + " could not measure (" + result.error + "); its " +
                   std::to_string(shares[r].size()) + " candidates go to the other ranks");
    failed.insert(failed.end(), shares[r].begin(), shares[r].end());
    healthy.erase(std::find(healthy.begin(), healthy.end(), r));
  }
  return failed;
}

}  // namespace

decltype(TuneOptions::measure) coordinator(const Session& s, RankProgress progress,
                                           std::function<void(const std::string&)> note) {
  return [&s, progress, note](const execute::CompiledModel& m, const std::vector<execute::KernelVariant>& variants,
                              const std::vector<kernel::Trace>& traces, execute::BackendKind backend,
                              const execute::MeasureOptions& o) {
    execute::MeasureReport out;
    out.timings.resize(variants.size());
    out.expected.assign(m.kernels.size(), execute::Expected::Nothing);
    std::vector<size_t> pending(variants.size());
    std::iota(pending.begin(), pending.end(), size_t(0));
    std::vector<int> healthy(size_t(s.size()));
    std::iota(healthy.begin(), healthy.end(), 0);
    std::erase_if(healthy, [&s](int r) { return !s.alive(r); });  // gone in an earlier batch: said then
    while (!pending.empty() && !healthy.empty())
      pending = measureRound(s, m, variants, traces, pending, healthy, backend, o, progress, note, out);
    for (size_t v : pending) out.timings[v].message = "no rank could measure it";
    out.device = std::to_string(s.size()) + " ranks";
    return out;
  };
}

}  // namespace tessera::tune::distributed
