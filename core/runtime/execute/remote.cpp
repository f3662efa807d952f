#include "runtime/execute/remote.h"

#include <mutex>

#include "ir/error.h"

namespace tessera::execute {
namespace {

std::mutex& connectorMutex() {
  static std::mutex m;
  return m;
}

std::shared_ptr<RemoteConnector>& connectorSlot() {
  static std::shared_ptr<RemoteConnector> c;
  return c;
}

std::shared_ptr<RemoteConnector> installedConnector() {
  std::lock_guard lock(connectorMutex());
  return connectorSlot();
}

}  // namespace

void setRemoteConnector(std::shared_ptr<RemoteConnector> connector) {
  std::lock_guard lock(connectorMutex());
  connectorSlot() = std::move(connector);
}

std::shared_ptr<RemoteConnector> remoteConnector() {
  std::lock_guard lock(connectorMutex());
  if (!connectorSlot()) fail("remote workers: this program was built without remote support (Qt WebSockets)");
  return connectorSlot();
}

std::string remoteAddress(const std::string& backendName) {
  const std::string prefix = "remote:";
  if (backendName.rfind(prefix, 0) != 0) return "";
  std::string address = backendName.substr(prefix.size());
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size() ||
      address.find_first_not_of("0123456789", colon + 1) != std::string::npos)
    fail("backend '" + backendName + "': a remote backend is remote:HOST:PORT (for example remote:gpu1:7461)");
  return address;
}

namespace detail {

std::unique_ptr<KernelBackend> makeKernelBackend(BackendKind kind, const std::string& arch, const std::string& remote,
                                                 modcache::ModuleCache cache) {
  if (kind == BackendKind::Reference) fail("the reference backend runs no generated kernels (cpu, cuda)");
  if (!remote.empty()) return remoteConnector()->backend(remote, kind);
  if (std::shared_ptr<RemoteConnector> c = installedConnector())
    if (std::unique_ptr<KernelBackend> own = c->isolated(kind, arch)) return own;
  return kind == BackendKind::Cuda ? makeCudaBackend(arch, std::move(cache)) : makeCpuBackend(std::move(cache));
}

}  // namespace detail
}  // namespace tessera::execute
