// The run report's JSON (runtime/execute/run_report.h): toJson then fromJson gives the same report, messages and
// every kernel field included; a missing field keeps its default; a wrong type or an unknown status throws an
// Error that names the field; and the status names are the strings the JSON and the CLI have always printed.
#include <QtTest>

#include <string>
#include <vector>

#include "ir/error.h"
#include "runtime/execute/run_report.h"

using namespace tessera;
using namespace tessera::execute;

namespace {

RunReport sampleReport() {
  RunReport r;
  r.backend = "cpu";
  r.device = "host (g++ 12)";
  r.ran = true;
  r.totalMs = 1.25;
  r.onceMs = 3.5;
  r.buildMs = 300.5;
  r.baselineTotalMs = 2.5;
  r.outputsVerified = false;
  r.messages = {"kernel k1: output 'y': 3 of 8 elements differ", "baseline: a note"};
  KernelReport a;
  a.group = "k0";
  a.nodes = {"mm", "relu"};
  a.ms = 0.75;
  a.predictedMs = 0.5;
  a.gbps = 12.5;
  a.gflops = 40;
  a.verified = true;
  a.maxRelErr = 1e-6;
  a.maxAbsErr = 2e-7;
  a.precision = "tf32";
  a.cached = true;
  a.once = true;
  a.compileMs = 0;
  a.status = KernelStatus::Ok;
  KernelReport b;
  b.group = "k1";
  b.nodes = {"add"};
  b.ms = 0.5;
  b.compileMs = 120;
  b.status = KernelStatus::Mismatch;
  b.message = "output 'y': 3 of 8 elements differ";
  r.kernels = {a, b};
  return r;
}

// The Error fromJson throws for `j`, or "" when it throws none.
std::string errorFor(const nlohmann::json& j) {
  try {
    RunReport::fromJson(j);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

class TestRunReport : public QObject {
  Q_OBJECT
 private slots:
  void statusNamesAreTheJsonStrings() {
    const std::vector<std::pair<KernelStatus, std::string>> names = {
        {KernelStatus::Ok, "ok"},           {KernelStatus::Mismatch, "mismatch"}, {KernelStatus::Unchecked, "unchecked"},
        {KernelStatus::NotCompiled, "not compiled"}, {KernelStatus::NotRun, "not run"}, {KernelStatus::Failed, "failed"},
        {KernelStatus::Cancelled, "cancelled"}};
    for (const auto& [status, name] : names) {
      QCOMPARE(kernelStatusName(status), name);
      QVERIFY(parseKernelStatus(name) == status);
    }
    QVERIFY_THROWS_EXCEPTION(Error, parseKernelStatus("Ok"));  // names are exact: no case folding
    QVERIFY_THROWS_EXCEPTION(Error, parseKernelStatus(""));
  }

  void roundTripKeepsEveryField() {
    const RunReport r = sampleReport();
    const nlohmann::json j = r.toJson();
    const RunReport back = RunReport::fromJson(nlohmann::json::parse(j.dump()));
    QCOMPARE(back.toJson(), j);
    QCOMPARE(back.messages, r.messages);
    QCOMPARE(back.buildMs, 300.5);
    QCOMPARE(back.kernels.size(), size_t(2));
    QCOMPARE(back.kernels[0].nodes, (std::vector<std::string>{"mm", "relu"}));
    QCOMPARE(back.kernels[0].precision, std::string("tf32"));
    QVERIFY(back.kernels[0].cached);
    QVERIFY(back.kernels[0].once && !back.kernels[1].once);
    QCOMPARE(back.onceMs, 3.5);
    QVERIFY(back.kernels[0].status == KernelStatus::Ok);
    QVERIFY(back.kernels[1].status == KernelStatus::Mismatch);
    QCOMPARE(back.kernels[1].message, r.kernels[1].message);
    QCOMPARE(back.kernels[1].compileMs, 120.0);
    QCOMPARE(back.kernels[1].predictedMs, -1.0);
  }

  void cannotRunRoundTrips() {
    RunReport r;
    r.backend = "cuda";
    r.cannotRun = "no CUDA device";
    const RunReport back = RunReport::fromJson(r.toJson());
    QCOMPARE(back.cannotRun, r.cannotRun);
    QVERIFY(!back.ran);
  }

  void missingFieldsKeepDefaults() {
    const RunReport r = RunReport::fromJson(nlohmann::json::parse(R"({"backend": "cpu", "kernels": [{"group": "k0"}]})"));
    QCOMPARE(r.backend, std::string("cpu"));
    QCOMPARE(r.baselineTotalMs, -1.0);
    QVERIFY(r.messages.empty());
    QCOMPARE(r.kernels.size(), size_t(1));
    QCOMPARE(r.kernels[0].ms, -1.0);
    QVERIFY(r.kernels[0].status == KernelStatus::NotRun);
    // A NaN time is written as null: read as missing, not as a wrong type.
    QCOMPARE(RunReport::fromJson(nlohmann::json::parse(R"({"kernels": [{"ms": null}]})")).kernels[0].ms, -1.0);
  }

  void wrongTypesNameTheField() {
    using nlohmann::json;
    QVERIFY(errorFor(json::parse(R"({"kernels": [{}, {"ms": "fast"}]})")).find("kernels[1].ms: expected a number, got string") != std::string::npos);
    QVERIFY(errorFor(json::parse(R"({"messages": "one"})")).find("messages: expected a list of strings") != std::string::npos);
    QVERIFY(errorFor(json::parse(R"({"messages": [1, 2]})")).find("messages") != std::string::npos);
    QVERIFY(errorFor(json::parse(R"({"ran": 1})")).find("ran: expected a boolean, got number") != std::string::npos);
    QVERIFY(errorFor(json::parse(R"({"kernels": {"k0": {}}})")).find("kernels: expected a list, got object") != std::string::npos);
    QVERIFY(errorFor(json::parse(R"({"kernels": [3]})")).find("kernels[0]: expected an object") != std::string::npos);
    const std::string status = errorFor(json::parse(R"({"kernels": [{"status": "great"}]})"));
    QVERIFY2(status.find("kernels[0].status") != std::string::npos && status.find("'great'") != std::string::npos, status.c_str());
    QVERIFY(errorFor(json::parse("[]")).find("expected an object") != std::string::npos);
    QCOMPARE(errorFor(sampleReport().toJson()), std::string());
  }
};

QTEST_GUILESS_MAIN(TestRunReport)
#include "test_run_report.moc"
