// `mpirun -np 2 --oversubscribe tessera-cli tune --distributed` on the cpu backend (core/tune/distributed):
// the ranks measure the same candidates one process would, every kernel is tuned and the picks agree with one
// process's; a rank that cannot measure, or whose process dies, gives its candidates to the other. Skipped, with the reason, where
// mpirun is not installed.
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace {

struct Outcome {
  nlohmann::json report;
  QString err;
};

// A tune of mlp.tsr on the cpu backend, from nothing (its own cache folder), alone or under mpirun.
Outcome tune(const QString& cacheDir, bool distributed, const QStringList& env = {}, const QStringList& mpiOptions = {}) {
  const QStringList args = {"tune", QString(TESSERA_SOURCE_DIR) + "/samples/mlp.tsr", "--backend", "cpu", "--no-cache",
                            "--cache-dir", cacheDir, "--json", "--top-k", "3", "--reps", "5"};
  QProcess p;
  QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
  e.insert("OMP_NUM_THREADS", "1");  // two ranks on two cores: each its own core, as one process gets
  for (const QString& kv : env) e.insert(kv.section('=', 0, 0), kv.section('=', 1));
  p.setProcessEnvironment(e);
  if (distributed) {
    QStringList mpi = QStringList{"--oversubscribe", "-np", "2"} + mpiOptions;
    if (geteuid() == 0) mpi.prepend("--allow-run-as-root");
    p.start(QStandardPaths::findExecutable("mpirun"), mpi + QStringList{TESSERA_CLI} + args + QStringList{"--distributed"});
  } else {
    p.start(TESSERA_CLI, args);
  }
  p.waitForFinished(120000);
  Outcome o;
  o.err = QString::fromLocal8Bit(p.readAllStandardError());
  const QByteArray out = p.readAllStandardOutput();
  try {
    o.report = nlohmann::json::parse(out.toStdString());
  } catch (const std::exception&) {
    o.err += "\nstdout: " + QString::fromLocal8Bit(out);
  }
  return o;
}

// Each kernel's candidates (their parameters, in rank order), for comparing two tunes.
std::vector<std::string> candidates(const nlohmann::json& kernel) {
  std::vector<std::string> out;
  for (const auto& m : kernel["measurements"]) out.push_back(m["params"].dump());
  return out;
}

}  // namespace

class TestDistributedTune : public QObject {
  Q_OBJECT

  // One tune alone and one on two ranks, in `cacheDir` (--no-cache: neither reads the other's entries; both rank
  // with the one calibration of this CPU the first measured and kept there). Fails the test for a difference in
  // what was measured; returns a difference in the picks ("" for none).
  QString compareTunes(const QString& cacheDir) {
    Outcome single = tune(cacheDir, false), spread = tune(cacheDir, true);
    if (!single.report.is_object()) QTest::qFail(qPrintable(single.err), __FILE__, __LINE__);
    if (!spread.report.is_object()) QTest::qFail(qPrintable(spread.err), __FILE__, __LINE__);
    if (!spread.err.contains("tune: 2 ranks") || !spread.err.contains("rank 1 measured")) QTest::qFail(qPrintable(spread.err), __FILE__, __LINE__);
    if (QTest::currentTestFailed()) return {};
    const auto& a = single.report["kernels"];
    const auto& b = spread.report["kernels"];
    QString differs;
    bool same = b.size() == a.size() && !a.empty();
    for (size_t k = 0; same && k < a.size(); ++k) {
      same = b[k]["status"] == "tuned" && b[k]["verified_against"] == a[k]["verified_against"] && candidates(b[k]) == candidates(a[k]);
      for (const auto& m : b[k]["measurements"]) same = same && m["ms"].get<double>() > 0;
      if (b[k]["params"] != a[k]["params"]) differs += QString::fromStdString(a[k]["params"].dump() + " vs " + b[k]["params"].dump() + " ");
    }
    if (!same) QTest::qFail(qPrintable("the two ranks measured other candidates:\n" + QString::fromStdString(a.dump() + "\n" + b.dump())), __FILE__, __LINE__);
    return differs;
  }

 private slots:
  void init() {
    if (QStandardPaths::findExecutable("mpirun").isEmpty()) QSKIP("mpirun is not installed (apt-get install openmpi-bin)");
  }

  // Two ranks measure every candidate one process measures, and keep the same schedule for each kernel. Picks are
  // measurements: on a loaded machine (the suite runs tests side by side on two cores) one noisy median can swap
  // them, so a tune whose picks differ is run again, once, both ways, before the difference counts.
  void twoRanksPickWhatOneProcessPicks() {
    QTemporaryDir dir;
    for (int attempt = 1; attempt <= 2; ++attempt) {
      const QString differs = compareTunes(dir.path());
      if (QTest::currentTestFailed()) return;
      if (differs.isEmpty()) return;
      if (attempt == 2) QFAIL(qPrintable(differs));
      qInfo("picks differed (%s): measuring again", qPrintable(differs));
    }
  }

  // A rank that cannot measure: its candidates are measured by rank 0, and every kernel is still tuned.
  void aFailedRanksCandidatesAreRetried() {
    QTemporaryDir dir;
    Outcome spread = tune(dir.path(), true, {"TESSERA_TEST_RANK_FAILS=1"});
    QVERIFY2(spread.report.is_object(), qPrintable(spread.err));
    QVERIFY2(spread.err.contains("rank 1 could not measure"), qPrintable(spread.err));
    for (const auto& k : spread.report["kernels"]) {
      QVERIFY2(k["status"] == "tuned", k.dump().c_str());
      for (const auto& m : k["measurements"]) QVERIFY2(m["ms"].get<double>() > 0, m.dump().c_str());
    }
  }

  // A rank whose process dies (killed when its first share arrives) under `mpirun --enable-recovery`: rank 0 sees
  // the process gone, measures its candidates itself, and the tune ends normally with every kernel tuned.
  void aDeadRanksCandidatesAreRetried() {
    QTemporaryDir dir;
    Outcome spread = tune(dir.path(), true, {"TESSERA_TEST_RANK_DIES=1"}, {"--enable-recovery"});
    QVERIFY2(spread.report.is_object(), qPrintable(spread.err));
    QVERIFY2(spread.err.contains("rank 1 could not measure (its process died)"), qPrintable(spread.err));
    QVERIFY(!spread.report["kernels"].empty());
    for (const auto& k : spread.report["kernels"]) {
      QVERIFY2(k["status"] == "tuned", k.dump().c_str());
      for (const auto& m : k["measurements"]) QVERIFY2(m["ms"].get<double>() > 0, m.dump().c_str());
    }
  }
};

QTEST_GUILESS_MAIN(TestDistributedTune)
#include "test_distributed_tune.moc"
