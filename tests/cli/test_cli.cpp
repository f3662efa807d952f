// tessera-cli exit codes: 0 success, 1 test failures, 2 bad usage or bad input (one clear line on stderr).
#include <onnx/onnx_pb.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QFileInfo>
#include <QtTest>

class TestCli : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

  struct Result {
    int code;
    QString out, err;
  };
  // `fault`: $TESSERA_TEST_FAULT for the run ("k0=null-write": that kernel faults on purpose).
  Result cli(const QStringList& args, const QString& fault = {}) {
    QProcess p;
    if (!fault.isEmpty()) {
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      env.insert("TESSERA_TEST_FAULT", fault);
      p.setProcessEnvironment(env);
    }
    p.start(TESSERA_CLI, args);
    p.waitForFinished(120000);
    return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
  }
  QString writeFile(const QString& name, const QByteArray& bytes) {
    QString path = dir_.filePath(name);
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(bytes);
    return path;
  }
  static QString sample(const char* name) { return QString(TESSERA_SOURCE_DIR "/samples/") + name; }
  // A valid one-node model (Relu) with the given op type substituted.
  static QByteArray modelWithOp(const std::string& op) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    auto* g = m.mutable_graph();
    g->set_name("g");
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name("the_node");
    n->add_input(std::string("x"));  // rvalue: GCC 12 warns falsely (-Wrestrict) on the const char* overload
    n->add_output(std::string("y"));
    for (auto* vi : {g->add_input(), g->add_output()}) {
      vi->set_name(vi == &g->input(0) ? "x" : "y");
      auto* t = vi->mutable_type()->mutable_tensor_type();
      t->set_elem_type(onnx::TensorProto::FLOAT);
      t->mutable_shape()->add_dim()->set_dim_value(4);
    }
    std::string bytes;
    m.SerializeToString(&bytes);
    return QByteArray::fromStdString(bytes);
  }
  static int lines(const QString& s) { return s.trimmed().split('\n').size(); }

 private slots:
  void infoOnASample() {
    Result r = cli({"info", sample("mlp.tsr")});
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.contains("x: f32[64,256]"));
    QVERIFY(r.out.contains("MatMul"));
    // 2·64·256·1024 + 2·64·1024·256 for the products, plus one per element for Add, Gelu, Add.
    QVERIFY2(r.out.contains("flops: 67256320 "), qPrintable(r.out));
    QVERIFY(r.out.contains("parameters: 525568 "));
  }
  // --layers prints the layer tree read from the names: light resnet50's stages and their repeated blocks.
  void infoPrintsLayers() {
    const QString model = QStringLiteral(TESSERA_DATA_DIR "/onnx-light/light/light_resnet50.onnx");
    if (!QFileInfo::exists(model)) QSKIP(qPrintable("test data absent: " + model));
    Result r = cli({"info", model, "--layers", "2"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.contains("layers:\n(root) · 415 nodes"), qPrintable(r.out));
    QVERIFY2(r.out.contains("\n  res4 · "), qPrintable(r.out));
    QVERIFY2(r.out.contains("\n    res4_3 ×5 · "), qPrintable(r.out));
    QVERIFY(!r.out.contains("branch2a"));  // depth 3, not printed
    QVERIFY(!cli({"info", sample("mlp.tsr")}).out.contains("layers:"));
  }
  void infoOnMissingFileExits2() {
    Result r = cli({"info", dir_.filePath("nope.onnx")});
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains("nope.onnx"));
    QCOMPARE(lines(r.err), 1);
  }
  void infoOnTruncatedOnnxExits2() {
    QByteArray good = modelWithOp("Relu");
    QString path = writeFile("truncated.onnx", good.left(good.size() / 2));
    Result r = cli({"info", path});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("truncated.onnx"), qPrintable(r.err));
    QCOMPARE(lines(r.err), 1);
  }
  void infoOnRandomBytesExits2() {
    QByteArray noise;
    quint32 s = 12345;
    for (int i = 0; i < 4096; ++i) noise.append(char((s = s * 1664525u + 1013904223u) >> 24));
    Result r = cli({"info", writeFile("noise.onnx", noise)});
    QCOMPARE(r.code, 2);
    QVERIFY(r.err.contains("noise.onnx"));
    QCOMPARE(lines(r.err), 1);
  }
  // An op Tessera does not know opens (its type is the declared one) and compiles into a host group; a run stops
  // before it, naming it: exit 1 on cpu (a failed run), 2 on the reference (it cannot run the model at all).
  void unknownOpOpensAndStopsARun() {
    const QString model = writeFile("unknown.onnx", modelWithOp("FrobnicateV2"));
    Result info = cli({"info", model});
    QCOMPARE(info.code, 0);
    QVERIFY2(info.out.contains("FrobnicateV2"), qPrintable(info.out));
    Result compile = cli({"compile", model, "--emit", "kernel"});
    QCOMPARE(compile.code, 0);
    QVERIFY2(compile.out.contains("runs on the host (unknown-op): node 'the_node' (FrobnicateV2): unknown op "
                                  "'FrobnicateV2': Tessera has no reference semantics for it"),
             qPrintable(compile.out + compile.err));
    Result cpu = cli({"run", model, "--backend", "cpu", "--reps", "1", "--no-baseline"});
    QCOMPARE(cpu.code, 1);
    QVERIFY2(cpu.err.contains("node 'the_node' (FrobnicateV2): unknown op"), qPrintable(cpu.out + cpu.err));
    QVERIFY2(cpu.out.contains("the run stopped before kernel k0"), qPrintable(cpu.out));
    Result ref = cli({"run", model});
    QCOMPARE(ref.code, 2);
    QVERIFY2(ref.err.contains("node 'the_node' (FrobnicateV2): unknown op"), qPrintable(ref.err));
    QCOMPARE(lines(ref.err), 1);
  }
  void badUsageExits2() {
    QCOMPARE(cli({"info"}).code, 2);
    QCOMPARE(cli({"frobnicate"}).code, 2);
    QCOMPARE(cli({"run", sample("mlp.tsr"), "--backend", "nonsense"}).code, 2);
  }
  void printRoundTripsThroughConvert() {
    for (const char* name : {"mlp.tsr", "attention.tsr", "transformer_block.tsr", "conv_bn_relu.tsr"}) {
      Result printed = cli({"print", sample(name)});
      QCOMPARE(printed.code, 0);
      QString tsr = writeFile(QString("rt_%1").arg(name), printed.out.toUtf8());
      Result again = cli({"print", tsr});
      QCOMPARE(again.code, 0);
      QCOMPARE(again.out, printed.out);
      QString onnx = dir_.filePath(QString(name).replace(".tsr", ".onnx"));
      QCOMPARE(cli({"convert", sample(name), "-o", onnx}).code, 0);
      Result fromOnnx = cli({"run", onnx, "--random", "3"});
      Result fromTsr = cli({"run", sample(name), "--random", "3"});
      QCOMPARE(fromOnnx.code, 0);
      // Same outputs (summaries after the timing line) from both forms.
      QCOMPARE(fromOnnx.out.section('\n', 1), fromTsr.out.section('\n', 1));
    }
  }
  void runWritesOutputs() {
    QString out = dir_.filePath("outs");
    Result r = cli({"run", sample("softmax.tsr"), "--output", out});
    QCOMPARE(r.code, 0);
    QVERIFY(QFile::exists(out + "/output_0.pb"));
    // Softmax rows sum to one: 256 rows.
    QVERIFY2(r.out.contains("sum=256"), qPrintable(r.out));
  }
  void runWithoutReferenceOrBaseline() {
    // --no-reference: kernels are timed but unchecked (benchmarks check elsewhere); --no-baseline: no unfused run.
    Result r = cli({"run", sample("softmax.tsr"), "--backend", "cpu", "--json", "--no-reference", "--no-baseline"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.contains("\"status\": \"unchecked\""), qPrintable(r.out));
    QVERIFY2(r.out.contains("\"baseline_total_ms\": -1.0"), qPrintable(r.out));
    QVERIFY2(r.out.contains("\"outputs_verified\": false"), qPrintable(r.out));
    QCOMPARE(cli({"run", sample("softmax.tsr"), "--backend", "cpu", "--check", "--no-reference"}).code, 2);
  }
  // --repeat N: N runs through one driver, as the window's Run pressed again; each run's wall in run_wall_ms, the
  // report the last run's, which found the model's weights where the first left them (kept_bytes) and verified.
  void runRepeatKeepsTheWeights() {
    Result r = cli({"run", sample("mlp.tsr"), "--backend", "cpu", "--json", "--repeat", "3", "--reps", "1", "--check"});
    QCOMPARE(r.code, 0);
    const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(j["run_wall_ms"].toArray().size(), 3);
    QVERIFY2(j["kept_bytes"].toDouble() > 0, qPrintable(r.out.left(400)));
    QVERIFY(j["outputs_verified"].toBool());
    Result once = cli({"run", sample("mlp.tsr"), "--backend", "cpu", "--json", "--reps", "1"});
    QCOMPARE(QJsonDocument::fromJson(once.out.toUtf8()).object()["kept_bytes"].toDouble(), 0.0);
  }
  // The bug report's one-node Gather, fed 1e9, 5 and -5 for an axis of 4: the generated kernel's check fails the
  // run (exit 1 with one line naming node, position and value, not SIGSEGV or a time); with the reference the
  // reference says the same (exit 2); a valid -1 runs.
  void gatherIndexOutOfRangeFailsTheRun() {
    QString model = writeFile("gather.tsr", "graph g {\n  input %data: f32[4,3]\n  input %idx: i64[3]\n"
                                            "  node g = Gather(%data, %idx) {axis=0} -> %y\n  output %y\n}\n");
    QString in = dir_.filePath("gather_in");
    QCOMPARE(cli({"run", model, "--output", in}).code, 0);  // input_0.pb: data
    for (qint64 v : {qint64(1000000000), qint64(5), qint64(-5), qint64(-1)}) {
      onnx::TensorProto t;
      t.set_name("idx");
      t.set_data_type(onnx::TensorProto::INT64);
      t.add_dims(3);
      for (qint64 x : {qint64(0), v, qint64(2)}) t.add_int64_data(x);
      QFile f(in + "/input_1.pb");
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(QByteArray::fromStdString(t.SerializeAsString()));
      f.close();
      QString what = QString("node 'g' (Gather): input 1 ('idx') holds %1 at [1], out of range for axis 0 of extent 4").arg(v);
      Result r = cli({"run", model, "--backend", "cpu", "--inputs", in, "--no-reference", "--no-baseline", "--reps", "1"});
      Result ref = cli({"run", model, "--backend", "cpu", "--inputs", in, "--no-baseline", "--reps", "1"});
      if (v == -1) {
        QCOMPARE(r.code, 0);
        QCOMPARE(ref.code, 0);
        QVERIFY2(ref.out.contains("outputs verified"), qPrintable(ref.out + ref.err));
        continue;
      }
      QCOMPARE(r.code, 1);
      QCOMPARE(lines(r.err), 1);
      QVERIFY2(r.err.startsWith("error: kernel k0 failed: " + what), qPrintable(r.err));
      QVERIFY2(r.out.contains("failed"), qPrintable(r.out));
      QCOMPARE(ref.code, 2);
      QCOMPARE(lines(ref.err), 1);
      QVERIFY2(ref.err.startsWith("error: " + what), qPrintable(ref.err));
    }
  }
  // A generated kernel that crashes (null write, abort) ends its kernel in the cpu worker, not tessera-cli: exit 1
  // with one line naming the kernel and the signal, with and without the reference.
  void crashingKernelFailsTheRunNamingItsSignal() {
    const QStringList run = {"run", sample("softmax.tsr"), "--backend", "cpu", "--no-baseline", "--reps", "1"};
    for (const QStringList& extra : {QStringList{}, QStringList{"--no-reference"}}) {
      Result r = cli(run + extra, "k0=null-write");
      QCOMPARE(r.code, 1);
      QCOMPARE(lines(r.err), 1);
      QCOMPARE(r.err.trimmed(), QString("error: kernel k0 failed: kernel 'k0' crashed the cpu worker: signal 11 (segmentation fault)"));
    }
    Result aborted = cli(run, "k0=abort");
    QCOMPARE(aborted.code, 1);
    QVERIFY2(aborted.err.contains("signal 6 (aborted)"), qPrintable(aborted.err));
    QCOMPARE(cli(run).code, 0);  // the hook unset: the sound kernel
  }
  // --memory-limit: a run (or tune) whose estimate is over it is refused before it starts, with both figures.
  void memoryLimitRefusesARunBeforeItStarts() {
    Result r = cli({"run", sample("softmax.tsr"), "--backend", "cpu", "--memory-limit", "1K"});
    QCOMPARE(r.code, 2);
    QCOMPARE(lines(r.err), 1);
    QVERIFY2(r.err.startsWith("error: run needs ") && r.err.contains(" of host memory (arena ") &&
                 r.err.trimmed().endsWith("; the limit is 1.0 KiB (--memory-limit 1K)"),
             qPrintable(r.err));
    QVERIFY2(!r.out.contains("total"), qPrintable(r.out));  // nothing ran
    Result t = cli({"tune", sample("softmax.tsr"), "--memory-limit", "1K"});
    QCOMPARE(t.code, 2);
    QVERIFY2(t.err.contains("; the limit is 1.0 KiB (--memory-limit 1K)"), qPrintable(t.err));
    Result bad = cli({"run", sample("softmax.tsr"), "--backend", "cpu", "--memory-limit", "lots"});
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.contains("'lots' is not a memory size"), qPrintable(bad.err));
    QCOMPARE(cli({"run", sample("softmax.tsr"), "--backend", "cpu", "--memory-limit", "16G", "--reps", "1"}).code, 0);
  }
  void kernelsAfterAnUnloweredGroupStillRun() {
    // ArgMax has no lowering: its group (ArgMax alone: fusion keeps a reduction without a kernel out of groups)
    // runs on the host (a host group, its values the reference's semantics on the kernels' values), so the Cast,
    // the gemm and the reduction after it run on what it made, and all four verify.
    QString model = writeFile("argmax_chain.tsr",
                              "graph argmax_chain {\n  input %x: f32[8,16]\n  input %w: f32[1,4]\n"
                              "  node am = ArgMax(%x) {axis=1, keepdims=1} -> %i\n  node c = Cast(%i) {to=1} -> %f\n"
                              "  node mm = MatMul(%f, %w) -> %m\n  node r = ReduceSum(%m) {keepdims=1} -> %y\n  output %y\n}\n");
    Result r = cli({"run", model, "--backend", "cpu", "--json", "--reps", "1", "--no-baseline"});
    QVERIFY2(r.out.contains("\"host\": \"no-lowering: kernel 'k0': node 'am' (ArgMax): not supported by the kernel lowering"), qPrintable(r.out + r.err));
    QCOMPARE(r.out.count("\"status\": \"ok\""), 4);
    QVERIFY2(!r.out.contains("never written"), qPrintable(r.out));
  }
  void compileParamSchedulesAGroup() {
    // --param GROUP.NAME=VALUE: the schedule panel's edit; tf32 on an f32 gemm emits the m16n8k8 tf32 mma, the
    // saved schedule replays in run, and a refused value exits 2 naming the parameter.
    QString model = writeFile("gemm_f32.tsr",
                              "graph g {\n  input %a: f32[64,32]\n  input %b: f32[32,48]\n  node mm = MatMul(%a, %b) -> %y\n"
                              "  output %y\n}\n");
    QStringList tf32 = {"--param", "k0.mma=1", "--param", "k0.tf32=1", "--param", "k0.warp_m=32", "--param", "k0.warp_n=16"};
    Result r = cli(QStringList{"compile", model, "--emit", "cuda"} + tf32);
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.contains("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"), qPrintable(r.out + r.err));
    QString saved = dir_.filePath("tf32.json");
    QCOMPARE(cli(QStringList{"compile", model, "--save-schedules", saved} + tf32).code, 0);
    Result run = cli({"run", model, "--backend", "cpu", "--schedules", saved, "--json", "--no-baseline", "--reps", "1"});
    QVERIFY2(run.out.contains("\"status\": \"ok\""), qPrintable(run.out + run.err));  // the CPU keeps exact f32
    Result refused = cli({"compile", model, "--param", "k0.tf32=1"});
    QCOMPARE(refused.code, 2);
    QVERIFY2(refused.err.contains("tf32") && refused.err.contains("mma = 1"), qPrintable(refused.err));
    QCOMPARE(cli({"compile", model, "--param", "k9.mma=1"}).code, 2);
    QCOMPARE(cli({"compile", model, "--param", "k0.mma=one"}).code, 2);
  }
  // A sequence output is printed as its count and elements, saved as a SequenceProto that conformance reads
  // back, and fed to another model through --inputs.
  void runSavesAndReadsSequences() {
    QString split = writeFile("split.tsr", "graph g {\n  input %x: f32[2,3]\n  node s = SplitToSequence(%x) {axis=1} -> %s\n"
                                           "  output %s\n}\n");
    QString test = dir_.filePath("seqconf/test_split");
    QVERIFY(QDir().mkpath(test));
    QCOMPARE(cli({"convert", split, "-o", test + "/model.onnx"}).code, 0);
    Result r = cli({"run", split, "--output", test + "/test_data_set_0"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.contains("seq<f32> 3 tensors: f32[2,1] ["), qPrintable(r.out));
    Result conf = cli({"conformance", test});
    QVERIFY2(conf.code == 0 && conf.out.contains("pass test_split"), qPrintable(conf.out + conf.err));
    QString length = writeFile("length.tsr", "graph g {\n  input %s: seq<f32>\n  node n = SequenceLength(%s) -> %n\n"
                                             "  output %n\n}\n");
    QString feed = dir_.filePath("seqfeed");
    QVERIFY(QDir().mkpath(feed));
    QVERIFY(QFile::copy(test + "/test_data_set_0/output_0.pb", feed + "/input_0.pb"));
    Result counted = cli({"run", length, "--inputs", feed});
    QVERIFY2(counted.code == 0 && counted.out.contains("sum=3"), qPrintable(counted.out + counted.err));
  }

  void conformanceCountsAndExitCodes() {
    // A test made from a run of a sample passes; one whose expected output comes from other inputs fails.
    QString root = dir_.filePath("conf");
    QString pass = root + "/test_pass", bad = root + "/test_bad", other = dir_.filePath("other");
    for (const QString& d : {pass, bad}) {
      QVERIFY(QDir().mkpath(d));
      QCOMPARE(cli({"convert", sample("softmax.tsr"), "-o", d + "/model.onnx"}).code, 0);
      QCOMPARE(cli({"run", sample("softmax.tsr"), "--random", "1", "--output", d + "/test_data_set_0"}).code, 0);
    }
    QCOMPARE(cli({"run", sample("softmax.tsr"), "--random", "2", "--output", other}).code, 0);
    QFile::remove(bad + "/test_data_set_0/output_0.pb");
    QVERIFY(QFile::copy(other + "/output_0.pb", bad + "/test_data_set_0/output_0.pb"));

    Result onlyPass = cli({"conformance", pass});
    QCOMPARE(onlyPass.code, 0);
    QVERIFY(onlyPass.out.contains("pass test_pass"));
    QVERIFY(onlyPass.out.endsWith("1 passed, 0 failed, 0 skipped\n"));

    Result both = cli({"conformance", root});
    QCOMPARE(both.code, 1);
    QVERIFY2(both.out.contains("fail test_bad: max abs err"), qPrintable(both.out));
    QVERIFY(both.out.endsWith("1 passed, 1 failed, 0 skipped\n"));

    QString known = writeFile("known.txt", "test_bad  expectation made from other inputs\n");
    QCOMPARE(cli({"conformance", root, "--known-failures", known}).code, 0);
    QCOMPARE(cli({"conformance", dir_.filePath("no-such-folder")}).code, 2);
  }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
