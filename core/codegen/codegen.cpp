#include "codegen/codegen.h"

#include <cctype>

#include "codegen/generator.h"
#include "codegen/thread_registers.h"

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

GeneratedKernel generateCuda(const kernel::Kernel& k) {
  if (auto perThread = detail::perThreadRegisters(k)) return detail::Generator(*perThread, Target::Cuda).run();
  return detail::Generator(k, Target::Cuda).run();
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
