#pragma once
// What tests of whole runs on the cpu backend share: a driver without tuned schedules, one run of it, and the
// compiled kernel or run report holding a node.
#include <QStandardPaths>
#include <cmath>
#include <QtGlobal>

#include "driver/driver.h"
#include "runtime/reference/interpreter.h"

namespace tessera::testing {

// The cpu backend compiles with the system's C++ compiler: tests that run on it skip without one.
inline bool hasCompiler() {
  return !QStandardPaths::findExecutable("c++").isEmpty() || !QStandardPaths::findExecutable("g++").isEmpty();
}

inline driver::Driver cpuDriver(Graph g) {
  driver::DriverOptions o;
  o.backend = execute::BackendKind::Cpu;
  o.useTuned = false;
  return driver::Driver(std::make_shared<const Graph>(std::move(g)), o);
}

inline execute::RunReport runOnCpu(driver::Driver& d, std::vector<Tensor> inputs, bool verify = true) {
  driver::RunRequest request;
  request.reps = 1;
  request.warmup = 0;
  request.inputs = std::move(inputs);
  request.baseline = false;
  request.verify = verify;
  return d.run(request)->report;
}

// Runs the model on cpu: every kernel generated (none on the host) and ok, every output equal to the reference
// semantics of the model as written, element for element (NaN where it has NaN). (A run verifies its kernels
// against the reference run of the compiled graph, which holds the passes' rewrites themselves: it would not see
// a wrong decomposition.)
inline void runAllGenerated(driver::Driver& d, const std::vector<Tensor>& inputs) {
  execute::RunReport r = runOnCpu(d, inputs);
  for (const auto& k : r.kernels) {
    if (k.onHost()) qFatal("kernel %s runs on the host: %s", k.group.c_str(), k.host.c_str());
    if (k.status != execute::KernelStatus::Ok) qFatal("kernel %s: %s", k.group.c_str(), k.message.c_str());
  }
  std::vector<Tensor> expected = runReference(*d.model(), inputs).outputs;
  for (size_t o = 0; o < expected.size(); ++o) {
    const Tensor& got = r.outputs.at(o);
    if (got.type() != expected[o].type())
      qFatal("output %zu is %s, expected %s", o, got.type().toString().c_str(), expected[o].type().toString().c_str());
    std::vector<double> a = got.toDoubles(), b = expected[o].toDoubles();
    size_t differ = 0;
    for (size_t i = 0; i < a.size(); ++i) differ += a[i] != b[i] && !(std::isnan(a[i]) && std::isnan(b[i]));
    if (differ) qFatal("output %zu: %zu of %zu elements differ from the reference", o, differ, a.size());
  }
}

// The node of the compiled graph (after the passes) with this id, or nullptr.
inline const Node* compiledNode(driver::Driver& d, const std::string& id) {
  for (const Node* n : d.kernels()->model.graph->topoOrder())
    if (n->id() == id) return n;
  return nullptr;
}

inline const execute::CompiledKernel& kernelOf(driver::Driver& d, const std::string& id) {
  for (const auto& k : d.kernels()->model.kernels)
    for (const auto& n : k.spec.nodeIds)
      if (n == id) return k;
  qFatal("no kernel holds node %s", id.c_str());
}

inline const execute::KernelReport& reportOf(const execute::RunReport& r, const std::string& id) {
  for (const auto& k : r.kernels)
    for (const auto& n : k.nodes)
      if (n == id) return k;
  qFatal("no kernel report holds node %s", id.c_str());
}

}  // namespace tessera::testing
