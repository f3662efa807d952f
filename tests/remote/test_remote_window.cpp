// The window with a remote worker (`tessera-cli serve` on the loopback address, cpu backend): the Run panel lists
// it beside cpu and cuda with its device and latency, a run there gives the local run's verified result and
// records the worker, and a worker killed before a run fails that run only: the window runs locally after it.
#include <algorithm>
#include <QComboBox>
#include <QSignalSpy>
#include <QtTest>

#include <fstream>

#include "app/remote/remote_backend.h"
#include "runtime/cuda/cuda_driver.h"
#include "gui_test_util.h"
#include "tests/remote/worker_process.h"
#include "ui/run/run_controller.h"
#include "ui/run/run_panel.h"
#include "ui/session/session_controller.h"

using namespace tessera;
using namespace tessera::ui;
using namespace tessera::ui::test;

class TestRemoteWindow : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    const QString why = setUpCpuRuns(cache_.path());
    if (!why.isEmpty()) QSKIP(qPrintable(why));
    qputenv("TESSERA_REMOTE_TOKEN", testing::kTestToken);
    remote::installRemoteConnector();
  }

  void windowRunsOnTheWorker() {
    testing::WorkerProcess worker;
    QVERIFY(worker.port() > 0);
    const QString address = QString::fromStdString(worker.address());
    MainWindow w;
    w.openModel(sample("mlp.tsr"));
    QVERIFY(waitIdle(w));
    RunController* runs = w.controller()->runs();
    runs->setBackend("cpu");
    runs->run();
    QVERIFY(waitForRun(runs, runs->lastRun()));
    const auto local = runs->lastRun();
    QVERIFY(local->report.outputsVerified);

    runs->addRemote(address);
    QTRY_COMPARE_WITH_TIMEOUT(runs->backend().remote, address, 20000);
    QVERIFY(runs->backend().latencyMs >= 0);
    auto* box = w.findChild<QComboBox*>("backendBox");
    QVERIFY(box && box->currentText().contains("cpu on " + address));
    runs->run();
    QVERIFY(waitForRun(runs, local));
    const auto remote = runs->lastRun();
    QVERIFY2(remote->error.isEmpty(), qPrintable(remote->error));
    QVERIFY(remote->report.outputsVerified);
    QCOMPARE(QString::fromStdString(remote->report.worker), address);
    QCOMPARE(remote->report.outputs.size(), local->report.outputs.size());
    for (size_t i = 0; i < local->report.outputs.size(); ++i)
      QVERIFY(std::ranges::equal(remote->report.outputs[i].bytes(), local->report.outputs[i].bytes()));

    worker.kill();
    runs->run();
    QVERIFY(waitForRun(runs, remote));
    const auto failed = runs->lastRun();
    QVERIFY(!failed->report.outputsVerified);
    runs->setBackend("cpu");
    runs->run();
    QVERIFY(waitForRun(runs, failed));
    QVERIFY(runs->lastRun()->report.outputsVerified);
  }

  // Cuda runs in the window's own worker process (app/remote/own_worker.h): a kernel's illegal address fails
  // that run naming the kernel, ends the worker and not the window, and the next run, in a fresh worker,
  // verifies. Against the stand-in driver (test_remote_window_fake: faults outlive a reset, as on the H200) or a GPU.
  void cudaFaultEndsTheWorkerNotTheWindow() {
    if (!cuda::cudaAvailability().available) QSKIP(("needs a GPU or the stand-in driver: " + cuda::cudaAvailability().reason).c_str());
    remote::ConnectorOptions o;
    o.cudaInWorker = true;
    remote::installRemoteConnector(o);
    QTemporaryDir dir;
    const QString model = dir.filePath("add.tsr");
    std::ofstream(model.toStdString()) << "graph add {\n  input %a: f32[255]\n  input %b: f32[255]\n"
                                          "  node s = Add(%a, %b) -> %c\n  output %c\n}\n";
    MainWindow w;
    w.openModel(model);
    QVERIFY(waitIdle(w));
    RunController* runs = w.controller()->runs();
    runs->setBackend("cuda");
    QCOMPARE(runs->backend().name, QString("cuda"));
    qputenv("TESSERA_TEST_FAULT", "*=null-write");  // read by the worker this run starts
    runs->run();
    QVERIFY(waitForRun(runs, nullptr));
    qunsetenv("TESSERA_TEST_FAULT");
    const auto faulted = runs->lastRun();
    QVERIFY(!faulted->report.outputsVerified);
    const std::string message = faulted->report.kernels.at(0).message;
    QVERIFY2(message.find("faulted on the GPU: CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos, message.c_str());
    QVERIFY2(faulted->report.device.find("in a worker process") != std::string::npos, faulted->report.device.c_str());
    QVERIFY(w.controller()->compile());  // the session keeps its model
    runs->run();
    QVERIFY(waitForRun(runs, faulted));
    const auto next = runs->lastRun();
    QVERIFY2(next->report.outputsVerified, next->report.toJson().dump().c_str());
    if (qEnvironmentVariableIsSet("TESSERA_FAKE_CUDA_STICKY")) QVERIFY(next->report.device != faulted->report.device);  // another pid
    remote::installRemoteConnector();
  }

 private:
  QTemporaryDir cache_;
};

QTEST_MAIN(TestRemoteWindow)
#include "test_remote_window.moc"
