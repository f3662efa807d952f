#include "app/remote/link.h"

#include <QCoreApplication>
#include <QEventLoop>
#include <QFile>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QTimer>
#include <QUrl>
#include <QWebSocket>
#include <chrono>
#include <cstdlib>

#include "ir/error.h"

namespace tessera::remote {
namespace {

bool isLoopback(const std::string& host) { return host == "127.0.0.1" || host == "localhost" || host == "::1" || host == "[::1]"; }

bool useTls(const std::string& host) {
  if (const char* env = std::getenv("TESSERA_REMOTE_TLS"); env && *env) return std::string(env) != "0";
  return !isLoopback(host);
}

// The TLS settings: the system's CAs, plus $TESSERA_REMOTE_CA.
QSslConfiguration tlsConfiguration() {
  QSslConfiguration c = QSslConfiguration::defaultConfiguration();
  if (const char* ca = std::getenv("TESSERA_REMOTE_CA"); ca && *ca) {
    QList<QSslCertificate> certs = QSslCertificate::fromPath(QString::fromLocal8Bit(ca));
    if (certs.isEmpty()) fail(std::string("$TESSERA_REMOTE_CA: no certificate in '") + ca + "'");
    c.addCaCertificates(certs);
  }
  return c;
}

double msSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

execute::WorkerInfo workerInfo(const std::string& address, const nlohmann::json& w) {
  execute::WorkerInfo info;
  info.address = address;
  try {
    info.kind = execute::parseBackend(w.at("backend").get<std::string>());
    info.device = w.at("device").get<std::string>();
    info.arch = w.value("arch", std::string());
    info.cannotRun = w.value("cannot_run", std::string());
    info.target = w.at("target");
    info.maxRequestBytes = w.at("max_request_bytes").get<uint64_t>();
    info.freeDeviceBytes = w.value("free_device_bytes", uint64_t(0));  // older workers do not say
  } catch (const std::exception& e) {
    fail("the worker at " + address + " sent a greeting this client cannot read: " + e.what());
  }
  return info;
}

}  // namespace

void ensureQtApplication() {
  if (QCoreApplication::instance()) return;
  static int argc = 1;
  static char name[] = "tessera";
  static char* argv[] = {name, nullptr};
  static QCoreApplication* app = new QCoreApplication(argc, argv);  // lives as long as the program
  (void)app;
}

std::string clientToken() {
  const char* t = std::getenv("TESSERA_REMOTE_TOKEN");
  return t ? t : "";
}

Link::Link(std::string address, LinkOptions options) : address_(std::move(address)) {
  ensureQtApplication();
  const size_t colon = address_.rfind(':');
  const std::string host = address_.substr(0, colon);
  const bool tls = !options.plain && useTls(host);
  socket_ = std::make_unique<QWebSocket>();
  if (tls) socket_->setSslConfiguration(tlsConfiguration());
  QUrl url(QString::fromStdString((tls ? "wss://" : "ws://") + address_));
  auto start = std::chrono::steady_clock::now();
  QEventLoop loop;
  QString error;
  QObject::connect(socket_.get(), &QWebSocket::connected, &loop, &QEventLoop::quit);
  QObject::connect(socket_.get(), &QWebSocket::disconnected, &loop, &QEventLoop::quit);
  QObject::connect(socket_.get(), qOverload<QAbstractSocket::SocketError>(&QWebSocket::error), &loop, [&](QAbstractSocket::SocketError) { error = socket_->errorString(); loop.quit(); });
  QObject::connect(socket_.get(), &QWebSocket::sslErrors, &loop, [&](const QList<QSslError>& es) {
    error = es.isEmpty() ? "TLS error" : es.front().errorString();
  });
  QTimer::singleShot(int(options.connectTimeoutS * 1000), &loop, [&] { error = "no answer"; loop.quit(); });
  socket_->open(url);
  loop.exec();
  if (socket_->state() != QAbstractSocket::ConnectedState)
    fail("cannot reach the worker at " + address_ + " (" + (tls ? "wss" : "ws") + "): " +
         (error.isEmpty() ? std::string("connection closed") : error.toStdString()));
  Message hello{{{"op", "hello"}, {"token", options.token.empty() ? clientToken() : options.token}, {"client", "tessera"}}, {}};
  Message reply = request(hello, {}, options.connectTimeoutS);
  info_ = workerInfo(address_, reply.header.value("worker", nlohmann::json::object()));
  info_.latencyMs = msSince(start);
}

Link::~Link() {
  if (socket_) {
    socket_->disconnect();
    socket_->abort();
  }
}

bool Link::open() const { return socket_ && socket_->state() == QAbstractSocket::ConnectedState; }

Message Link::request(const Message& request, const CancelToken& cancel, double timeoutS) {
  if (!open()) fail("the connection to the worker at " + address_ + " is closed" + (closedWhy_.empty() ? "" : ": " + closedWhy_));
  QEventLoop loop;
  std::string replyBytes;
  bool got = false, cancelled = false, timedOut = false;
  auto c1 = QObject::connect(socket_.get(), &QWebSocket::binaryMessageReceived, &loop, [&](const QByteArray& b) {
    replyBytes.assign(b.constData(), size_t(b.size()));
    got = true;
    loop.quit();
  });
  bool closed = false;
  auto c2 = QObject::connect(socket_.get(), &QWebSocket::disconnected, &loop, [&] {
    closed = true;
    loop.quit();
  });
  QTimer poll;
  QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
    if (cancel.cancelled()) cancelled = true, loop.quit();
  });
  poll.start(5);
  if (timeoutS > 0) QTimer::singleShot(int(timeoutS * 1000), &loop, [&] { timedOut = true, loop.quit(); });
  const std::string bytes = encodeMessage(request);
  socket_->sendBinaryMessage(QByteArray::fromRawData(bytes.data(), qsizetype(bytes.size())));
  // Sending to a worker that was killed can end the connection within sendBinaryMessage: a quit() before exec()
  // is lost, and the loop would wait out the timeout (30 minutes for a build).
  if (!got && !closed && open()) loop.exec();
  QObject::disconnect(c1);
  QObject::disconnect(c2);
  if (cancelled || timedOut) {
    socket_->abort();
    if (cancelled) throw Cancelled();
    fail("the worker at " + address_ + " did not answer within " + std::to_string(int(timeoutS)) + " s");
  }
  if (!got) {
    QString reason = socket_->closeReason();
    closedWhy_ = reason.isEmpty() ? "the connection ended (the worker stopped, or the network failed)" : reason.toStdString();
    fail("the worker at " + address_ + " closed the connection: " + closedWhy_);
  }
  Message reply = decodeMessage(replyBytes);
  // The worker's refusal of a job this side cancelled (its reply "cancelled" can arrive before the poll above
  // sees the token) is the cancellation, not an error.
  if (!reply.header.value("ok", false) && cancel.cancelled()) throw Cancelled();
  if (!reply.header.value("ok", false))
    fail("the worker at " + address_ + " refused the request: " + reply.header.value("error", std::string("no reason given")));
  return reply;
}

}  // namespace tessera::remote
