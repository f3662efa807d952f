#include <cstdio>

#include "app/cli/commands.h"
#include "ir/error.h"
#include "runtime/execute/remote.h"

namespace tessera::cli {

BackendChoice chooseBackend(const std::string& name) {
  BackendChoice c;
  c.remote = execute::remoteAddress(name);
  if (c.remote.empty()) {
    c.kind = execute::parseBackend(name);
    return c;
  }
  const execute::WorkerInfo w = execute::remoteConnector()->describe(c.remote);
  c.kind = w.kind;
  std::fprintf(stderr, "remote: %s runs %s on %s (%.1f ms to connect)\n", c.remote.c_str(),
               w.kind == execute::BackendKind::Cuda ? "cuda" : "cpu", w.device.c_str(), w.latencyMs);
  if (!w.cannotRun.empty()) std::fprintf(stderr, "remote: %s\n", w.cannotRun.c_str());
  return c;
}

CLI::Validator backendValidator(const std::vector<std::string>& local) {
  return CLI::Validator(
      [local](std::string& name) -> std::string {
        for (const auto& l : local)
          if (name == l) return "";
        try {
          if (!execute::remoteAddress(name).empty()) return "";
        } catch (const std::exception& e) {
          return e.what();
        }
        std::string list;
        for (const auto& l : local) list += l + ", ";
        return "unknown backend '" + name + "' (" + list + "or remote:HOST:PORT)";
      },
      "BACKEND");
}

}  // namespace tessera::cli
