// The pass manager and the step recorder, on hand-built graphs with toy passes (no op semantics needed).
#include <QtTest>

#include "ir/error.h"
#include "passes/pass_manager.h"
#include "passes/pipelines.h"
#include "passes/step_recorder.h"

using namespace tessera;

namespace {

const TensorType kVec{DType::F32, {4}};

// x → a:Relu → b:Neg → y
Graph chain() {
  Graph g;
  Value* x = g.addInput("x", kVec);
  Node* a = g.addNode("Relu", {x}, {"a"}, {}, "a");
  Node* b = g.addNode("Neg", {a->output(0)}, {"y"}, {}, "b");
  a->output(0)->setType(kVec);
  b->output(0)->setType(kVec);
  g.addOutput(b->output(0));
  return g;
}

// A pass that does whatever the test gives it, one rewrite per call that changes something.
class LambdaPass : public Pass {
 public:
  LambdaPass(std::string name, std::function<void(Graph&, PassContext&)> body)
      : name_(std::move(name)), body_(std::move(body)) {}
  std::string name() const override { return name_; }
  std::string summary() const override { return "test pass " + name_; }
  std::vector<PassStatistic> statistics() const override { return {{"edits", "edits made"}}; }
  void run(Graph& g, PassContext& ctx) override { body_(g, ctx); }

 private:
  std::string name_;
  std::function<void(Graph&, PassContext&)> body_;
};

std::unique_ptr<Pass> noop(const std::string& name) {
  return std::make_unique<LambdaPass>(name, [](Graph&, PassContext&) {});
}

// Appends a Relu after the current output, if the fuel allows.
std::unique_ptr<Pass> appendRelu(const std::string& name) {
  return std::make_unique<LambdaPass>(name, [](Graph& g, PassContext& ctx) {
    if (!ctx.tryRewrite()) return;
    Value* last = g.outputs().back();
    Node* n = g.addNode("Relu", {last}, {"r"}, {}, "r");
    n->output(0)->setType(kVec);
    g.setOutputs({n->output(0)});
    ctx.count("edits");
  });
}

class Log : public Instrumentation {
 public:
  std::vector<std::string> events;
  void beforePass(const Pass& p, const Graph&) override { events.push_back("before " + p.name()); }
  void afterPass(const Pass& p, const Graph&, const PassRunInfo& i) override {
    events.push_back("after " + p.name() + " #" + std::to_string(i.index));
  }
  void afterFailure(const Pass& p, const Graph&, const PassRunInfo&, const std::string& m) override {
    events.push_back("failed " + p.name() + ": " + m);
  }
};

// Cancels from inside the pipeline, as a window's Cancel would while the first pass runs.
class CancelAfterFirstPass : public Instrumentation {
 public:
  explicit CancelAfterFirstPass(CancelSource source) : source_(std::move(source)) {}
  void afterPass(const Pass&, const Graph&, const PassRunInfo&) override { source_.cancel(); }

 private:
  CancelSource source_;
};

PipelineOptions noVerify() {
  PipelineOptions o;
  o.verifyEach = false;  // toy graphs use ops without checking their types
  return o;
}

QStringList toQt(const std::vector<std::string>& v) {
  QStringList out;
  for (const auto& s : v) out << QString::fromStdString(s);
  return out;
}

}  // namespace

class TestPassManager : public QObject {
  Q_OBJECT
 private slots:
  void hooksRunInOrderForEveryInstrumentation() {
    PassManager pm(noVerify());
    pm.addPass(noop("one"));
    pm.addPass(noop("two"));
    auto first = std::make_shared<Log>(), second = std::make_shared<Log>();
    pm.addInstrumentation(first);
    pm.addInstrumentation(second);
    Graph g = chain();
    QCOMPARE(pm.run(g), size_t(2));
    QStringList expected{"before one", "after one #0", "before two", "after two #1"};
    QCOMPARE(toQt(first->events), expected);
    QCOMPARE(toQt(second->events), expected);
  }

  void failureNamesThePassAndCallsTheHook() {
    PassManager pm(noVerify());
    pm.addPass(std::make_unique<LambdaPass>("broken", [](Graph&, PassContext&) { fail("node 'a': boom"); }));
    pm.addPass(noop("later"));
    auto log = std::make_shared<Log>();
    auto recorder = std::make_shared<StepRecorder>();
    pm.addInstrumentation(log);
    pm.addInstrumentation(recorder);
    Graph g = chain();
    try {
      pm.run(g);
      QFAIL("no error");
    } catch (const Error& e) {
      QCOMPARE(QString(e.what()), QString("pass 'broken' failed: node 'a': boom"));
    }
    QCOMPARE(toQt(log->events), (QStringList{"before broken", "failed broken: node 'a': boom"}));
    QCOMPARE(recorder->steps().size(), size_t(1));
    QVERIFY(recorder->steps()[0].failed);
    QCOMPARE(QString::fromStdString(recorder->steps()[0].error), QString("node 'a': boom"));
  }

  void aPassLeavingWrongTypesFailsVerification() {
    PassManager pm;  // verifyEach is on by default
    pm.addPass(std::make_unique<LambdaPass>("mistyped", [](Graph& g, PassContext& ctx) {
      if (ctx.tryRewrite()) g.findValue("a")->setType({DType::F32, {5}});  // Relu of f32[4] cannot give f32[5]
    }));
    Graph g = chain();
    try {
      pm.run(g);
      QFAIL("no error");
    } catch (const Error& e) {
      QString m = e.what();
      QVERIFY2(m.startsWith("pass 'mistyped' failed: the graph no longer verifies: node 'a' (Relu)"), qPrintable(m));
    }
  }

  void undeclaredStatisticIsAnError() {
    PassManager pm(noVerify());
    pm.addPass(std::make_unique<LambdaPass>("typo", [](Graph&, PassContext& c) { c.count("edit"); }));
    Graph g = chain();
    QVERIFY_THROWS_EXCEPTION(Error, pm.run(g));
  }

  void stopAfterAndDisable() {
    PipelineOptions o = noVerify();
    o.stopAfter = "two";
    o.disabled = {"one"};
    PassManager pm(o);
    pm.addPass(appendRelu("one"));
    pm.addPass(appendRelu("two"));
    pm.addPass(appendRelu("three"));
    auto log = std::make_shared<Log>();
    pm.addInstrumentation(log);
    Graph g = chain();
    QCOMPARE(pm.run(g), size_t(1));
    QCOMPARE(toQt(log->events), (QStringList{"before two", "after two #0"}));
    QCOMPARE(g.numNodes(), size_t(3));
  }

  void optionsNamingAbsentPassesAreRefused() {
    PipelineOptions o = noVerify();
    o.disabled = {"canonicalise"};
    PassManager pm(o);
    pm.addPass(noop("canonicalize"));
    Graph g = chain();
    try {
      pm.run(g);
      QFAIL("no error");
    } catch (const Error& e) {
      QVERIFY(QString(e.what()).contains("cannot disable pass 'canonicalise'"));
    }
  }

  void cancellationStopsBetweenPasses() {
    PipelineOptions o = noVerify();
    CancelSource source;
    o.cancel = source.token();
    PassManager pm(o);
    pm.addPass(appendRelu("one"));
    pm.addInstrumentation(std::make_shared<CancelAfterFirstPass>(source));
    pm.addPass(appendRelu("two"));
    Graph g = chain();
    try {
      pm.run(g);
      QFAIL("no error");
    } catch (const Cancelled& e) {
      QCOMPARE(QString(e.what()), QString("cancelled"));
    }
    QCOMPARE(g.numNodes(), size_t(3));  // the first pass's work stays
  }

  void fuelCapsRewritesAcrossPasses() {
    PipelineOptions o = noVerify();
    o.fuel = 2;
    PassManager pm(o);
    for (const char* n : {"p1", "p2", "p3", "p4"}) pm.addPass(appendRelu(n));
    auto recorder = std::make_shared<StepRecorder>();
    pm.addInstrumentation(recorder);
    Graph g = chain();
    pm.run(g);
    QCOMPARE(g.numNodes(), size_t(4));  // 2 + 2 allowed rewrites
    QCOMPARE(pm.rewrites(), int64_t(2));
    QCOMPARE(recorder->steps().size(), size_t(4));
    QVERIFY(recorder->steps()[1].changed);
    QVERIFY(!recorder->steps()[2].changed);
    QCOMPARE(recorder->steps()[2].statistics[0].second, int64_t(0));
  }

  void recorderReportsAddedRemovedRewritten() {
    PassManager pm(noVerify());
    pm.addPass(std::make_unique<LambdaPass>("edit", [](Graph& g, PassContext&) {
      // b now reads x directly (rewritten); a is removed; c is added after b.
      Node* b = g.findNode("b");
      g.setNodeInput(b, 0, g.findValue("x"));
      g.removeNode(g.findNode("a"));
      Node* c = g.addNode("Abs", {b->output(0)}, {"z"}, {}, "c");
      c->output(0)->setType(kVec);
      g.setOutputs({c->output(0)});
    }));
    pm.addPass(noop("nothing"));
    auto recorder = std::make_shared<StepRecorder>();
    pm.addInstrumentation(recorder);
    Graph g = chain();
    pm.run(g);
    const auto& steps = recorder->steps();
    QCOMPARE(steps.size(), size_t(2));
    QCOMPARE(toQt(steps[0].added), QStringList{"c"});
    QCOMPARE(toQt(steps[0].removed), QStringList{"a"});
    QCOMPARE(toQt(steps[0].rewritten), QStringList{"b"});
    QVERIFY(steps[0].changed);
    QCOMPARE(steps[0].graph->numNodes(), size_t(2));
    QCOMPARE(recorder->input()->numNodes(), size_t(2));
    QVERIFY(recorder->input()->findNode("a"));
    // An unchanged step shares the snapshot and lists nothing.
    QVERIFY(!steps[1].changed);
    QCOMPARE(steps[1].graph.get(), steps[0].graph.get());
    QVERIFY(steps[1].added.empty() && steps[1].removed.empty() && steps[1].rewritten.empty());
    QCOMPARE(QString::fromStdString(steps[1].summary), QString("test pass nothing"));
    QVERIFY(steps[0].wallMs >= 0);
  }

  void onStepStreamsEachStep() {
    PassManager pm(noVerify());
    pm.addPass(appendRelu("grow"));
    pm.addPass(noop("idle"));
    auto recorder = std::make_shared<StepRecorder>();
    QStringList seen;
    recorder->setOnStep([&](const Step& s) {
      seen << QString::fromStdString(s.pass) + (s.changed ? " changed " : " unchanged ") +
                  QString::number(s.graph->numNodes());
    });
    pm.addInstrumentation(recorder);
    Graph g = chain();
    pm.run(g);
    QCOMPARE(seen, (QStringList{"grow changed 3", "idle unchanged 3"}));
  }

  void attributeChangeIsARewrite() {
    PassManager pm(noVerify());
    pm.addPass(std::make_unique<LambdaPass>("attr", [](Graph& g, PassContext&) {
      g.findNode("a")->attrs()["alpha"] = 0.5;
    }));
    auto recorder = std::make_shared<StepRecorder>();
    pm.addInstrumentation(recorder);
    Graph g = chain();
    pm.run(g);
    QCOMPARE(toQt(recorder->steps()[0].rewritten), QStringList{"a"});
  }

  void snapshotsShareWeights() {
    Graph g = chain();
    Value* w = g.addInitializer("w", Tensor(DType::F32, {1024}));
    g.setNodeInput(g.findNode("b"), 0, w);
    PassManager pm(noVerify());
    pm.addPass(appendRelu("grow"));
    auto recorder = std::make_shared<StepRecorder>();
    pm.addInstrumentation(recorder);
    pm.run(g);
    const Tensor* snap = recorder->steps()[0].graph->findValue("w")->initializer();
    QCOMPARE(snap->bytes().data(), w->initializer()->bytes().data());
  }

  void pipelinesResolve() {
    QCOMPARE(toQt(resolvePipeline("o0")), QStringList{"infer-shapes"});
    QCOMPARE(toQt(resolvePipeline("canonicalize, dce")), (QStringList{"canonicalize", "dce"}));
    QVERIFY(resolvePipeline("default").size() > 5);
    for (const std::string& name : passNames()) {
      auto p = createPass(name);
      QCOMPARE(p->name(), name);
      QVERIFY(!p->summary().empty());
    }
    for (const PipelineInfo& p : pipelines())
      for (const std::string& name : p.passes) QVERIFY(createPass(name) != nullptr);
    QCOMPARE(toQt(resolvePipeline("fold-constants{max-elements=2},dce")),
             (QStringList{"fold-constants{max-elements=2}", "dce"}));
    QCOMPARE(createPass("fold-constants{max-elements=2}")->name(), std::string("fold-constants"));
    auto refused = [](const std::string& spec) -> QString {
      try {
        createPass(spec);
      } catch (const Error& e) {
        return e.what();
      }
      return "accepted";
    };
    QCOMPARE(refused("fold-constants{max-elemnts=2}"), QString("pass 'fold-constants' has no option 'max-elemnts'"));
    QCOMPARE(refused("fold-constants{max-elements=lots}"),
             QString("pass 'fold-constants': option 'max-elements' must be an integer, not 'lots'"));
    QCOMPARE(refused("dce{aggressive=1}"), QString("pass 'dce' has no option 'aggressive'"));
    try {
      resolvePipeline("canonicalize,frobnicate");
      QFAIL("no error");
    } catch (const Error& e) {
      QCOMPARE(QString(e.what()), QString("unknown pipeline or pass 'frobnicate'"));
    }
  }
};

QTEST_APPLESS_MAIN(TestPassManager)
#include "test_pass_manager.moc"
