// Scatters with constant indices (PyTorch's slice and index assignments once their index arithmetic is folded)
// run as one generated data-movement kernel: the decompose pass writes ScatterND and ScatterElements as a gather
// from the updates and data by a constant map, the last write to an element winning as in the reference. A
// reduction, or an index out of range, keeps the node whole: a scatter kernel, failing with the reference's error.
#include <QtTest>

#include "cpu_driver_helpers.h"
#include "frontend/text/tsr.h"
#include "ir/random.h"

using namespace tessera;
using namespace tessera::testing;

namespace {

Graph scatterModel(const std::string& node, const std::string& indices, const std::string& updates) {
  return parseTsr("graph s {\n  input %x: f32[4,6,5]\n  input %u: " + updates + "\n  const %idx: " + indices +
                  "\n  node s = " + node + " -> %y\n  output %y\n}\n");
}

}  // namespace

class TestScatterKernels : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    if (!hasCompiler()) QSKIP("no C++ compiler for the cpu backend");
  }

  // Tuples of 2 (rows of 5), one negative, one written twice (the second wins); tuples of 1 (whole [6, 5] planes);
  // ScatterElements along axis 1 with a duplicate and negative indices.
  void constantIndicesGather() {
    struct Form {
      std::string node, indices, updates;
    };
    for (const Form& f : {Form{"ScatterND(%x, %idx, %u)", "i64[4,2] = [1, 2, -1, 0, 1, 2, 0, 5]", "f32[4,5]"},
                          Form{"ScatterND(%x, %idx, %u)", "i64[2,1] = [3, -4]", "f32[2,6,5]"},
                          Form{"ScatterElements(%x, %idx, %u) {axis=1}",
                               "i64[2,2,3] = [0, 5, -1, 2, 2, 3, 1, 1, 0, -6, 4, 4]", "f32[2,2,3]"}}) {
      driver::Driver d = cpuDriver(scatterModel(f.node, f.indices, f.updates));
      runAllGenerated(d, randomInputs(*d.model(), 5));
      QVERIFY2(compiledNode(d, "s") == nullptr, f.node.c_str());
      QCOMPARE(kernelOf(d, "s.gather").spec.kind, std::string("data-movement"));
      QCOMPARE(d.kernels()->model.kernels.size(), size_t(1));
    }
  }

  // add combines duplicates: the node stays whole (no gather), a scatter kernel (kernel/lower/lower_scatter.cpp)
  // that computes what the reference does, both writes to [1, 2] summed.
  void reductionIsAScatterKernel() {
    driver::Driver d = cpuDriver(scatterModel("ScatterND(%x, %idx, %u) {reduction=\"add\"}", "i64[2,2] = [1, 2, 1, 2]", "f32[2,5]"));
    QVERIFY(compiledNode(d, "s") != nullptr);
    QCOMPARE(kernelOf(d, "s").kernel.kind, std::string("scatter"));
    execute::RunReport r = runOnCpu(d, randomInputs(*d.model(), 6));
    QVERIFY(!reportOf(r, "s").onHost());
    QVERIFY(r.outputsVerified);
  }

  // An index out of range is not decomposed: the run stops at the node with the reference's message, which the
  // kernel's own index check gives too when the reference does not run.
  void outOfRangeIsTheReferencesError() {
    driver::Driver d = cpuDriver(scatterModel("ScatterND(%x, %idx, %u)", "i64[1,2] = [4, 0]", "f32[1,5]"));
    QVERIFY(compiledNode(d, "s") != nullptr);
    execute::RunReport r = runOnCpu(d, randomInputs(*d.model(), 7), false);
    const execute::KernelReport& k = reportOf(r, "s");
    QVERIFY2(k.message.find("node 's' (ScatterND): input 1 ('idx') holds 4 at [0, 0], out of range for axis 0 of extent 4") !=
                 std::string::npos,
             k.message.c_str());
  }
};

QTEST_GUILESS_MAIN(TestScatterKernels)
#include "test_scatter_kernels.moc"
