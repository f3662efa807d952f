#pragma once
// The remote backend: a KernelBackend whose build and run are done by a worker (`tessera-cli serve`) over one
// WebSocket connection (link.h), and the connector that hands such backends to the core
// (runtime/execute/remote.h). Call installRemoteConnector() once at a program's start.
#include <memory>

#include "runtime/execute/remote.h"

namespace tessera::remote {

struct ConnectorOptions {
  // Local cuda runs in a worker process of this program's own (own_worker.h): the window's choice, so that a
  // kernel's GPU fault cannot leave it unable to run on the GPU again. tessera-cli runs in-process (it ends
  // after its run anyway).
  bool cudaInWorker = false;
};

std::shared_ptr<execute::RemoteConnector> makeRemoteConnector(ConnectorOptions options = {});
// setRemoteConnector(makeRemoteConnector(options)).
void installRemoteConnector(ConnectorOptions options = {});

}  // namespace tessera::remote
