// The MPI side of a distributed tune: the session, point-to-point messages of JSON text, rank 0's rounds and the
// other ranks' loop.
#include <mpi.h>

#include <algorithm>
#include <cstdlib>
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
  gpuNote_ = pickGpu(rank_, localRank());
}

Session::~Session() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (gInitializedHere && !finalized) MPI_Finalize();
}

void stopWorkers(const Session& s) {
  for (int r = 1; r < s.size(); ++r) sendText(r, kTagShare, nlohmann::json{{"stop", true}}.dump());
}

void serveRank(const Session& s, const execute::CompiledModel& model, execute::BackendKind backend,
               const RankProgress& progress) {
  for (;;) {
    const nlohmann::json j = nlohmann::json::parse(receiveText(0, kTagShare));
    if (j.contains("stop")) return;
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
std::vector<size_t> measureRound(const execute::CompiledModel& m, const std::vector<execute::KernelVariant>& variants,
                          const std::vector<kernel::Trace>& traces, const std::vector<size_t>& pending,
                          std::vector<int>& healthy, execute::BackendKind backend, const execute::MeasureOptions& o,
                          const RankProgress& progress, const std::function<void(const std::string&)>& note,
                          execute::MeasureReport& out) {
  std::map<int, std::vector<size_t>> shares;
  for (size_t i = 0; i < pending.size(); ++i) shares[healthy[i % healthy.size()]].push_back(pending[i]);
  for (int r : healthy) {
    if (r == 0) continue;
    std::vector<ShareItem> items;
    for (size_t v : shares[r]) items.push_back({v, variants[v].kernel, traces.at(v)});
    sendText(r, kTagShare, shareToJson(items, o).dump());
  }
  std::map<int, ShareResult> results;
  if (std::find(healthy.begin(), healthy.end(), 0) != healthy.end()) {
    std::vector<execute::KernelVariant> own;
    for (size_t v : shares[0]) own.push_back(variants[v]);
    results[0] = measureShare(0, m, own, shares[0], backend, o, progress);
  }
  for (int r : healthy)
    if (r != 0) results[r] = resultFromJson(nlohmann::json::parse(receiveText(r, kTagResult)));
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
    while (!pending.empty() && !healthy.empty())
      pending = measureRound(m, variants, traces, pending, healthy, backend, o, progress, note, out);
    for (size_t v : pending) out.timings[v].message = "no rank could measure it";
    out.device = std::to_string(s.size()) + " ranks";
    return out;
  };
}

}  // namespace tessera::tune::distributed
