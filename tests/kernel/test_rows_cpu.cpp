// The CPU's row form (row-reduction-cpu) and what it stands on: rfactor (a reduction's innermost loop made
// data-parallel, one partial per lane), its refusals and trace round trip; the form's C++ (rows parallel,
// passes as vector loops, exp as the prelude's tsr_vexp); runs on the cpu backend verified against the
// reference for softmax, layernorm and a ReduceSum; and tsr_vexp's error against std::exp, measured.
#include <QtTest>

#include <cmath>

#include "codegen/codegen.h"
#include "cpu_run.h"
#include "kernel/templates/templates.h"
#include "reference_check.h"
#include "runtime/execute/executor.h"
#include "schedule_check.h"

using namespace tessera;
using namespace tessera::kernel;
using namespace tessera::kernel::fixtures;

namespace {

// Distance in units in the last place of f32 between a and the exact e.
double ulps(float a, double e) {
  float ef = float(e);
  double ulp = double(std::nextafter(std::fabs(ef), INFINITY)) - double(std::fabs(ef));
  return std::fabs(double(a) - e) / ulp;
}

}  // namespace

class TestRowsCpu : public QObject {
  Q_OBJECT
 private slots:
  // The max pass of a softmax, its lanes split by 8 and rfactored: the accumulator folded from a lane array
  // set to -inf before the pass and folded after it; the lanes loop no longer a reduction; the interpreter
  // agrees with the reference, and the trace replays to the same IR.
  void rfactorGivesEachLaneItsPartial() {
    Case c = onCpu(softmax(4, 64));
    Trace t;
    std::string ir = roundTrip(c, [](TracedSchedule& s) {
      s.split("k0", 8);
      s.rfactor("k0_i");
      s.split("k1", 8);
      s.rfactor("k1_i");
    }, &t);
    QVERIFY(has(ir, "tmp acc0_lanes: register f32[8]"));
    QVERIFY(has(ir, "for k0_i_init in 0..8 {"));
    QVERIFY(has(ir, "acc0_lanes[k0_i_init] = -inf"));
    QVERIFY(has(ir, "for k0_i in 0..8 {"));  // not "reduce"
    QVERIFY(has(ir, "acc0_lanes[k0_i] max="));
    QVERIFY(has(ir, "for k0_i_fold in 0..8 reduce {"));
    QVERIFY(has(ir, "acc0[0] max= acc0_lanes[k0_i_fold]"));
    QVERIFY(has(ir, "acc1_lanes[k1_i] sum="));
    Kernel k = lower(c);
    replay(k, t);
    QCOMPARE(agreesWithReference(c.graph, k), std::string());
  }
  void rfactorRefusals() {
    Case c = onCpu(softmax(4, 64));
    auto refuses = [&](const std::function<void(TracedSchedule&)>& steps, const std::string& loop, const std::string& what) {
      Kernel k = lower(c);
      TracedSchedule s(k);
      return failsNaming([&] { steps(s); }, loop, what);
    };
    QVERIFY(refuses([](TracedSchedule& s) { s.rfactor("i0"); }, "i0", "not a reduction loop"));
    QVERIFY(refuses([](TracedSchedule& s) { s.split("k0", 8); s.rfactor("k0_o"); }, "k0_o", "not innermost"));
    QVERIFY(refuses([](TracedSchedule& s) { s.rfactor("j"); }, "j", "not a reduction loop"));
    QVERIFY(refuses([](TracedSchedule& s) { s.onlineSoftmax("k0"); s.rfactor("k0"); }, "k0", "maxsumexp"));
    QVERIFY(refuses([](TracedSchedule& s) { s.split("k0", 8); s.vectorize("k0_i"); s.rfactor("k0_i"); }, "k0_i", "not serial or unrolled"));
  }
  // The defaults: the widest of 16, 8, 4 lanes dividing every pass (1: scalar passes); a width that does not
  // divide is refused naming lanes.
  void lanesDivideEveryPass() {
    QCOMPARE(defaultParams(lower(onCpu(softmax(4, 1024)))).at("lanes"), int64_t(16));
    QCOMPARE(defaultParams(lower(onCpu(softmax(4, 1000)))).at("lanes"), int64_t(8));
    QCOMPARE(defaultParams(lower(onCpu(softmax(4, 30)))).at("lanes"), int64_t(1));
    Case c = onCpu(softmax(4, 1000));
    Kernel k = lower(c);
    TracedSchedule s(k);
    QVERIFY(failsNaming([&] { applyTemplate(s, {{"lanes", 16}}); }, "lanes", "do not divide loop"));
  }
  // The C++: one parallel loop over the rows, every pass a vector loop, exp as tsr_vexp; run on the cpu
  // backend, verified against the reference: softmax (16 and 8 lanes, scalar rows of 30), layernorm, and
  // online softmax, whose pair pass stays scalar.
  void runsVerifiedOnTheCpu() {
    Case sm = onCpu(softmax(16, 1024));
    Kernel k = lower(sm);
    applyDefaultSchedule(k);
    std::string cpp = codegen::generateCpp(k).source;
    QVERIFY(has(cpp, "#pragma omp for\n"));  // its only top-level loop: a share of the caller's region
    QVERIFY(has(cpp, "tsr_vexp("));
    QVERIFY(has(cpp, "acc1_lanes[(k1_i) / TSR_VF] += "));
    QCOMPARE(cpuRunFails(sm), std::string());
    QCOMPARE(cpuRunFails(onCpu(softmax(8, 1000))), std::string());
    QCOMPARE(cpuRunFails(onCpu(softmax(8, 30))), std::string());
    QCOMPARE(cpuRunFails(onCpu(layernorm())), std::string());
    QCOMPARE(cpuRunFails(onCpu(reduceMean())), std::string());
    Case online = onCpu(softmax(8, 256));
    execute::ScheduleSet saved;
    saved.traces[execute::ScheduleSet::keyOf(online.spec.nodeIds)] = traceWithParams(online.graph, online.spec, {{"online", 1}});
    QCOMPARE(cpuRunFails(online, &saved), std::string());
  }
  // tsr_vexp against std::exp (in double) over 40,000 points of [-87, 88.7] and the special values: at most
  // 2 ulp; inf past 88.73, 0 below -87.34 and at -inf, NaN kept.
  void vectorExpIsWithinTwoUlp() {
    std::vector<double> xs;
    for (int i = 0; i < 40000; ++i) xs.push_back(-87.0 + 175.7 * i / 40000.0);
    for (double v : std::initializer_list<double>{0.0, -0.0, 1e-8, -1e-8, 0.5, -0.5, 88.72, 88.8, 1000.0, -87.3, -90.0, -1000.0, INFINITY, -INFINITY, NAN})
      xs.push_back(v);
    std::vector<float> got = runUnary("Exp", "tsr_vexp(", xs);
    QCOMPARE(got.size(), xs.size());  // empty when the C++ does not call tsr_vexp
    double worst = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      float in = float(xs[i]);
      if (std::isnan(in)) QVERIFY(std::isnan(got[i]));
      else if (in > 88.7228394f) QVERIFY2(std::isinf(got[i]) && got[i] > 0, qPrintable(QString::number(in)));
      else if (in < -87.3365479f) QCOMPARE(got[i], 0.0f);
      else worst = std::max(worst, ulps(got[i], std::exp(double(in))));
    }
    qInfo("tsr_vexp: at most %.2f ulp from exp over [-87, 88.7]", worst);
    QVERIFY(worst <= 2.0);
  }
  // tsr_verf against std::erf (in double) over 40,000 points of [-5, 5], both sides of the pieces' seams
  // (0.875, 3.92) and the special values: at most 3 ulp; ±1 far out, -0 kept, NaN kept.
  void vectorErfIsWithinThreeUlp() {
    std::vector<double> xs;
    for (int i = 0; i <= 40000; ++i) xs.push_back(-5.0 + 10.0 * i / 40000.0);
    for (double v : std::initializer_list<double>{0.0, -0.0, 1e-30, -1e-30, 1e-8, 0.875, 0.8749999, 3.92, 3.9199999, 30.0, -30.0, INFINITY, -INFINITY, NAN})
      xs.push_back(v);
    std::vector<float> got = runUnary("Erf", "tsr_verf(", xs);
    QCOMPARE(got.size(), xs.size());  // empty when the C++ does not call tsr_verf
    double worst = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      float in = float(xs[i]);
      if (std::isnan(in)) QVERIFY(std::isnan(got[i]));
      else if (in == 0) QCOMPARE(std::signbit(got[i]), std::signbit(in));
      else worst = std::max(worst, ulps(got[i], std::erf(double(in))));
    }
    qInfo("tsr_verf: at most %.2f ulp from erf over [-5, 5]", worst);
    QVERIFY(worst <= 3.0);
  }

 private:
  // `op` of xs (padded to 16 lanes) as one kernel on the cpu backend, whose C++ must call `call`.
  std::vector<float> runUnary(const std::string& op, const std::string& call, std::vector<double> xs) {
    size_t n = xs.size();
    while (xs.size() % 16) xs.push_back(0.0);
    GraphBuilder b("unary");
    Value* x = b.input("x", {DType::F32, {int64_t(xs.size())}});
    b.output(b.op(op, {x}, {}, "f"));
    Case c{b.finish(), {"g0", "pointwise", {"f"}}};
    c.spec.machine = Machine::Cpu;
    auto graph = std::make_shared<const Graph>(c.graph.clone());
    execute::CompiledModel m = execute::compileKernels(graph, {c.spec});
    if (!has(codegen::generateCpp(m.kernels[0].kernel).source, call)) return {};
    execute::RunOptions o;
    o.reps = 1;
    o.warmup = 0;
    o.verify = false;
    o.inputs = {Tensor::fromDoubles(DType::F32, {int64_t(xs.size())}, xs)};
    execute::RunReport run = execute::executeModel(m, execute::BackendKind::Cpu, o);
    std::vector<float> out;
    for (size_t i = 0; i < n && !run.outputs.empty(); ++i) out.push_back(float(run.outputs[0].getDouble(int64_t(i))));
    return out;
  }
};

QTEST_GUILESS_MAIN(TestRowsCpu)
#include "test_rows_cpu.moc"
