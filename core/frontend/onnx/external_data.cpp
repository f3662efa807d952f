// External tensor data (TensorProto.data_location = EXTERNAL): the bytes of a tensor kept in a file beside the
// model, as exporters write for models over protobuf's 2 GB. The location is untrusted model data: it must be a
// relative path that stays inside the model's folder once resolved (symbolic links included), and the bytes it
// names are checked against the file's size before anything is read.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include "frontend/onnx/onnx_proto.h"
#include "ir/error.h"

namespace tessera::onnxio {
namespace {

namespace fs = std::filesystem;

struct ExternalRef {
  std::string location;
  int64_t offset = 0, length = -1;  // -1: the tensor's own size
};

int64_t nonNegative(const std::string& value, const std::string& key, const std::string& what) {
  size_t used = 0;
  int64_t v = -1;
  try {
    v = std::stoll(value, &used);
  } catch (const std::exception&) {
  }
  if (value.empty() || used != value.size() || v < 0)
    fail(what + ": external data " + key + " '" + value + "' is not a non-negative integer");
  return v;
}

ExternalRef parseRef(const onnx::TensorProto& p, const std::string& what) {
  ExternalRef r;
  for (const auto& kv : p.external_data()) {
    if (kv.key() == "location") r.location = kv.value();
    else if (kv.key() == "offset") r.offset = nonNegative(kv.value(), "offset", what);
    else if (kv.key() == "length") r.length = nonNegative(kv.value(), "length", what);
  }
  if (r.location.empty()) fail(what + ": external data has no location");
  return r;
}

// The file `location` names, refused when it is absolute or leaves `folder` (through '..' or a link).
fs::path resolveInside(const std::string& folder, const std::string& location, const std::string& what) {
  const fs::path loc(location);
  if (loc.is_absolute() || loc.has_root_name())
    fail(what + ": external data location '" + location + "' is absolute; it must be relative to the model's folder");
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(fs::absolute(folder), ec);
  const fs::path file = fs::weakly_canonical(base / loc, ec);
  if (ec) fail(what + ": external data location '" + location + "': " + ec.message());
  auto [b, f] = std::mismatch(base.begin(), base.end(), file.begin(), file.end());
  if (b != base.end()) fail(what + ": external data location '" + location + "' leaves the model's folder " + base.string());
  return file;
}

// Tensors this large are mapped from their file rather than read: opening a model of many gigabytes then costs
// address space, not a copy, and pages are read as passes and kernels touch them.
constexpr int64_t kMapBytes = int64_t(64) << 20;

// `bytes` bytes of `file` from `offset`, mapped privately (writes copy the pages they touch, the file never
// changes); null when the system cannot map it (the caller reads it instead).
std::optional<Tensor> mapTensor(const fs::path& file, int64_t offset, DType dt, const Shape& shape, int64_t bytes) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  const int64_t page = ::sysconf(_SC_PAGESIZE);
  const int64_t start = offset / page * page;  // mmap wants a page-aligned offset
  const size_t length = size_t(offset - start + bytes);
  void* base = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, off_t(start));
  ::close(fd);  // the mapping holds the file
  if (base == MAP_FAILED) return std::nullopt;
  std::shared_ptr<void> owner(base, [length](void* p) { ::munmap(p, length); });
  std::span<std::byte> span(static_cast<std::byte*>(base) + (offset - start), size_t(bytes));
  return Tensor::fromMapping(TensorType{dt, shape}, span, std::move(owner));
}

}  // namespace

Tensor externalTensor(const onnx::TensorProto& p, DType dt, const Shape& shape, const std::string& folder,
                      const std::string& what) {
  if (folder.empty()) fail(what + ": external data needs the model's folder (open the model from its file)");
  if (p.has_raw_data() || p.float_data_size() || p.int32_data_size() || p.int64_data_size() || p.double_data_size())
    fail(what + ": has both external data and data in the file");
  const ExternalRef ref = parseRef(p, what);
  const fs::path file = resolveInside(folder, ref.location, what);
  const int64_t bytes = fileByteSize(TensorType{dt, shape});  // sub-byte dtypes are packed, as in raw_data
  if (ref.length >= 0 && ref.length != bytes)
    fail(what + ": external data length " + std::to_string(ref.length) + " but " + TensorType{dt, shape}.toString() +
         " needs " + std::to_string(bytes) + " bytes");
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  if (ec) fail(what + ": external data file " + file.string() + ": " + ec.message());
  if (ref.offset > int64_t(size) || bytes > int64_t(size) - ref.offset)
    fail(what + ": external data file " + file.string() + " holds " + std::to_string(size) + " bytes; " +
         std::to_string(bytes) + " from offset " + std::to_string(ref.offset) + " are past its end");
  // Mapped when large, of whole bytes (packed and bool values are rewritten) and aligned for its element type.
  if (bytes >= kMapBytes && !packedBits(dt) && dt != DType::Bool && ref.offset % int64_t(dtypeSize(dt)) == 0)
    if (std::optional<Tensor> t = mapTensor(file, ref.offset, dt, shape, bytes)) return *t;
  std::ifstream in(file, std::ios::binary);
  in.seekg(ref.offset);
  if (packedBits(dt)) {
    std::string packed(size_t(bytes), '\0');
    if (!in || !in.read(packed.data(), bytes)) fail(what + ": cannot read external data file " + file.string());
    return unpackValues(packed, dt, shape);
  }
  Tensor t(dt, shape);
  if (!in || !in.read(reinterpret_cast<char*>(t.mutableBytes().data()), bytes))
    fail(what + ": cannot read external data file " + file.string());
  if (dt == DType::Bool)  // one canonical byte per bool, as for raw_data
    for (std::byte& b : t.mutableBytes()) b = std::byte(b != std::byte(0));
  return t;
}

}  // namespace tessera::onnxio
