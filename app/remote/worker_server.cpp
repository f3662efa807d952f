#include "app/remote/worker_server.h"

#include <spdlog/spdlog.h>

#include <QCoreApplication>
#include <QFile>
#include <QHostAddress>
#include <QSslCertificate>
#include <QSslKey>
#include <QSocketNotifier>
#include <QTimer>
#include <QWebSocket>
#include <QWebSocketServer>
#include <thread>

#include <unistd.h>

#include <cerrno>

#include "ir/error.h"
#include "runtime/cache/module_cache.h"
#include "tune/target.h"

namespace tessera::remote {
namespace {

constexpr int kGreetingTimeoutMs = 10000;
// Room for a request's header beyond its tensor bytes (a build request's sources, a run's parameter list).
constexpr uint64_t kHeaderSlack = uint64_t(16) << 20;
constexpr uint64_t kGreetingBytes = 64 << 10;  // what a client may send before its token is checked

bool isLoopback(const std::string& host) { return host == "127.0.0.1" || host == "localhost" || host == "::1"; }

QSslConfiguration tlsFrom(const std::string& certFile, const std::string& keyFile) {
  QList<QSslCertificate> certs = QSslCertificate::fromPath(QString::fromStdString(certFile));
  if (certs.isEmpty()) fail("--tls-cert: no PEM certificate in '" + certFile + "'");
  QFile f(QString::fromStdString(keyFile));
  if (!f.open(QIODevice::ReadOnly)) fail("--tls-key: cannot read '" + keyFile + "'");
  const QByteArray pem = f.readAll();
  QSslKey key(pem, QSsl::Rsa);
  if (key.isNull()) key = QSslKey(pem, QSsl::Ec);
  if (key.isNull()) fail("--tls-key: no unencrypted RSA or EC private key in '" + keyFile + "'");
  QSslConfiguration c = QSslConfiguration::defaultConfiguration();
  c.setLocalCertificateChain(certs);
  c.setPrivateKey(key);
  c.setPeerVerifyMode(QSslSocket::VerifyNone);  // clients prove themselves with their token
  return c;
}

// What the worker tells its clients: its backend, device and tuning target. `be` is the local backend.
execute::WorkerInfo describeLocal(const ServeOptions& o, const execute::detail::KernelBackend& be) {
  execute::WorkerInfo w;
  w.kind = o.backend;
  w.arch = o.arch;
  w.device = be.device();
  w.cannotRun = be.cannotRun();
  w.target = tune::targetToJson(tune::describeTarget(o.backend, {o.arch, "", true, false, ""}));
  w.maxRequestBytes = o.limits.maxRequestBytes;
  return w;
}

nlohmann::json infoJson(const execute::WorkerInfo& w) {
  return {{"backend", w.kind == execute::BackendKind::Cuda ? "cuda" : "cpu"}, {"device", w.device}, {"arch", w.arch},
          {"cannot_run", w.cannotRun}, {"target", w.target}, {"max_request_bytes", w.maxRequestBytes},
          {"free_device_bytes", w.freeDeviceBytes}};
}

void send(QWebSocket* s, const Message& m) {
  const std::string bytes = encodeMessage(m);
  s->sendBinaryMessage(QByteArray(bytes.data(), qsizetype(bytes.size())));
}

}  // namespace

struct WorkerServer::Client {
  QWebSocket* socket = nullptr;
  std::string peer, name;  // address:port; the token's client once greeted
  bool greeted = false, busy = false, timedOut = false, refused = false;
  uint64_t incoming = 0;   // bytes of the message being received
  std::shared_ptr<ClientJobs> jobs;
  CancelSource cancel;     // the job in flight
  std::unique_ptr<QTimer> jobTimer;
  std::string who() const { return (name.empty() ? std::string("?") : name) + "@" + peer; }
};

WorkerServer::WorkerServer(ServeOptions options) : options_(std::move(options)) {
  tokens_ = Tokens::load(options_.tokenFile);
  if (!tokens_.warning.empty()) spdlog::warn("serve: {}", tokens_.warning);
  const bool tls = !options_.tlsCert.empty() || !options_.tlsKey.empty();
  if (tls && (options_.tlsCert.empty() || options_.tlsKey.empty())) fail("serve: --tls-cert and --tls-key go together");
  if (!tls && !isLoopback(options_.host) && !options_.insecure)
    fail("serve: listening on " + options_.host + " without TLS would send tokens and tensors in the clear; give "
         "--tls-cert and --tls-key (or --insecure on a network you trust)");
  server_ = std::make_unique<QWebSocketServer>("tessera", tls ? QWebSocketServer::SecureMode : QWebSocketServer::NonSecureMode);
  if (tls) server_->setSslConfiguration(tlsFrom(options_.tlsCert, options_.tlsKey));
  local_ = execute::detail::makeKernelBackend(options_.backend, options_.arch, "", modcache::ModuleCache());
  info_ = describeLocal(options_, *local_);
  connect(server_.get(), &QWebSocketServer::newConnection, this, &WorkerServer::accept);
  if (options_.privateWorker) watchParent();
}

// A private worker outlives no one: its standard input is a pipe the program that started it holds open, so an
// end of file there (that program ended, even by a crash) ends the worker too.
void WorkerServer::watchParent() {
  auto* lifeline = new QSocketNotifier(STDIN_FILENO, QSocketNotifier::Read, this);
  connect(lifeline, &QSocketNotifier::activated, this, [lifeline] {
    char byte;
    const ssize_t n = read(STDIN_FILENO, &byte, 1);
    if (n > 0 || (n < 0 && errno == EINTR)) return;
    lifeline->setEnabled(false);
    spdlog::info("serve: the program that started this private worker ended; so does the worker");
    QCoreApplication::exit(0);
  });
}

WorkerServer::~WorkerServer() {
  for (auto& [socket, c] : clients_) c->cancel.cancel();
}

void WorkerServer::listen() {
  QHostAddress address = options_.host == "localhost" ? QHostAddress(QHostAddress::LocalHost) : QHostAddress(QString::fromStdString(options_.host));
  if (address.isNull()) fail("serve: --listen: '" + options_.host + "' is not an IP address");
  if (!server_->listen(address, options_.port))
    fail("serve: cannot listen on " + options_.host + ":" + std::to_string(options_.port) + ": " + server_->errorString().toStdString());
  spdlog::info("serve: {} backend on {}, listening on {}{}:{} ({} client tokens)", options_.backend == execute::BackendKind::Cuda ? "cuda" : "cpu",
               info_.device, server_->secureMode() == QWebSocketServer::SecureMode ? "wss://" : "ws://", options_.host, port(), tokens_.size());
  if (!info_.cannotRun.empty()) spdlog::warn("serve: {}", info_.cannotRun);
}

uint16_t WorkerServer::port() const { return server_->serverPort(); }

WorkerServer::Client* WorkerServer::find(QWebSocket* socket) {
  auto it = clients_.find(socket);
  return it == clients_.end() ? nullptr : it->second.get();
}

void WorkerServer::accept() {
  while (QWebSocket* s = server_->nextPendingConnection()) {
    auto c = std::make_shared<Client>();
    c->socket = s;
    c->peer = s->peerAddress().toString().toStdString() + ":" + std::to_string(s->peerPort());
    c->jobs = std::make_shared<ClientJobs>(options_.backend, options_.arch, options_.limits);
    s->setMaxAllowedIncomingMessageSize(options_.limits.maxRequestBytes + 2 * kHeaderSlack);
    clients_[s] = c;
    connect(s, &QWebSocket::binaryFrameReceived, this, [this, s](const QByteArray& frame, bool) {
      Client* c = find(s);
      if (!c) return;
      c->incoming += uint64_t(frame.size());
      if (!c->greeted && c->incoming > kGreetingBytes)
        refuse(*c, "a greeting of more than " + std::to_string(kGreetingBytes) + " bytes", QWebSocketProtocol::CloseCodeTooMuchData);
      else if (c->incoming > options_.limits.maxRequestBytes + kHeaderSlack)
        refuse(*c, "a request of more than " + std::to_string(options_.limits.maxRequestBytes) +
                       " bytes is over the worker's limit (serve --max-request-mb)", QWebSocketProtocol::CloseCodeTooMuchData);
    });
    connect(s, &QWebSocket::binaryMessageReceived, this, [this, s](const QByteArray& b) {
      if (Client* c = find(s)) received(*c, b);
    });
    connect(s, &QWebSocket::textMessageReceived, this, [this, s](const QString&) {
      if (Client* c = find(s)) refuse(*c, "text messages are not requests", QWebSocketProtocol::CloseCodeDatatypeNotSupported);
    });
    connect(s, &QWebSocket::disconnected, this, [this, s] { left(s); });
    QTimer::singleShot(kGreetingTimeoutMs, s, [this, s] {
      if (Client* c = find(s); c && !c->greeted) refuse(*c, "no greeting within 10 s", QWebSocketProtocol::CloseCodePolicyViolated);
    });
    spdlog::info("serve: {} connected", c->peer);
  }
}

void WorkerServer::refuse(Client& c, const std::string& why, int closeCode) {
  if (c.refused) return;  // the rest of a message being refused
  c.refused = true;
  spdlog::warn("serve: refused {}: {}", c.who(), why);
  send(c.socket, errorReply(why));
  c.socket->close(QWebSocketProtocol::CloseCode(closeCode), QString::fromStdString(why));
}

void WorkerServer::received(Client& c, const QByteArray& bytes) {
  c.incoming = 0;
  if (c.refused) return;
  Message m;
  try {
    m = decodeMessage(std::string(bytes.constData(), size_t(bytes.size())));
  } catch (const std::exception& e) {
    return refuse(c, e.what(), QWebSocketProtocol::CloseCodeProtocolError);
  }
  const std::string op = m.header.value("op", std::string());
  if (!c.greeted) return greet(c, m);
  if (c.busy) return send(c.socket, errorReply("one request at a time: the last one is still running"));
  if (op == "ping") return send(c.socket, {{{"ok", true}}, {}});
  if (op == "hello") return send(c.socket, errorReply("already greeted"));
  startJob(c, std::move(m));
}

void WorkerServer::greet(Client& c, const Message& m) {
  if (m.header.value("op", std::string()) != "hello") return refuse(c, "the first request must be hello with a token", QWebSocketProtocol::CloseCodePolicyViolated);
  const nlohmann::json token = m.header.value("token", nlohmann::json());
  std::optional<std::string> name = token.is_string() ? tokens_.clientOf(token.get<std::string>()) : std::nullopt;
  if (!name) {
    const bool none = !token.is_string() || token.get<std::string>().empty();
    return refuse(c, none ? "no token (set $TESSERA_REMOTE_TOKEN)" : "wrong token", QWebSocketProtocol::CloseCodePolicyViolated);
  }
  c.greeted = true;
  c.name = *name;
  spdlog::info("serve: {} greeted", c.who());
  execute::WorkerInfo now = info_;
  now.freeDeviceBytes = local_->freeDeviceBytes();  // what the client's run may use, as a local run asks
  send(c.socket, {{{"ok", true}, {"worker", infoJson(now)}}, {}});
}

void WorkerServer::startJob(Client& c, Message m) {
  c.busy = true;
  c.timedOut = false;
  c.cancel = CancelSource();
  c.jobTimer = std::make_unique<QTimer>();
  c.jobTimer->setSingleShot(true);
  QWebSocket* s = c.socket;
  connect(c.jobTimer.get(), &QTimer::timeout, this, [this, s] {
    if (Client* c = find(s)) c->timedOut = true, c->cancel.cancel();
  });
  c.jobTimer->start(int(options_.limits.jobTimeoutS * 1000));
  spdlog::debug("serve: {} asks {}", c.who(), m.header.value("op", std::string()));
  std::thread([this, alive = std::weak_ptr<int>(alive_), s, jobs = c.jobs, token = c.cancel.token(), m = std::move(m)] {
    Message reply;
    bool cancelled = false;
    try {
      reply = jobs->handle(m, token);
    } catch (const Cancelled&) {
      cancelled = true;
    } catch (const std::exception& e) {
      reply = errorReply(e.what());
    }
    std::string lost = jobs->lostDevice();
    // Delivered on the application's thread, where the server lives and dies: a server gone by then is not called.
    QMetaObject::invokeMethod(
        QCoreApplication::instance(),
        [this, alive, s, reply = std::move(reply), cancelled, lost = std::move(lost)] {
          if (alive.lock()) finished(s, reply, cancelled, lost);
        },
        Qt::QueuedConnection);
  }).detach();
}

void WorkerServer::finished(QWebSocket* socket, Message reply, bool cancelled, const std::string& lostDevice) {
  Client* c = find(socket);
  if (!lostDevice.empty() && options_.privateWorker) {
    // Nothing in this process can use the device again: the reply says so, and the process ends.
    if (c && !reply.header.value("ok", false))
      reply.header["error"] = reply.header.value("error", std::string()) +
                              "; the GPU worker process ends with it, and the next run starts a fresh one";
    if (c) send(socket, reply), socket->flush();
    spdlog::warn("serve: the device is lost ({}); this private worker ends", lostDevice);
    QCoreApplication::exit(kDeviceLostExit);
    return;
  }
  if (!c) return;  // it left; its job is over now
  c->busy = false;
  c->jobTimer.reset();
  if (cancelled && c->timedOut) {
    const std::string why = "the job went over the worker's time limit of " + std::to_string(int(options_.limits.jobTimeoutS)) +
                            " s (serve --job-timeout) and was stopped";
    spdlog::warn("serve: {}: {}", c->who(), why);
    reply = errorReply(why);
  } else if (cancelled) {
    reply = errorReply("cancelled");
  }
  if (!reply.header.value("ok", false)) spdlog::info("serve: {}: {}", c->who(), reply.header.value("error", std::string()));
  send(socket, reply);
}

void WorkerServer::left(QWebSocket* socket) {
  auto it = clients_.find(socket);
  if (it == clients_.end()) return;
  std::shared_ptr<Client> c = it->second;
  if (c->busy) {
    c->cancel.cancel();
    spdlog::info("serve: {} left during a job; the job is cancelled", c->who());
  } else {
    spdlog::info("serve: {} left", c->who());
  }
  clients_.erase(it);
  socket->deleteLater();
}

}  // namespace tessera::remote
