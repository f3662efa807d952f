// Remote workers on the loopback address with the cpu backend (app/remote, docs/remote.md): a run through the
// worker gives the local run's verified result; a wrong token, an oversized request and a job over its time are
// refused with clear errors; a client that leaves mid-job, or a worker killed mid-run, leave the other side usable.
#include <algorithm>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <atomic>
#include <thread>

#include "app/remote/link.h"
#include "app/remote/remote_backend.h"
#include "app/remote/tokens.h"
#include "driver/driver.h"
#include "frontend/model_io.h"
#include "ir/error.h"
#include "tests/remote/worker_process.h"

using namespace tessera;
using testing::WorkerProcess;

namespace {

std::shared_ptr<const Graph> sample(const char* name) {
  return std::make_shared<const Graph>(loadModel(std::string(TESSERA_SOURCE_DIR) + "/samples/" + name));
}

driver::DriverOptions cpuOptions(const std::string& remote) {
  driver::DriverOptions o;
  o.backend = execute::BackendKind::Cpu;
  o.useTuned = false;
  o.remote = remote;
  return o;
}

execute::RunReport runOn(const char* model, const std::string& remote, const CancelToken& cancel = {}) {
  driver::Driver d(sample(model), cpuOptions(remote));
  driver::RunRequest request;
  request.reps = 2;
  request.warmup = 1;
  request.baseline = false;
  return d.run(request, cancel)->report;
}

bool anyKernelSays(const execute::RunReport& r, const std::string& words) {
  for (const auto& k : r.kernels)
    if (k.message.find(words) != std::string::npos) return true;
  return false;
}

}  // namespace

class TestRemote : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    qputenv("TESSERA_REMOTE_TOKEN", testing::kTestToken);
    remote::installRemoteConnector();
  }

  // The same model, run here and through the worker: the same kernels, verified, with the same output bits, and
  // the whole run timed there as one (its outputs, sent back, are the ones verified).
  void remoteRunMatchesLocal() {
    WorkerProcess w;
    QVERIFY2(w.port() > 0, qPrintable(w.log()));
    execute::RunReport local = runOn("mlp.tsr", "");
    execute::RunReport remote = runOn("mlp.tsr", w.address());
    QVERIFY2(remote.ran && remote.outputsVerified, remote.toJson().dump().c_str());
    QVERIFY(local.outputsVerified);
    QCOMPARE(remote.worker, w.address());
    QVERIFY(remote.device.ends_with(" on " + w.address()));
    QCOMPARE(remote.toJson()["worker"].get<std::string>(), w.address());
    QCOMPARE(remote.kernels.size(), local.kernels.size());
    for (size_t i = 0; i < local.kernels.size(); ++i) QCOMPARE(remote.kernels[i].status, local.kernels[i].status);
    QCOMPARE(remote.outputs.size(), local.outputs.size());
    for (size_t i = 0; i < local.outputs.size(); ++i) QVERIFY(std::ranges::equal(remote.outputs[i].bytes(), local.outputs[i].bytes()));
    QVERIFY(w.log().contains("alice@127.0.0.1"));
    QVERIFY2(local.wholeMs > 0 && remote.wholeMs > 0, (local.wholeNote + " / " + remote.wholeNote).c_str());
  }

  // With a certificate and key the worker speaks TLS: a client that trusts the certificate connects (wss://), one
  // that does not is refused by the handshake, naming it.
  void tlsWorkerTakesTrustingClientsOnly() {
    QTemporaryDir dir;
    const QString key = dir.filePath("server.key"), cert = dir.filePath("server.pem");
    QProcess openssl;
    openssl.start("openssl", {"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2",
                              "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"});
    if (!openssl.waitForFinished(30000) || openssl.exitCode() != 0) QSKIP("openssl could not make a test certificate");
    WorkerProcess w({"--tls-cert", cert, "--tls-key", key});
    QVERIFY2(w.port() > 0, qPrintable(w.log()));
    qputenv("TESSERA_REMOTE_TLS", "1");
    bool refused = false;
    try {
      execute::remoteConnector()->describe(w.address());
    } catch (const Error& e) {
      refused = true;
    }
    QVERIFY(refused);
    qputenv("TESSERA_REMOTE_CA", cert.toUtf8());
    execute::WorkerInfo info = execute::remoteConnector()->describe(w.address());
    qunsetenv("TESSERA_REMOTE_CA");
    qunsetenv("TESSERA_REMOTE_TLS");
    QCOMPARE(info.kind, execute::BackendKind::Cpu);
    QVERIFY(w.log().contains("wss://"));
  }

  // The token file: one client a line, a bare token named by its place; a short token is refused naming its line.
  void tokenFileIsChecked() {
    QTemporaryDir dir;
    auto write = [&](const QByteArray& text) {
      QFile f(dir.filePath("tokens"));
      f.open(QIODevice::WriteOnly);
      f.write(text);
      f.close();
      return dir.filePath("tokens").toStdString();
    };
    remote::Tokens t = remote::Tokens::load(write("# clients\nalice aaaaaaaaaaaaaaaa1\n\nbbbbbbbbbbbbbbbb2\n"));
    QCOMPARE(t.size(), size_t(2));
    QCOMPARE(t.clientOf("aaaaaaaaaaaaaaaa1").value_or(""), std::string("alice"));
    QCOMPARE(t.clientOf("bbbbbbbbbbbbbbbb2").value_or(""), std::string("client2"));
    QVERIFY(!t.clientOf("aaaaaaaaaaaaaaaa").has_value());
    try {
      remote::Tokens::load(write("alice aaaaaaaaaaaaaaaa1\nbob short\n"));
      QFAIL("a short token was taken");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("tokens:2: the token of 'bob' is shorter than 16") != std::string::npos, e.what());
    }
    QVERIFY_THROWS_EXCEPTION(Error, remote::Tokens::load(write("# nobody\n")));
  }

  // A wrong token is refused with the reason and a log line; the worker goes on serving the right one.
  void wrongTokenIsRefused() {
    WorkerProcess w;
    QVERIFY(w.port() > 0);
    qputenv("TESSERA_REMOTE_TOKEN", "not-the-token-at-all");
    bool refused = false;
    try {
      execute::remoteConnector()->describe(w.address());
    } catch (const Error& e) {
      refused = std::string(e.what()).find("wrong token") != std::string::npos;
      QVERIFY2(refused, e.what());
    }
    qputenv("TESSERA_REMOTE_TOKEN", "");
    QVERIFY_THROWS_EXCEPTION(Error, execute::remoteConnector()->describe(w.address()));
    qputenv("TESSERA_REMOTE_TOKEN", testing::kTestToken);
    QVERIFY(refused);
    QTRY_VERIFY(w.log().contains("refused") && w.log().contains("wrong token"));
    QCOMPARE(execute::remoteConnector()->describe(w.address()).kind, execute::BackendKind::Cpu);
  }

  // A request over the worker's limit: the client refuses a run's inputs it knows are too large, and the worker
  // closes on a request past its limit with the reason (and logs it).
  void oversizedRequestIsRefused() {
    WorkerProcess w({"--max-request-mb", "0.01"});
    QVERIFY(w.port() > 0);
    execute::RunReport r = runOn("mlp.tsr", w.address());  // x is 64 KiB, over 10 KiB
    QVERIFY2(anyKernelSays(r, "over the 10485 bytes the worker at"), r.toJson().dump().c_str());
    remote::Link link(w.address());
    remote::Message big{{{"op", "ping"}}, std::string(20u << 20, 'x')};
    try {
      link.request(big);
      QFAIL("an oversized request was answered");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("over the worker's limit") != std::string::npos, e.what());
    }
    QTRY_VERIFY(w.log().contains("over the worker's limit"));
    QVERIFY(execute::remoteConnector()->describe(w.address()).maxRequestBytes == 10485);
  }

  // A job over the worker's time limit is stopped and said to be; the next job of the same client runs.
  void jobOverTimeIsStopped() {
    WorkerProcess w({"--job-timeout", "1"}, {"TESSERA_TEST_FAULT=*=loop"});
    QVERIFY(w.port() > 0);
    execute::RunReport r = runOn("softmax.tsr", w.address());
    QVERIFY2(anyKernelSays(r, "time limit of 1 s"), r.toJson().dump().c_str());
    QVERIFY(w.running());
  }

  // A client that cancels (closes) mid-job: the worker cancels the job and serves the next client.
  void clientLeavingMidJobKeepsTheWorker() {
    WorkerProcess w({}, {"TESSERA_TEST_FAULT=*=loop"});
    QVERIFY(w.port() > 0);
    CancelSource cancel;
    std::thread stopper([&] {
      QThread::msleep(1500);
      cancel.cancel();
    });
    QVERIFY_THROWS_EXCEPTION(Cancelled, runOn("softmax.tsr", w.address(), cancel.token()));
    stopper.join();
    QTRY_VERIFY(w.log().contains("left during a job"));
    QVERIFY(w.running());
    QCOMPARE(execute::remoteConnector()->describe(w.address()).kind, execute::BackendKind::Cpu);
  }

  // The worker killed mid-run: the run ends with each kernel failed naming the closed connection, and this
  // client runs on a new worker afterwards.
  void killedWorkerFailsTheRunNotTheClient() {
    auto w = std::make_unique<WorkerProcess>(QStringList{}, QStringList{"TESSERA_TEST_FAULT=*=loop"});
    QVERIFY(w->port() > 0);
    execute::RunReport r;
    std::thread run([&] { r = runOn("softmax.tsr", w->address()); });
    QThread::msleep(1500);
    w->kill();
    run.join();
    QVERIFY2(anyKernelSays(r, "closed the connection"), r.toJson().dump().c_str());
    QVERIFY(!r.outputsVerified);
    WorkerProcess again;
    execute::RunReport ok = runOn("softmax.tsr", again.address());
    QVERIFY2(ok.outputsVerified, ok.toJson().dump().c_str());
  }
};

QTEST_GUILESS_MAIN(TestRemote)
#include "test_remote.moc"
