#include "runtime/execute/fault_hook.h"

#include <cstdlib>

#include "ir/error.h"
#include "runtime/execute/module_source.h"

namespace tessera::execute::detail {

namespace {

// The fault asked of kernel `id`, or "".
std::string askedFault(const std::string& id) {
  const char* spec = std::getenv("TESSERA_TEST_FAULT");
  if (!spec || !*spec) return "";
  std::string s = spec;
  size_t eq = s.find('=');
  if (eq == std::string::npos) fail("$TESSERA_TEST_FAULT must be <kernel id>=<fault>, not '" + s + "'");
  std::string who = s.substr(0, eq);
  return who == "*" || who == id ? s.substr(eq + 1) : "";
}

// A volatile null pointer: the compiler cannot see it is null, so the store is a real one, not a trap it put in.
std::string statement(const std::string& fault, codegen::Target target) {
  bool gpu = target == codegen::Target::Cuda;
  if (fault == "null-write") return "{ volatile int* volatile tsr_fault_target = nullptr; *tsr_fault_target = 1; }";
  if (fault == "abort") return gpu ? "__trap();" : "__builtin_abort();";
  if (fault == "loop") return "{ volatile int tsr_spin = 1; while (tsr_spin) {} }";
  fail("$TESSERA_TEST_FAULT: unknown fault '" + fault + "' (null-write, abort, loop)");
}

}  // namespace

std::string withTestFault(std::string source, const codegen::GeneratedKernel& k, codegen::Target target) {
  std::string fault = askedFault(k.kernelId);
  if (fault.empty()) return source;
  std::string entry = std::string(kModuleEntry) + (target == codegen::Target::Cuda ? "(" : "_call(");
  size_t at = source.find(entry);
  size_t brace = at == std::string::npos ? at : source.find('{', at);
  if (brace == std::string::npos) fail("$TESSERA_TEST_FAULT: kernel " + k.kernelId + " has no entry to put a fault in");
  if (target != codegen::Target::Cuda) return source.insert(brace + 1, " " + statement(fault, target) + " ");
  // On the GPU the fault hides behind a global the cubin keeps, so a stand-in driver can see the module is faulty.
  source.insert(brace + 1, " if (tsr_test_fault_marker) { " + statement(fault, target) + " } ");
  return "extern \"C\" __device__ int tsr_test_fault_marker = 1;\n" + source;
}

}  // namespace tessera::execute::detail
