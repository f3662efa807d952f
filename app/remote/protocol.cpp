#include "app/remote/protocol.h"

#include <cstring>

#include "ir/error.h"

namespace tessera::remote {

std::string encodeMessage(const Message& m) {
  const std::string header = m.header.dump();
  const uint32_t n = uint32_t(header.size());
  std::string out(sizeof n, '\0');
  std::memcpy(out.data(), &n, sizeof n);
  out += header;
  out += m.payload;
  return out;
}

Message decodeMessage(const std::string& bytes) {
  uint32_t n = 0;
  if (bytes.size() < sizeof n) fail("remote: a message of " + std::to_string(bytes.size()) + " bytes has no header");
  std::memcpy(&n, bytes.data(), sizeof n);
  if (n > bytes.size() - sizeof n)
    fail("remote: a message's header of " + std::to_string(n) + " bytes is past its end (" + std::to_string(bytes.size()) + " bytes)");
  Message m;
  try {
    m.header = nlohmann::json::parse(bytes.substr(sizeof n, n));
  } catch (const std::exception& e) {
    fail(std::string("remote: a message's header is not JSON: ") + e.what());
  }
  if (!m.header.is_object()) fail("remote: a message's header is not a JSON object");
  m.payload = bytes.substr(sizeof n + n);
  return m;
}

Message errorReply(const std::string& error) { return {{{"ok", false}, {"error", error}}, {}}; }

nlohmann::json kernelToJson(const codegen::GeneratedKernel& k) {
  nlohmann::json scratch = nlohmann::json::array(), maps = nlohmann::json::array();
  for (const auto& s : k.scratch) scratch.push_back({{"name", s.name}, {"bytes", s.bytes}});
  for (const auto& t : k.tensorMaps)
    maps.push_back({{"param", t.param}, {"dims", t.dims}, {"box", t.box}, {"element_bytes", t.elementBytes}, {"bf16", t.bf16}});
  return {{"kernel_id", k.kernelId},
          {"entry", k.entry},
          {"source", k.source},
          {"grid", {k.launch.grid[0], k.launch.grid[1], k.launch.grid[2]}},
          {"block", {k.launch.block[0], k.launch.block[1], k.launch.block[2]}},
          {"params", k.params},
          {"scratch", scratch},
          {"phases", k.phases},
          {"precision", k.precision},
          {"dynamic_shared_bytes", k.dynamicSharedBytes},
          {"arch_specific", k.archSpecific},
          {"tensor_maps", maps}};
}

codegen::GeneratedKernel kernelFromJson(const nlohmann::json& j) {
  codegen::GeneratedKernel k;
  try {
    k.kernelId = j.at("kernel_id").get<std::string>();
    k.entry = j.at("entry").get<std::string>();
    k.source = j.at("source").get<std::string>();
    for (int d = 0; d < 3; ++d) {
      k.launch.grid[d] = j.at("grid").at(d).get<unsigned>();
      k.launch.block[d] = j.at("block").at(d).get<unsigned>();
    }
    k.params = j.at("params").get<std::vector<std::string>>();
    for (const auto& s : j.at("scratch")) k.scratch.push_back({s.at("name").get<std::string>(), s.at("bytes").get<size_t>()});
    k.phases = j.at("phases").get<int>();
    k.precision = j.at("precision").get<std::string>();
    k.dynamicSharedBytes = j.at("dynamic_shared_bytes").get<size_t>();
    k.archSpecific = j.at("arch_specific").get<bool>();
    for (const auto& t : j.at("tensor_maps"))
      k.tensorMaps.push_back({t.at("param").get<size_t>(), t.at("dims").get<std::vector<uint64_t>>(),
                              t.at("box").get<std::vector<uint32_t>>(), t.at("element_bytes").get<int>(),
                              t.at("bf16").get<bool>()});
  } catch (const nlohmann::json::exception& e) {
    fail(std::string("remote: a build request's kernel: ") + e.what());
  }
  if (k.phases < 1 || k.phases > 1024) fail("remote: kernel '" + k.kernelId + "': phases " + std::to_string(k.phases) + " out of range");
  for (const auto& t : k.tensorMaps)
    if (t.param >= k.params.size()) fail("remote: kernel '" + k.kernelId + "': a tensor map names parameter " + std::to_string(t.param));
  return k;
}

nlohmann::json buildToJson(const execute::detail::KernelBuild& b) {
  return {{"error", b.error}, {"cached", b.cached}, {"compile_ms", b.compileMs}, {"warning", b.warning}};
}

execute::detail::KernelBuild buildFromJson(const nlohmann::json& j) {
  execute::detail::KernelBuild b;
  b.error = j.value("error", std::string());
  b.cached = j.value("cached", false);
  b.compileMs = j.value("compile_ms", 0.0);
  b.warning = j.value("warning", std::string());
  return b;
}

}  // namespace tessera::remote
