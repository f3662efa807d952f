#include "runtime/execute/memory_limit.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "ir/error.h"
#include "runtime/execute/arena.h"

namespace tessera::execute {

namespace {

uint64_t allValueBytes(const Graph& g) {
  uint64_t total = 0;
  for (const Value* v : g.values()) total += uint64_t(numElements(v->shape())) * dtypeSize(v->dtype());
  return total;
}

// The largest kernel's parameters, as the cpu backend lays them out in the worker's region for one kernel's run.
uint64_t kernelRegionBytes(const CompiledModel& m) {
  uint64_t most = 0;
  for (const CompiledKernel& ck : m.kernels) {
    if (ck.onHost()) continue;  // a host group runs in this process, not in the worker
    uint64_t bytes = 64 * 4;  // the error record
    for (const auto& b : ck.kernel.buffers)
      if (b.role != kernel::BufferRole::Temp) bytes += (std::max<uint64_t>(detail::bufferBytes(b), 1) + 63) / 64 * 64;
    most = std::max(most, bytes);
  }
  return most;
}

}  // namespace

std::string HostMemoryEstimate::parts() const {
  std::string s = std::string(baselineArena ? "baseline arena " : "arena ") + formatBytes(arena);
  if (reference) s += " + reference " + formatBytes(reference);
  if (kept) s += " + kept values " + formatBytes(kept);
  if (worker) s += " + cpu worker " + formatBytes(worker);
  return s;
}

HostMemoryEstimate estimateHostMemory(const CompiledModel& m, BackendKind backend, const RunOptions& o, bool baseline) {
  HostMemoryEstimate e;
  const Graph& g = *m.graph;
  e.arena = detail::arenaBytes(g, m.kernels);
  if (baseline) {
    uint64_t unfused = detail::arenaBytes(g, {});  // one kernel per node: the memory plan's buffers
    e.baselineArena = unfused > e.arena;
    e.arena = std::max(e.arena, unfused);
  }
  if (o.verify) e.reference = allValueBytes(g);
  if (o.keepValues) e.kept = allValueBytes(g);
  // The whole run (executor.cpp, timeWholeRun) puts every buffer the kernels touch in the region at once: about
  // the arena, rounded up to 64 bytes a buffer.
  if (backend == BackendKind::Cpu) e.worker = std::max(kernelRegionBytes(m), e.arena + 64 * uint64_t(m.kernels.size() + 1));
  return e;
}

void checkHostMemory(const CompiledModel& m, BackendKind backend, const RunOptions& o, bool baseline) {
  const MemoryLimit& limit = o.memoryLimit;
  if (limit.hostBytes == 0) return;
  HostMemoryEstimate e = estimateHostMemory(m, backend, o, baseline);
  if (e.total() <= limit.hostBytes) return;
  fail("run needs " + formatBytes(e.total()) + " of host memory (" + e.parts() + "); the limit is " +
       formatBytes(limit.hostBytes) + (limit.source.empty() ? "" : " (" + limit.source + ")"));
}

void checkTuneHostMemory(const CompiledModel& m, BackendKind backend, const MemoryLimit& limit) {
  RunOptions o;
  o.keepValues = true;
  o.memoryLimit = limit;
  checkHostMemory(m, backend, o, false);
}

uint64_t deviceBytesNeeded(const CompiledModel& m, const std::vector<const codegen::GeneratedKernel*>& kernels) {
  uint64_t total = detail::arenaBytes(*m.graph, m.kernels);
  for (const codegen::GeneratedKernel* k : kernels)
    if (k)
      for (const auto& w : k->scratch) total += std::max<size_t>(w.bytes, 1);
  return total;
}

std::string formatBytes(uint64_t bytes) {
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  double v = double(bytes) / 1024;
  int u = 0;
  for (; v >= 1024 && u < 3; ++u) v /= 1024;
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", v, units[u]);
  return text;
}

uint64_t parseByteSize(const std::string& text) {
  auto bad = [&] { fail("'" + text + "' is not a memory size (e.g. 16G, 512M, 1.5GiB, 4096)"); };
  size_t end = 0;
  double v = 0;
  try {
    v = std::stod(text, &end);
  } catch (const std::exception&) {
    bad();
  }
  std::string unit;
  for (size_t i = end; i < text.size(); ++i)
    if (!std::isspace(static_cast<unsigned char>(text[i]))) unit += char(std::tolower(static_cast<unsigned char>(text[i])));
  if (unit.size() > 1 && unit.back() == 'b') unit.pop_back();  // "gb", "gib" -> "g", "gi"
  if (unit.size() > 1 && unit.back() == 'i') unit.pop_back();
  const std::string scales = "kmgt";
  double scale = 1;
  if (!unit.empty()) {
    if (unit.size() != 1 || (unit != "b" && scales.find(unit[0]) == std::string::npos)) bad();
    if (unit != "b") scale = std::pow(1024.0, double(scales.find(unit[0]) + 1));
  }
  if (!std::isfinite(v) || v < 0 || v * scale > 1.8e19) bad();
  return uint64_t(std::llround(v * scale));
}

}  // namespace tessera::execute
