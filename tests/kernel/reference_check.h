#pragma once
// The oracle check the kernel tests share: interpret a kernel (kernel/interpret.h) on the reference
// interpreter's values of its inputs and compare every output with the reference's.
#include <string>
#include <vector>

#include "kernel/interpret.h"
#include "kernel/printer.h"
#include "runtime/reference/compare.h"
#include "runtime/reference/interpreter.h"

namespace tessera::kernel::fixtures {

// "" when every output of `k` matches `ref` (a reference run of `g` with keepAll), else why not, with the kernel.
inline std::string agreesWithReference(const Graph& g, const Kernel& k, const ReferenceResult& ref) {
  std::vector<const Tensor*> inputs;
  for (const Buffer& b : k.buffers) {
    if (b.role != BufferRole::Input) continue;
    auto it = ref.values.find(b.value);
    const Value* v = g.findValue(b.value);
    inputs.push_back(it != ref.values.end() ? &it->second : v ? v->initializer() : nullptr);
  }
  std::vector<Tensor> out = interpretKernel(k, inputs);
  size_t o = 0;
  for (const Buffer& b : k.buffers) {
    if (b.role != BufferRole::Output) continue;
    Comparison c = compareTensors(out[o++], ref.values.at(b.value));
    if (!c.ok) return k.id + " output " + b.name + " (" + b.value + "): " + c.message + "\n" + printKernel(k);
  }
  return "";
}

// The same on a fresh reference run of `g` with seeded random inputs.
inline std::string agreesWithReference(const Graph& g, const Kernel& k, uint64_t seed = 11) {
  ReferenceOptions opt;
  opt.keepAll = true;
  return agreesWithReference(g, k, runReference(g, randomInputs(g, seed), opt));
}

// Sweeps over a template's whole space interpret every scheduled point in Release. Under AddressSanitizer the
// interpreter is about 20x slower (test_kernel_gemm's mma sweep ran past QtTest's 300 s limit in CI), so
// they interpret every fourth point there; every point is still scheduled, so refusals are all checked.
inline bool interpretedInSweep(int scheduledIndex) {
#ifdef __SANITIZE_ADDRESS__
  return scheduledIndex % 4 == 0;
#else
  (void)scheduledIndex;
  return true;
#endif
}

}  // namespace tessera::kernel::fixtures
