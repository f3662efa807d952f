// tessera-cli serve: a worker that builds, runs and times kernels for remote clients (docs/remote.md). It runs
// until it is stopped (SIGINT or SIGTERM), logging each client, refusal and failed job on stdout.
#include <spdlog/spdlog.h>

#include <QCoreApplication>
#include <csignal>
#include <cstdio>
#include <memory>

#include "app/cli/commands.h"
#include "app/remote/link.h"
#include "app/remote/remote_backend.h"
#include "app/remote/worker_server.h"
#include "ir/error.h"
#include "runtime/cuda/cuda_driver.h"

namespace tessera::cli {
namespace {

struct ServeArgs {
  std::string listen = "127.0.0.1:" + std::to_string(remote::kDefaultPort), tokenFile, tlsCert, tlsKey, backend, arch;
  double maxRequestMb = 1024, maxJobMb = 4096, jobTimeoutS = 600;
  bool insecure = false, privateWorker = false;
};

void splitListen(const std::string& listen, remote::ServeOptions& o) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) fail("serve: --listen '" + listen + "' is not HOST:PORT");
  o.host = listen.substr(0, colon);
  if (o.host.size() > 2 && o.host.front() == '[') o.host = o.host.substr(1, o.host.size() - 2);
  try {
    const int port = std::stoi(listen.substr(colon + 1));
    if (port < 0 || port > 65535) throw std::out_of_range("port");
    o.port = uint16_t(port);
  } catch (const std::exception&) {
    fail("serve: --listen '" + listen + "': the port is not a number from 0 to 65535");
  }
}

int runServe(const ServeArgs& a) {
  remote::ServeOptions o;
  splitListen(a.listen, o);
  o.tokenFile = a.tokenFile;
  o.tlsCert = a.tlsCert;
  o.tlsKey = a.tlsKey;
  o.insecure = a.insecure;
  o.privateWorker = a.privateWorker;
  o.arch = a.arch;
  const std::string backend = a.backend.empty() ? (cuda::cudaAvailability().available ? "cuda" : "cpu") : a.backend;
  o.backend = execute::parseBackend(backend);
  o.limits.maxRequestBytes = uint64_t(a.maxRequestMb * (1 << 20));
  o.limits.maxJobBytes = uint64_t(a.maxJobMb * (1 << 20));
  o.limits.jobTimeoutS = a.jobTimeoutS;
  remote::installRemoteConnector();  // a worker runs its kernels itself, whatever $TESSERA_GPU_WORKER says
  remote::ensureQtApplication();
  spdlog::flush_on(spdlog::level::info);
  remote::WorkerServer server(o);
  server.listen();
  std::printf("tessera-cli serve: listening on %s:%u\n", o.host.c_str(), unsigned(server.port()));
  std::fflush(stdout);
  for (int sig : {SIGINT, SIGTERM}) std::signal(sig, [](int) { QCoreApplication::quit(); });
  const int code = QCoreApplication::exec();
  spdlog::info("serve: stopped");
  return code;
}

}  // namespace

void addServeCommand(CLI::App& app, int& exitCode) {
  auto* cmd = app.add_subcommand("serve", "Be a worker: build, run and time kernels for remote clients (docs/remote.md)");
  auto a = std::make_shared<ServeArgs>();
  cmd->add_option("--listen", a->listen, "HOST:PORT to listen on (port 0: any free one, printed)")->capture_default_str();
  cmd->add_option("--token-file", a->tokenFile, "Client tokens, a line NAME TOKEN each (16 characters at least)")->required();
  cmd->add_option("--tls-cert", a->tlsCert, "PEM certificate: clients connect with TLS (wss://)");
  cmd->add_option("--tls-key", a->tlsKey, "PEM private key of the certificate");
  cmd->add_flag("--insecure", a->insecure, "Allow plain ws:// on an address other than loopback");
  cmd->add_flag("--private", a->privateWorker,
                "The worker of the program that started it (the window's GPU worker): ends when its standard input "
                "ends, and with exit code 3 when a fault leaves its device unusable");
  cmd->add_option("--backend", a->backend, "cpu or cuda (default: cuda when it can run here, else cpu)")->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--arch", a->arch, "CUDA architecture (sm_XX); default: the device's");
  cmd->add_option("--max-request-mb", a->maxRequestMb, "Largest request (a run's inputs)")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--max-job-mb", a->maxJobMb, "Most buffer memory of one run, inputs and outputs")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->add_option("--job-timeout", a->jobTimeoutS, "Seconds one build or run may take before it is stopped")->check(CLI::PositiveNumber)->capture_default_str();
  cmd->callback([a, &exitCode] { exitCode = runServe(*a); });
}

}  // namespace tessera::cli
