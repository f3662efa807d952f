#pragma once
// One WebSocket connection to a worker, used from one thread at a time: connect, greet with the token, then
// request and wait for the reply. The waiting runs a local Qt event loop in the calling thread, so it works on
// the window's job threads and in tessera-cli alike (a QCoreApplication is made when the program has none).
//
// ws:// for a loopback address, wss:// (TLS) for any other; $TESSERA_REMOTE_TLS=1 or 0 says otherwise, and
// $TESSERA_REMOTE_CA names a CA certificate file to trust (a worker's self-signed certificate). The token is
// LinkOptions::token, else $TESSERA_REMOTE_TOKEN.
#include <memory>
#include <string>

#include "app/remote/protocol.h"
#include "ir/cancel.h"
#include "runtime/execute/remote.h"

class QWebSocket;

namespace tessera::remote {

// A QCoreApplication for a program that made none (tessera-cli), so Qt's network code has its event dispatcher.
void ensureQtApplication();

struct LinkOptions {
  double connectTimeoutS = 10;
  std::string token;   // "" : clientToken()
  bool plain = false;  // ws:// whatever $TESSERA_REMOTE_TLS says: this program's own worker on loopback
};

class Link {
 public:
  // Connects to `address` ("HOST:PORT") and greets it; throws Error naming the address when the worker cannot be
  // reached, refuses the token, or does not answer as a Tessera worker within the connect timeout.
  explicit Link(std::string address, LinkOptions options = {});
  ~Link();
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  const execute::WorkerInfo& worker() const { return info_; }
  // Sends `request` and waits for its reply. Throws Error when the worker refuses it (the reply's error), closes
  // the connection or is gone; throws Cancelled (closing the connection) when `cancel` fires first.
  Message request(const Message& request, const CancelToken& cancel = {}, double timeoutS = 0);
  bool open() const;

 private:
  std::string address_;
  std::unique_ptr<QWebSocket> socket_;
  execute::WorkerInfo info_;
  std::string closedWhy_;  // the worker's close reason, once it closed
};

// The token this process presents: $TESSERA_REMOTE_TOKEN ("" when unset).
std::string clientToken();

}  // namespace tessera::remote
