#pragma once
// What tests of whole runs on the cpu backend share: a driver without tuned schedules, one run of it, and the
// compiled kernel or run report holding a node.
#include <QtGlobal>

#include "driver/driver.h"

namespace tessera::testing {

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
