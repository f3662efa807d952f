// The window's cuda runs in a worker process of its own (app/remote/own_worker.h), against the stand-in driver
// with faults that outlive a context reset, as on the H200 ($TESSERA_FAKE_CUDA_STICKY): a kernel's illegal
// address fails that kernel, ends the worker, and the next backend gets a fresh worker whose kernels run; a
// private worker ends with its lifeline. A real GPU runs the same test (docs/backends.md, "GPU faults").
#include <QTest>
#include <QThread>
#include <cerrno>
#include <csignal>
#include <fstream>

#include "app/remote/remote_backend.h"
#include "driver/driver.h"
#include "frontend/model_io.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/execute/remote.h"
#include "tests/remote/worker_process.h"

using namespace tessera;
using execute::detail::ParamBuffer;

namespace {

// c = a + b over four floats: what the stand-in driver imitates for any module, and what a GPU computes.
codegen::GeneratedKernel vadd(const std::string& id) {
  codegen::GeneratedKernel k;
  k.kernelId = id;
  k.entry = "vadd";
  k.source = "extern \"C\" __global__ void vadd(const float* a, const float* b, float* c) {\n"
             "  c[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x];\n}\n";
  k.launch.block[0] = 4;
  return k;
}

// The worker's pid from the backend's device ("..., in a worker process (pid 1234)"); 0 when it says none.
pid_t workerPid(const execute::detail::KernelBackend& b) {
  const std::string d = b.device(), mark = "(pid ";
  const size_t at = d.rfind(mark);
  return at == std::string::npos ? 0 : pid_t(std::stol(d.substr(at + mark.size())));
}

bool ended(pid_t pid) {
  for (int i = 0; i < 500; ++i) {
    if (kill(pid, 0) != 0 && errno == ESRCH) return true;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string pidText, name, state;
    if (stat >> pidText >> name >> state && state == "Z") return true;  // ended, not yet reaped
    QThread::msleep(10);
  }
  return false;
}

struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) { qputenv(name, value); }
  ~ScopedEnv() { qunsetenv(name_); }
  const char* name_;
};

}  // namespace

class TestGpuWorker : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    if (!cuda::cudaAvailability().available) {
      if (qEnvironmentVariableIsSet("TESSERA_EXPECT_GPU")) QFAIL(("no GPU: " + cuda::cudaAvailability().reason).c_str());
      QSKIP(("needs a GPU or the stand-in driver: " + cuda::cudaAvailability().reason).c_str());
    }
    remote::ConnectorOptions o;
    o.cudaInWorker = true;
    remote::installRemoteConnector(o);
  }

  void faultEndsTheWorkerAndTheNextRunGetsAFreshOne() {
    std::vector<float> a = {1, 2, 3, 4}, x = {10, 20, 30, 40}, c(4, -1);
    const size_t n = sizeof(float) * 4;
    std::vector<ParamBuffer> params = {{a.data(), n, false, "", true}, {x.data(), n, false, "", true}, {c.data(), n, true, "", true}};
    const codegen::GeneratedKernel faulty = vadd("fused_3"), fine = vadd("fine");
    pid_t first = 0;
    {
      ScopedEnv fault("TESSERA_TEST_FAULT", "fused_3=null-write");  // read by the worker, which starts now
      auto be = execute::detail::makeKernelBackend(execute::BackendKind::Cuda, "", "", modcache::ModuleCache());
      first = workerPid(*be);
      QVERIFY2(first > 0 && first != getpid(), be->device().c_str());
      QVERIFY2(be->cannotRun().empty(), be->cannotRun().c_str());
      for (const auto& b : be->build({&faulty, &fine})) QVERIFY2(b.error.empty(), b.error.c_str());
      std::string why;
      try {
        be->run(0, params, 0, 1);
      } catch (const std::exception& e) {
        why = e.what();
      }
      qInfo("the fault: %s", why.c_str());
      QVERIFY2(why.find("kernel 'fused_3' faulted on the GPU: CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos, why.c_str());
      // On a driver that recovers, the worker resets its context and lives on; where CUDA cannot, it ends.
      if (qEnvironmentVariableIsSet("TESSERA_FAKE_CUDA_STICKY") || why.find("cannot recover") != std::string::npos) {
        QVERIFY2(why.find("the GPU worker process ends with it, and the next run starts a fresh one") != std::string::npos, why.c_str());
        QVERIFY(ended(first));
        QVERIFY_THROWS_EXCEPTION(std::exception, be->run(1, params, 0, 1));  // this run is over
      }
    }
    // The next run: a worker (a fresh one after a lost device) whose kernels run and give the right sums.
    auto be = execute::detail::makeKernelBackend(execute::BackendKind::Cuda, "", "", modcache::ModuleCache());
    QVERIFY2(be->cannotRun().empty(), be->cannotRun().c_str());
    qInfo("the next run's worker: pid %d (the faulted one: %d)", int(workerPid(*be)), int(first));
    if (qEnvironmentVariableIsSet("TESSERA_FAKE_CUDA_STICKY")) QVERIFY(workerPid(*be) != first);
    for (const auto& b : be->build({&fine})) QVERIFY2(b.error.empty(), b.error.c_str());
    be->run(0, params, 0, 1);
    QCOMPARE(c, (std::vector<float>{11, 22, 33, 44}));
    QVERIFY(kill(getpid(), 0) == 0);  // and this process never saw the fault
  }

  // In-process (tessera-cli, or $TESSERA_GPU_WORKER=0 in the window) the same fault leaves this process unable to
  // run on the GPU for good, which is what the worker process avoids.
  void inProcessTheFaultOutlivesTheRun() {
    if (!qEnvironmentVariableIsSet("TESSERA_FAKE_CUDA_STICKY")) QSKIP("needs the stand-in driver's sticky faults");
    execute::setRemoteConnector(nullptr);
    std::vector<float> a = {1, 2, 3, 4}, x = {10, 20, 30, 40}, c(4, -1);
    const size_t n = sizeof(float) * 4;
    std::vector<ParamBuffer> params = {{a.data(), n, false, "", true}, {x.data(), n, false, "", true}, {c.data(), n, true, "", true}};
    const codegen::GeneratedKernel faulty = vadd("fused_3"), fine = vadd("fine");
    auto be = execute::detail::makeCudaBackend("", modcache::ModuleCache());
    {
      ScopedEnv fault("TESSERA_TEST_FAULT", "fused_3=null-write");
      for (const auto& b : be->build({&faulty, &fine})) QVERIFY2(b.error.empty(), b.error.c_str());
    }
    QVERIFY_THROWS_EXCEPTION(std::exception, be->run(0, params, 0, 1));
    QVERIFY(be->cannotRun().find("GPU runs fail until Tessera is started again") != std::string::npos);
    QVERIFY_THROWS_EXCEPTION(std::exception, be->run(1, params, 0, 1));
    remote::ConnectorOptions o;
    o.cudaInWorker = true;
    remote::installRemoteConnector(o);
  }

  // A run whose device buffers exceed the worker's free device memory is refused before it starts, as in-process:
  // the worker's greeting says how much its device has free (the stand-in driver's device: 1 KiB).
  void deviceMemoryIsTheWorkersDevice() {
    if (!qEnvironmentVariableIsSet("TESSERA_FAKE_CUDA_STICKY")) QSKIP("needs the stand-in driver's full device");
    ScopedEnv full("TESSERA_FAKE_CUDA_FREE_BYTES", "1024");
    remote::ConnectorOptions o;
    o.cudaInWorker = true;
    remote::installRemoteConnector(o);  // a new connector: a new worker, which sees the full device
    driver::DriverOptions d;
    d.backend = execute::BackendKind::Cuda;
    d.useTuned = false;
    driver::Driver driver(std::make_shared<const Graph>(loadModel(std::string(TESSERA_SOURCE_DIR) + "/samples/mlp.tsr")), d);
    driver::RunRequest request;
    request.baseline = false;
    request.verify = false;
    try {
      const execute::RunReport r = driver.run(request)->report;
      QFAIL(("a run over the worker's free device memory ran: " + r.toJson().dump()).c_str());
    } catch (const std::exception& e) {
      QVERIFY2(std::string(e.what()).find("of device memory") != std::string::npos, e.what());
      QVERIFY2(std::string(e.what()).find("in a worker process") != std::string::npos, e.what());
      QVERIFY2(std::string(e.what()).find("has 1.0 KiB free") != std::string::npos, e.what());
    }
    remote::installRemoteConnector(o);
  }

  // serve --private ends when its standard input does: the program that started it went, even by a crash.
  void privateWorkerEndsWithItsLifeline() {
    testing::WorkerProcess w({"--private"});
    QVERIFY2(w.port() > 0, qPrintable(w.log()));
    QCOMPARE(w.endInputAndWait(10000), 0);
    QVERIFY2(w.log().contains("the program that started this private worker ended"), qPrintable(w.log()));
  }
};

QTEST_GUILESS_MAIN(TestGpuWorker)
#include "test_gpu_worker.moc"
