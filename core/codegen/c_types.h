#pragma once
// Internal: C types and expressions of the kernel IR for either target.
#include <map>
#include <set>
#include <string>

#include "codegen/codegen.h"

namespace tessera::codegen::detail {

// How a buffer element of `t` is stored in memory (f16 as __half on the GPU, uint16_t bits on the CPU).
std::string storageType(DType t, Target target);
// The type locals and register buffers of `t` compute in: 16-bit floats and float8 compute in float.
std::string computeType(DType t, Target target);
std::string indexType(Target target);  // int64_t / long long
bool isHalf(DType t);                  // f16 or bf16
// The float8 format code of the prelude's tsr_f8_decode/tsr_f8_encode (e4m3fn 0, e4m3fnuz 1, e5m2 2,
// e5m2fnuz 3, e8m0 4); -1 for every other type.
int float8Code(DType t);

struct BufferInfo {
  DType dtype;
  bool stored = true;  // held in storage type (global, shared); register buffers hold the compute type
  std::vector<int64_t> shape;
};

// Looks buffers up by name for the expression printer.
class ExprPrinter {
 public:
  ExprPrinter(const kernel::Kernel& k, Target target) : k_(k), target_(target) {}
  std::string print(const kernel::Expr& e) const;
  // The element offset of buffer[indices] in its storage, as C text: row-major, or for a swizzled buffer
  // (Buffer::swizzleBytes) its place in the swizzled atoms.
  std::string linear(const std::string& buffer, const std::vector<kernel::Expr>& indices) const;
  // A swizzled buffer's offset before the XOR: what a tensor-core descriptor's start address points at (the
  // hardware applies the XOR itself, from the address bits).
  std::string atomOffset(const std::string& buffer, const std::vector<kernel::Expr>& indices) const;
  // A value of compute type converted for storing into `buffer`.
  std::string toStorage(const std::string& buffer, const std::string& value) const;
  std::string fromStorage(const std::string& buffer, const std::string& value) const;
  bool storedAsStorage(const std::string& buffer) const;
  const kernel::Buffer& buffer(const std::string& name) const;
  Target target() const { return target_; }
  // Loads printed as the given text instead of a memory access, until replaced again (the CUDA vector path
  // reads its lanes from registers it filled with one wide load).
  void setLoadText(std::map<const kernel::ExprNode*, std::string> text) { loadText_ = std::move(text); }
  // CPU: register buffers declared as arrays of f32 vectors (cpu_vector.cpp); an element of one is
  // `name[offset / TSR_VF][offset % TSR_VF]`. `lanes` (cpuVectorLanes) picks the kernel's vector type: 16 the
  // host's width (tsr_vf, TSR_VF, tsr_vload...), 8 or 4 the narrower ones (tsr_vf8, TSR_VF8, tsr_vload8...).
  void setVectorArrays(std::set<std::string> names, int64_t lanes = 16) {
    vectorArrays_ = std::move(names);
    vectorLanes_ = lanes;
  }
  int64_t vectorLanes() const { return vectorLanes_; }
  // `base` ("tsr_vf", "TSR_VF", "tsr_vload", "tsr_vstore", "tsr_vsplat") for the kernel's vector type.
  std::string vectorName(const std::string& base) const { return vectorLanes_ == 16 ? base : base + std::to_string(vectorLanes_); }
  bool isVectorArray(const std::string& buffer) const { return vectorArrays_.count(buffer) != 0; }
  const std::set<std::string>& vectorArrays() const { return vectorArrays_; }
  // The C lvalue of buffer[indices].
  std::string element(const std::string& buffer, const std::vector<kernel::Expr>& indices) const;

 private:
  std::string unary(const kernel::Unary& u) const;
  std::string binary(const kernel::Binary& b) const;
  std::string cast(const kernel::Cast& c) const;
  std::string floatLiteral(double v, DType t) const;
  std::string fn(const std::string& base, DType t) const;  // expf / exp by type
  std::string rowMajor(const kernel::Buffer& b, const std::vector<kernel::Expr>& idx, size_t dims) const;
  std::string swizzled(const kernel::Buffer& b, const std::vector<kernel::Expr>& idx, bool xorPieces) const;
  const kernel::Kernel& k_;
  Target target_;
  std::map<const kernel::ExprNode*, std::string> loadText_;
  std::set<std::string> vectorArrays_;
  int64_t vectorLanes_ = 16;
};

std::string reduceCombine(kernel::ReduceOp op, DType t, Target target, const std::string& a, const std::string& b);
std::string reduceIdentity(kernel::ReduceOp op, DType t, Target target);

}  // namespace tessera::codegen::detail
