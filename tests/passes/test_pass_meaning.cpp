// Meaning preservation: every sample, every graph of tests/passes/meaning and every light ONNX model goes through the default pipeline with a step
// recorder, and the reference interpreter must give the same outputs (compare.h tolerances) after each changed
// step as before the pipeline. A model whose single run is slow is compared after the last step only, and
// stepped through only when that comparison fails, to name the first bad pass; a model over 10 GFLOPs (vgg19)
// runs only with TESSERA_SLOW_TESTS=1.
#include <QtTest>

#include <chrono>
#include <filesystem>

#include "frontend/model_io.h"
#include "frontend/onnx/onnx_import.h"
#include "ir/error.h"
#include "ir/random.h"
#include "ops/stats.h"
#include "passes/pipelines.h"
#include "passes/rewrite.h"
#include "passes/step_recorder.h"
#include "runtime/reference/compare.h"
#include "runtime/reference/interpreter.h"

using namespace tessera;
namespace fs = std::filesystem;

namespace {

constexpr double kStepEveryChangeBelowMs = 1500;  // slower models: final comparison first
constexpr int64_t kSlowFlops = int64_t(10e9);       // ~15 s per reference run on a build machine

std::string differs(const std::vector<Tensor>& after, const std::vector<Tensor>& before) {
  if (after.size() != before.size()) return "the number of outputs changed";
  for (size_t i = 0; i < after.size(); ++i)
    if (Comparison c = compareTensors(after[i], before[i]); !c.ok)
      return "output " + std::to_string(i) + ": " + c.message;
  return "";
}

// The first changed step whose outputs differ, as "after step N (pass): why"; empty when all agree.
std::string firstBadStep(const StepRecorder& recorder, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& expected) {
  for (const Step& step : recorder.steps()) {
    if (!step.changed) continue;
    std::string why = differs(runReference(*step.graph, inputs).outputs, expected);
    if (!why.empty()) return "after step " + std::to_string(step.index) + " (" + step.pass + "): " + why;
  }
  return "";
}

// The light models store every weight as a ConstantOfShape splat (0.02), which makes their outputs the same
// for any input: a numerical mistake would go unseen. Each splat becomes a random initializer instead (He
// uniform for weights; vectors, such as batch-norm variances, positive), so outputs depend on everything.
void randomizeSplatWeights(Graph& graph) {
  uint64_t seed = 100;
  for (Node* n : graph.nodes()) {
    const TensorType& t = n->output(0)->type();
    if (n->op() != "ConstantOfShape" || !isFloat(t.dtype) || t.numElements() < 2) continue;
    int64_t fanIn = t.shape.size() >= 2 ? t.numElements() / std::max<int64_t>(t.shape[0], 1) : 0;
    Tensor data = fanIn > 0 ? randomUniform(t, seed++, -std::sqrt(6.0 / double(fanIn)), std::sqrt(6.0 / double(fanIn)))
                            : randomUniform(t, seed++, 0.5, 1.5);
    replaceWithConstants(graph, n, {data});
  }
}

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

class TestPassMeaning : public QObject {
  Q_OBJECT
 private slots:
  void pipelineKeepsOutputs_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("pipeline");
    std::vector<fs::path> files;
    // The samples, and graphs written for the rewrites of one pass (tests/passes/meaning).
    for (fs::path dir : {fs::path(TESSERA_SOURCE_DIR) / "samples", fs::path(TESSERA_SOURCE_DIR) / "tests" / "passes" / "meaning"})
      if (fs::is_directory(dir))
        for (const auto& e : fs::directory_iterator(dir))
          if (e.path().extension() == ".tsr") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files)
      for (const char* pipeline : {"default", "nhwc"})
        QTest::newRow((f.stem().string() + "/" + pipeline).c_str())
            << QString::fromStdString(f.string()) << QString(pipeline);
    fs::path light = fs::path(TESSERA_DATA_DIR) / "onnx-light" / "light-testdata";
    std::vector<fs::path> models;
    if (fs::is_directory(light))
      for (const auto& e : fs::directory_iterator(light))
        if (fs::exists(e.path() / "model.onnx")) models.push_back(e.path() / "model.onnx");
    std::sort(models.begin(), models.end());
    for (const fs::path& m : models)
      QTest::newRow(m.parent_path().filename().string().c_str()) << QString::fromStdString(m.string()) << "default";
    if (models.empty())
      QTest::newRow("light-models") << QString::fromStdString((light / "absent").string()) << "default";
  }

  void pipelineKeepsOutputs() {
    QFETCH(QString, path);
    QFETCH(QString, pipeline);
    if (!fs::exists(path.toStdString())) QSKIP(qPrintable("no light models at " + path + " (TESSERA_DATA_DIR)"));
    Graph graph;
    try {
      graph = loadModel(path.toStdString());
    } catch (const Error& e) {
      QSKIP(qPrintable(QString("cannot load: ") + e.what()));  // importer limits are not this test's subject
    }
    int64_t flops = graphStats(graph).flops;
    if (flops > kSlowFlops && qEnvironmentVariableIntValue("TESSERA_SLOW_TESTS") == 0)
      QSKIP(qPrintable(QString("%1 GFLOPs per run: set TESSERA_SLOW_TESTS=1 to check it").arg(double(flops) / 1e9)));
    if (path.endsWith(".onnx")) randomizeSplatWeights(graph);
    std::vector<Tensor> inputs = randomInputs(graph, 3);
    auto start = std::chrono::steady_clock::now();
    std::vector<Tensor> expected = runReference(graph, inputs).outputs;
    double runMs = msSince(start);
    std::vector<double> first = expected.at(0).toDoubles();
    QVERIFY2(std::adjacent_find(first.begin(), first.end(), std::not_equal_to<>()) != first.end(),
             "the first output is constant: the comparison would prove nothing");
    size_t nodesBefore = graph.numNodes();

    PassManager pm = buildPipeline(pipeline.toStdString());
    auto recorder = std::make_shared<StepRecorder>();
    pm.addInstrumentation(recorder);
    pm.run(graph);
    QCOMPARE(recorder->steps().size(), resolvePipeline(pipeline.toStdString()).size());

    std::string problem;
    if (runMs < kStepEveryChangeBelowMs) problem = firstBadStep(*recorder, inputs, expected);
    else if (!differs(runReference(graph, inputs).outputs, expected).empty())
      problem = firstBadStep(*recorder, inputs, expected);
    size_t changed = 0;
    for (const Step& s : recorder->steps()) changed += s.changed;
    qInfo("%s: %zu → %zu nodes, %zu of %zu steps changed, one run %.0f ms", qPrintable(path), nodesBefore,
          graph.numNodes(), changed, recorder->steps().size(), runMs);
    if (!problem.empty()) QFAIL(problem.c_str());
  }

  // Every ONNX node test (one op each, many attribute corners) through the default and nhwc pipelines, on its
  // own inputs: the outputs after must equal the reference outputs before. Tests the importer or interpreter
  // cannot handle are skipped; a pass that fails or changes an output is a failure.
  void onnxNodeTestsKeepOutputs() {
    fs::path root = fs::path(TESSERA_DATA_DIR) / "onnx-node";
    if (!fs::is_directory(root)) QSKIP("no ONNX node tests at TESSERA_DATA_DIR/onnx-node");
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(root))
      if (fs::exists(e.path() / "model.onnx") && fs::is_directory(e.path() / "test_data_set_0"))
        dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    int checked = 0, skipped = 0;
    QStringList failures;
    for (const fs::path& dir : dirs) {
      Graph graph;
      std::vector<Tensor> inputs, expected;
      try {
        graph = loadModel((dir / "model.onnx").string());
        for (size_t i = 0; i < graph.inputs().size(); ++i)
          inputs.push_back(
              readTensorProtoFile((dir / "test_data_set_0" / ("input_" + std::to_string(i) + ".pb")).string()));
        expected = runReference(graph, inputs).outputs;
      } catch (const Error&) {
        ++skipped;
        continue;
      }
      ++checked;
      for (const char* pipeline : {"default", "nhwc"}) {
        std::string problem;
        try {
          Graph g = graph.clone();
          PassManager pm = buildPipeline(pipeline);
          pm.run(g);
          problem = differs(runReference(g, inputs).outputs, expected);
        } catch (const Error& e) {
          problem = e.what();
        }
        if (!problem.empty())
          failures << QString::fromStdString(dir.filename().string() + " (" + pipeline + "): " + problem);
      }
    }
    qInfo("%d ONNX node tests checked, %d skipped (import or reference run failed)", checked, skipped);
    if (!failures.isEmpty()) QFAIL(qPrintable(failures.join("\n")));
  }

  // The passes really did something on a conv network: every batch norm is folded into a conv.
  void resnetLosesItsBatchNorms() {
    fs::path model = fs::path(TESSERA_DATA_DIR) / "onnx-light/light-testdata/light_resnet50/model.onnx";
    if (!fs::exists(model)) QSKIP("light_resnet50 is absent (TESSERA_DATA_DIR)");
    Graph graph = loadModel(model.string());
    PassManager pm = buildPipeline("default");
    auto recorder = std::make_shared<StepRecorder>();
    pm.addInstrumentation(recorder);
    pm.run(graph);
    int batchNorms = 0, softmaxes = 0;
    for (Node* n : graph.nodes()) {
      batchNorms += n->op() == "BatchNormalization";
      softmaxes += n->op() == "Softmax";
    }
    QCOMPARE(batchNorms, 0);
    QCOMPARE(softmaxes, 0);
    for (const Step& s : recorder->steps())
      if (s.pass == "fold-batchnorm")
        for (const auto& [name, value] : s.statistics)
          if (name == "into-conv") QCOMPARE(value, int64_t(53));
  }
};

QTEST_APPLESS_MAIN(TestPassMeaning)
#include "test_pass_meaning.moc"
