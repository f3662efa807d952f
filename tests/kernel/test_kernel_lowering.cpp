#include <QtTest>

#include "kernel_fixtures.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;

class TestKernelLowering : public QObject {
  Q_OBJECT
 private slots:
  void dump() {
    std::vector<std::function<Case()>> all = {[] { return pointwise(); }, [] { return softmax(); }, [] { return layernorm(); },
                                               [] { return reduceMean(); }, [] { return gemm(); }, [] { return conv(); },
                                               [] { return transpose(); }, [] { return maxpool(); }};
    for (auto& f : all) qInfo().noquote() << QString::fromStdString(printKernel(lower(f())));
  }
};

QTEST_APPLESS_MAIN(TestKernelLowering)
#include "test_kernel_lowering.moc"
