// Every node of every sample, as a one-node group (the unfused baseline): it lowers (or is refused with an
// Error naming it), its default schedule applies, and the schedule's trace replays from JSON to the same IR.
#include <QtTest>

#include <filesystem>

#include "frontend/model_io.h"
#include "kernel/templates/templates.h"
#include "kernel_fixtures.h"

using namespace tessera;
using namespace tessera::kernel;

class TestKernelSamples : public QObject {
  Q_OBJECT
 private slots:
  void everyNodeOfEverySample() {
    std::filesystem::path dir = std::filesystem::path(TESSERA_SOURCE_DIR) / "samples";
    if (!std::filesystem::exists(dir)) QSKIP("no samples folder");
    std::vector<std::filesystem::path> files;
    for (auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".tsr") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    QVERIFY(files.size() >= 5);
    int lowered = 0;
    QStringList refused;
    for (const auto& f : files) {
      Graph g = loadModel(f.string());
      for (const Node* n : g.topoOrder()) {
        if (n->op() == "Constant") continue;
        KernelSpec spec{n->id(), "", {n->id()}};
        Kernel k;
        try {
          k = lowerToLoops(g, spec);
        } catch (const Error& e) {
          QVERIFY2(std::string(e.what()).find("node '" + n->id() + "'") != std::string::npos, e.what());
          refused << QString::fromStdString(f.stem().string() + ":" + n->op());
          continue;
        }
        Trace t = applyDefaultSchedule(k);
        Kernel fresh = lowerToLoops(g, spec);
        replay(fresh, Trace::load(t.save()));
        QCOMPARE(printKernel(fresh), printKernel(k));
        ++lowered;
      }
    }
    qInfo() << "lowered and scheduled" << lowered << "nodes; refused:" << refused;
    QVERIFY(lowered >= 40);
    QVERIFY2(refused.isEmpty(), qPrintable(refused.join(", ")));
  }
};

QTEST_APPLESS_MAIN(TestKernelSamples)
#include "test_kernel_samples.moc"
