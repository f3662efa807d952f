#include "codegen/codegen.h"

#include <cctype>

#include "codegen/generator.h"
#include "codegen/thread_registers.h"
#include "ir/error.h"

namespace tessera::codegen {

std::string sanitizeComment(const std::string& text) {
  std::string s;
  for (char c : text)
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '/' || c == ' ') s += c;
  return s;
}

std::string identifier(const std::string& text) {
  std::string s;
  for (char c : text) s += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "t_" + s;
  return s;
}

std::string entryName(const std::string& kernelId) { return "tessera_" + identifier(kernelId); }

std::string nvrtcArch(const GeneratedKernel& g, const std::string& deviceArch) {
  if (!g.archSpecific) return deviceArch;
  if (deviceArch != "sm_90")
    fail("kernel '" + g.kernelId + "' uses wgmma, an instruction of Hopper (sm_90a), and the device is " + deviceArch +
         ": set its gemm parameter wgmma = 0");
  return deviceArch + "a";
}

namespace {
// Static shared memory stops at 48 KiB a block; above it the arrays become slices of one dynamic arena, which
// the backend launches with and opts the function in to (up to the device's limit, kernel::kSharedBytesLimit).
GeneratedKernel generateCudaKernel(const kernel::Kernel& k) {
  constexpr size_t kStaticSharedBytes = 48 * 1024;
  detail::Generator plain(k, Target::Cuda);
  GeneratedKernel out = plain.run();
  if (plain.sharedBytes() <= kStaticSharedBytes) return out;
  return detail::Generator(k, Target::Cuda, /*dynamicShared=*/true).run();
}
}  // namespace

GeneratedKernel generateCuda(const kernel::Kernel& k) {
  if (auto perThread = detail::perThreadRegisters(k)) return generateCudaKernel(*perThread);
  return generateCudaKernel(k);
}
GeneratedKernel generateCpp(const kernel::Kernel& k) { return detail::Generator(k, Target::Cpu).run(); }

}  // namespace tessera::codegen

namespace tessera::codegen {
std::string combineSources(const std::vector<GeneratedKernel>& kernels) {
  std::string prelude, bodies;
  for (const auto& k : kernels) {
    if (k.prelude.size() > prelude.size()) prelude = k.prelude;  // the CUDA prelude with fp16 headers is longer
    bodies += "\n" + k.body;
  }
  return prelude + bodies;
}
}  // namespace tessera::codegen
