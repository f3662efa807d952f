// A Concat alone in its group on the CPU: one nest per input copying it into its slice of the output, every
// tensor viewed as [axes before the concat axis, the rest flattened] (one long row per copy); the interpreter and
// the cpu backend agree with the reference, empty inputs included; on the GPU the one-nest select form stays.
#include <QtTest>

#include "cpu_run.h"
#include "kernel/templates/template_util.h"
#include "kernel_fixtures.h"
#include "reference_check.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;

namespace {

Case concat(const std::vector<Shape>& inputs, int64_t axis) {
  GraphBuilder b("cc");
  std::vector<Value*> xs;
  for (size_t i = 0; i < inputs.size(); ++i) xs.push_back(b.input("x" + std::to_string(i), {DType::F32, inputs[i]}));
  b.output(b.op("Concat", xs, {{"axis", axis}}, "concat"));
  return {b.finish(), {"g0", "data-movement", {"concat"}}};
}

}  // namespace

class TestConcatCpu : public QObject {
  Q_OBJECT
 private slots:
  void oneCopyPerInput() {
    Case c = onCpu(concat({{2, 3, 5, 7}, {2, 4, 5, 7}}, 1));
    Kernel k = lower(c);
    QCOMPARE(templ::topNests(k).size(), size_t(2));
    QCOMPARE(k.findBuffer(k.buffers.front().name)->shape, (Shape{2, 105}));
    const Buffer* out = nullptr;
    for (const Buffer& b : k.buffers)
      if (b.role == BufferRole::Output) out = &b;
    QVERIFY(out);
    QCOMPARE(out->shape, (Shape{2, 245}));
    QCOMPARE(out->graphShape(), (Shape{2, 7, 5, 7}));
    Kernel gpu = lowerToLoops(c.graph, {c.spec.id, c.spec.kind, c.spec.nodeIds, c.spec.tf32, Machine::Gpu});
    QCOMPARE(templ::topNests(gpu).size(), size_t(1));
  }
  void agreesWithTheReference() {
    for (const Case& c : {onCpu(concat({{2, 3, 5, 7}, {2, 4, 5, 7}}, 1)), onCpu(concat({{2, 3, 5, 7}, {2, 3, 5, 0}, {2, 3, 5, 9}}, -1)),
                          onCpu(concat({{4, 6}, {1, 6}, {3, 6}}, 0)), onCpu(concat({{1, 64, 55, 55}, {1, 64, 55, 55}}, 1))}) {
      Kernel plain = lower(c);
      QCOMPARE(agreesWithReference(c.graph, plain), std::string());
      QCOMPARE(cpuRunFails(c), std::string());
    }
  }
};

QTEST_GUILESS_MAIN(TestConcatCpu)
#include "test_concat_cpu.moc"
