#pragma once
// The worker of `tessera-cli serve`: a WebSocket server (TLS when given a certificate and key) that does a
// backend's work for remote clients (worker_jobs.h). Every client presents a token from the token file in its
// first message; a client without a valid token, a request over the size limit, a job over its time or memory
// limit, are refused with a clear error and a log line. Jobs run on threads of their own, one at a time per
// client; a client that leaves mid-job has its job cancelled, and the worker goes on serving the others.
#include <QObject>
#include <QSslConfiguration>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "app/remote/tokens.h"
#include "app/remote/worker_jobs.h"
#include "runtime/execute/remote.h"

class QWebSocket;
class QWebSocketServer;

namespace tessera::remote {

struct ServeOptions {
  std::string host = "127.0.0.1";
  uint16_t port = kDefaultPort;  // 0: any free port (the log line and port() say which)
  std::string tokenFile, tlsCert, tlsKey;
  bool insecure = false;  // allow plain ws:// on an address other than loopback
  execute::BackendKind backend = execute::BackendKind::Cpu;
  std::string arch;
  WorkerLimits limits;
  // A worker of the program that started it (remote/own_worker.h): it ends when its standard input ends (that
  // program holds the pipe's other end) and after a fault that left its device unusable (the program starts a
  // fresh one for its next run).
  bool privateWorker = false;
};

// The exit code of a private worker whose device was lost.
constexpr int kDeviceLostExit = 3;

class WorkerServer : public QObject {
 public:
  // Reads the tokens and certificate and describes the local backend; throws Error naming what is wrong.
  explicit WorkerServer(ServeOptions options);
  ~WorkerServer() override;
  // Listens; throws Error naming the address when it cannot.
  void listen();
  uint16_t port() const;
  const execute::WorkerInfo& info() const { return info_; }

 private:
  struct Client;
  void accept();
  void received(Client& c, const QByteArray& bytes);
  void greet(Client& c, const Message& m);
  void startJob(Client& c, Message m);
  void finished(QWebSocket* socket, Message reply, bool cancelled, const std::string& lostDevice);
  void watchParent();
  void refuse(Client& c, const std::string& why, int closeCode);
  void left(QWebSocket* socket);
  Client* find(QWebSocket* socket);

  ServeOptions options_;
  Tokens tokens_;
  std::unique_ptr<execute::detail::KernelBackend> local_;  // the device's description and its free memory
  execute::WorkerInfo info_;
  std::unique_ptr<QWebSocketServer> server_;
  std::map<QWebSocket*, std::shared_ptr<Client>> clients_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // jobs that end after the server deliver nothing
};

}  // namespace tessera::remote
