#pragma once
// A `tessera-cli serve` for a test: started on a free loopback port in a process group of its own (so killing
// it takes its cpu worker processes too), with a token file, stopped at the end.
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QStringList>
#include <QTemporaryDir>
#include <csignal>
#include <string>
#include <unistd.h>

namespace tessera::testing {

inline const char* kTestToken = "0123456789abcdef-alice";

class WorkerProcess {
 public:
  // `extra`: more serve options; `env`: NAME=VALUE for the worker only.
  explicit WorkerProcess(const QStringList& extra = {}, const QStringList& env = {}) {
    const QString tokens = dir_.filePath("tokens");
    QFile f(tokens);
    f.open(QIODevice::WriteOnly);
    f.write(QByteArray("# test clients\nalice ") + kTestToken + "\n");
    f.close();
    QFile::setPermissions(tokens, QFile::ReadOwner | QFile::WriteOwner);
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    for (const QString& kv : env) e.insert(kv.section('=', 0, 0), kv.section('=', 1));
    process_.setProcessEnvironment(e);
    process_.setProcessChannelMode(QProcess::SeparateChannels);
    process_.setChildProcessModifier([] { setpgid(0, 0); });
    process_.start(TESSERA_CLI, QStringList{"serve", "--listen", "127.0.0.1:0", "--token-file", tokens, "--backend", "cpu"} + extra);
    QRegularExpression listening("listening on 127\\.0\\.0\\.1:(\\d+)");
    for (int i = 0; i < 600 && port_ == 0 && process_.state() != QProcess::NotRunning; ++i) {
      process_.waitForReadyRead(100);
      out_ += QString::fromLocal8Bit(process_.readAllStandardOutput());
      if (auto m = listening.match(out_); m.hasMatch()) port_ = m.captured(1).toInt();
    }
  }
  ~WorkerProcess() { kill(); }

  int port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  // Everything it wrote so far (its log).
  QString log() {
    out_ += QString::fromLocal8Bit(process_.readAllStandardOutput());
    err_ += QString::fromLocal8Bit(process_.readAllStandardError());
    return out_ + err_;
  }
  bool running() const { return process_.state() == QProcess::Running; }
  // Ends its standard input (what a private worker's program does by ending) and waits up to `ms` for it to end:
  // its exit code, or -1 when it is still running.
  int endInputAndWait(int ms) {
    process_.closeWriteChannel();
    if (!process_.waitForFinished(ms)) return -1;
    return process_.exitStatus() == QProcess::NormalExit ? process_.exitCode() : -1;
  }
  // SIGKILL to the worker and its cpu workers.
  void kill() {
    if (process_.state() == QProcess::NotRunning) return;
    ::kill(-pid_t(process_.processId()), SIGKILL);
    process_.waitForFinished(5000);
  }

 private:
  QTemporaryDir dir_;
  QProcess process_;
  QString out_, err_;
  int port_ = 0;
};

}  // namespace tessera::testing
