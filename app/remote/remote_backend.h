#pragma once
// The remote backend: a KernelBackend whose build and run are done by a worker (`tessera-cli serve`) over one
// WebSocket connection (link.h), and the connector that hands such backends to the core
// (runtime/execute/remote.h). Call installRemoteConnector() once at a program's start.
#include <memory>

#include "runtime/execute/remote.h"

namespace tessera::remote {

std::shared_ptr<execute::RemoteConnector> makeRemoteConnector();
// setRemoteConnector(makeRemoteConnector()).
void installRemoteConnector();

}  // namespace tessera::remote
