#include <QtTest>

#include "kernel/templates.h"
#include "schedule_check.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;

class TestTemplates : public QObject {
  Q_OBJECT
 private slots:
  void dump() {
    std::vector<std::function<Case()>> all = {[] { return pointwise(); }, [] { return softmax(); }, [] { return layernorm(); },
                                               [] { return gemm(); }, [] { return conv(); },
                                               [] { return transpose(); }, [] { return maxpool(); }};
    for (auto& f : all) {
      std::string text = roundTrip(f(), [](TracedSchedule& s) { applyTemplate(s, {}); });
      qInfo().noquote() << QString::fromStdString(text);
    }
  }
};

QTEST_APPLESS_MAIN(TestTemplates)
#include "test_templates.moc"
