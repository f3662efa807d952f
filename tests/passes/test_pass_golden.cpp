// Golden-text pass tests (MLIR style): every tests/passes/golden/*.txt holds cases separated by `// -----`.
// A case is one sentence saying what it checks (a `//` comment), `// RUN: <pipeline spec>`, the input graph in
// .tsr form, and `// CHECK:` / `// CHECK-NOT:` lines matched in order against the printed result. Analyses
// are checked through their statistics: `// STAT: pass name=value` (the pass's last application). Every case
// also checks that the reference interpreter gives the same outputs before and after the pipeline. The RUN line
// takes options after the spec: --fuel=N, --disable=pass, --stop-after=pass.
#include <QtTest>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "frontend/text/tsr.h"
#include "ir/error.h"
#include "passes/pipelines.h"
#include "passes/step_recorder.h"
#include "runtime/reference/compare.h"
#include "runtime/reference/interpreter.h"

using namespace tessera;
namespace fs = std::filesystem;

namespace {

struct Check {
  bool negative = false;
  std::string text;
};

struct Case {
  std::string file;
  int line = 0;  // first line of the case
  std::string sentence, run, input;
  std::vector<Check> checks;
  std::vector<std::string> stats;  // "pass name=value"
};

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.erase(s.begin());
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

bool startsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

std::vector<Case> readCases(const fs::path& path) {
  std::ifstream in(path);
  std::vector<Case> cases(1);
  cases.back().file = path.filename().string();
  cases.back().line = 1;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string t = trim(line);
    Case& c = cases.back();
    if (t == "// -----") {
      cases.push_back({path.filename().string(), number + 1, {}, {}, {}, {}, {}});
    } else if (startsWith(t, "// STAT:")) {
      c.stats.push_back(trim(t.substr(8)));
    } else if (startsWith(t, "// RUN:")) {
      c.run = trim(t.substr(7));
    } else if (startsWith(t, "// CHECK-NOT:")) {
      c.checks.push_back({true, trim(t.substr(13))});
    } else if (startsWith(t, "// CHECK:")) {
      c.checks.push_back({false, trim(t.substr(9))});
    } else if (startsWith(t, "//")) {
      c.sentence += (c.sentence.empty() ? "" : " ") + trim(t.substr(2));
    } else {
      c.input += line + "\n";
    }
  }
  return cases;
}

// Empty when every CHECK matches in order and no CHECK-NOT appears between the matches around it.
std::string matchChecks(const std::string& output, const std::vector<Check>& checks) {
  size_t pos = 0;
  std::vector<std::string> pendingNot;
  auto notIn = [&](size_t from, size_t to) -> std::string {
    for (const std::string& n : pendingNot) {
      size_t at = output.find(n, from);
      if (at != std::string::npos && at < to) return "CHECK-NOT: " + n + " found";
    }
    pendingNot.clear();
    return "";
  };
  for (const Check& c : checks) {
    if (c.negative) {
      pendingNot.push_back(c.text);
      continue;
    }
    size_t at = output.find(c.text, pos);
    if (at == std::string::npos) return "CHECK: " + c.text + " not found (in order)";
    if (std::string e = notIn(pos, at); !e.empty()) return e;
    pos = at + c.text.size();
  }
  return notIn(pos, output.size());
}

// "spec --fuel=N --disable=a --stop-after=b" → spec and options.
std::string parseRun(const std::string& run, PipelineOptions& options) {
  std::istringstream in(run);
  std::string spec, word;
  in >> spec;
  while (in >> word) {
    auto value = [&](const std::string& flag) { return word.substr(flag.size()); };
    if (startsWith(word, "--fuel=")) options.fuel = std::stoll(value("--fuel="));
    else if (startsWith(word, "--disable=")) options.disabled.insert(value("--disable="));
    else if (startsWith(word, "--stop-after=")) options.stopAfter = value("--stop-after=");
    else fail("unknown RUN option '" + word + "'");
  }
  return spec;
}

// Empty when each "pass name=value" matches the statistics of the pass's last recorded step.
std::string matchStats(const StepRecorder& recorder, const std::vector<std::string>& stats) {
  for (const std::string& want : stats) {
    std::istringstream in(want);
    std::string pass, assignment;
    in >> pass >> assignment;
    std::string got = "no step of pass '" + pass + "'";
    for (const Step& step : recorder.steps())
      if (step.pass == pass) {
        got = "no statistic";
        for (const auto& [name, value] : step.statistics)
          if (assignment.rfind(name + "=", 0) == 0) got = name + "=" + std::to_string(value);
      }
    if (got != assignment) return "STAT: " + want + " but got " + got;
  }
  return "";
}

std::string compareOutputs(const std::vector<Tensor>& after, const std::vector<Tensor>& before) {
  if (after.size() != before.size()) return "the number of outputs changed";
  for (size_t i = 0; i < after.size(); ++i)
    if (Comparison c = compareTensors(after[i], before[i]); !c.ok)
      return "output " + std::to_string(i) + " changed: " + c.message;
  return "";
}

}  // namespace

class TestPassGolden : public QObject {
  Q_OBJECT
 private slots:
  void goldenFiles() {
    fs::path dir = fs::path(TESSERA_SOURCE_DIR) / "tests" / "passes" / "golden";
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".txt") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    QVERIFY(!files.empty());
    int ran = 0;
    QStringList failures;
    for (const fs::path& f : files)
      for (const Case& c : readCases(f)) {
        std::string where = c.file + ":" + std::to_string(c.line);
        if (c.sentence.empty() || c.run.empty() || (c.checks.empty() && c.stats.empty())) {
          failures << QString::fromStdString(where + ": a case needs a sentence, a RUN line and CHECK lines");
          continue;
        }
        std::string problem, output;
        try {
          Graph g = parseTsr(c.input, where);
          std::vector<Tensor> inputs = randomInputs(g, 1);
          std::vector<Tensor> before = runReference(g, inputs).outputs;
          PipelineOptions options;
          std::string spec = parseRun(c.run, options);
          PassManager pm = buildPipeline(spec, options);
          auto recorder = std::make_shared<StepRecorder>();
          pm.addInstrumentation(recorder);
          pm.run(g);
          output = printTsr(g);
          problem = matchChecks(output, c.checks);
          if (problem.empty()) problem = matchStats(*recorder, c.stats);
          if (problem.empty()) problem = compareOutputs(runReference(g, inputs).outputs, before);
        } catch (const Error& e) {
          problem = std::string("error: ") + e.what();
        }
        ++ran;
        if (!problem.empty())
          failures << QString::fromStdString(where + " (" + c.sentence + "): " + problem + "\n" + output);
      }
    qInfo("%d golden cases in %zu files", ran, files.size());
    if (!failures.isEmpty()) QFAIL(qPrintable(failures.join("\n")));
  }
};

QTEST_APPLESS_MAIN(TestPassGolden)
#include "test_pass_golden.moc"
