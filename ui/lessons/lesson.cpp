#include "ui/lessons/lesson.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <set>

#include "io/atomic_file.h"
#include "ir/error.h"
#include "ui/code/code_levels.h"

namespace tessera::ui {
namespace {

using nlohmann::json;

// Where a field sits, for errors: "lessons/x.json: steps[2]." — each reader appends the key.
struct Where {
  std::string prefix;
  [[noreturn]] void fail(const std::string& key, const std::string& what) const { tessera::fail(prefix + key + ": " + what); }
};

void refuseUnknownKeys(const json& j, const std::set<std::string>& known, const Where& at) {
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!known.count(it.key())) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      at.fail(it.key(), "unknown field (expected one of " + list + ")");
    }
}

std::optional<QString> optionalString(const json& j, const char* key, const Where& at) {
  auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  if (!it->is_string()) at.fail(key, std::string("expected a string, got ") + it->type_name());
  return QString::fromStdString(it->get<std::string>());
}

QString requiredString(const json& j, const char* key, const Where& at) {
  auto s = optionalString(j, key, at);
  if (!s || s->isEmpty()) at.fail(key, "missing (a non-empty string is required)");
  return *s;
}

void checkStepReference(const QString& ref, const char* key, const Where& at) {
  bool number = false;
  const int row = ref.toInt(&number);
  if (number && row < 0) at.fail(key, "a row number must be 0 or more");
  if (ref.isEmpty()) at.fail(key, "empty (expected input, last, a pass name or a row number)");
}

std::optional<QString> oneOf(const json& j, const char* key, const QStringList& allowed, const Where& at) {
  auto s = optionalString(j, key, at);
  if (s && !allowed.contains(*s)) at.fail(key, "'" + s->toStdString() + "' is not one of " + allowed.join(", ").toStdString());
  return s;
}

LessonParams readParams(const json& j, const Where& at) {
  LessonParams params;
  if (!j.is_object()) at.fail("params", "expected {NODE: {PARAMETER: VALUE}}");
  for (auto node = j.begin(); node != j.end(); ++node) {
    if (!node->is_object()) at.fail("params." + node.key(), "expected {PARAMETER: VALUE}");
    for (auto p = node->begin(); p != node->end(); ++p) {
      if (!p->is_number_integer()) at.fail("params." + node.key() + "." + p.key(), "expected an integer");
      params[QString::fromStdString(node.key())][p.key()] = p->get<int64_t>();
    }
  }
  return params;
}

LessonWait readWait(const json& j, const Where& at) {
  static const std::map<std::string, LessonWait::Kind> kinds{{"override", LessonWait::ForceOverride},
                                                             {"param", LessonWait::SetParam},
                                                             {"run", LessonWait::PressRun},
                                                             {"tune", LessonWait::PressTune},
                                                             {"step", LessonWait::GoToStep},
                                                             {"select", LessonWait::SelectNode}};
  if (!j.is_object()) at.fail("wait", "expected an object with a kind");
  const Where in{at.prefix + "wait."};
  refuseUnknownKeys(j, {"kind", "override", "state", "node", "param", "value", "step", "hint"}, in);
  LessonWait w;
  const QString kind = requiredString(j, "kind", in);
  auto k = kinds.find(kind.toStdString());
  if (k == kinds.end()) in.fail("kind", "'" + kind.toStdString() + "' is not one of override, param, run, step, select");
  w.kind = k->second;
  w.hint = optionalString(j, "hint", in).value_or(QString());
  if (w.kind == LessonWait::ForceOverride) {
    if (!j.contains("override")) in.fail("override", "missing (the override the learner must make)");
    w.override = overridesFromJson(json::array({j["override"]}), in.prefix + "override").front();
    if (auto s = optionalString(j, "state", in)) {
      try {
        w.state = parseOverrideState(s->toStdString());
      } catch (const Error& e) {
        in.fail("state", e.what());
      }
    }
  } else if (w.kind == LessonWait::SetParam) {
    w.node = requiredString(j, "node", in);
    w.param = requiredString(j, "param", in);
    if (!j.contains("value") || !j["value"].is_number_integer()) in.fail("value", "missing (an integer is required)");
    w.value = j["value"].get<int64_t>();
  } else if (w.kind == LessonWait::GoToStep) {
    w.step = requiredString(j, "step", in);
    checkStepReference(w.step, "step", in);
  } else if (w.kind == LessonWait::SelectNode) {
    w.node = requiredString(j, "node", in);
  }
  return w;
}

QString modelPath(const QString& written, const QString& lessonFile, const Where& at) {
  const QString path = QFileInfo(QFileInfo(lessonFile).dir(), written).absoluteFilePath();
  if (!QFileInfo(path).isFile()) at.fail("model", "no such file " + path.toStdString() + " (paths are relative to the lesson file)");
  return QDir::cleanPath(path);
}

LessonStep readStep(const json& j, const QString& fileName, const Where& at) {
  if (!j.is_object()) tessera::fail(at.prefix.substr(0, at.prefix.size() - 1) + ": expected an object");
  refuseUnknownKeys(j, {"title", "caption", "model", "branch", "step", "select", "expand", "panel", "level", "backend",
                        "overrides", "params", "run", "trace_step", "wait"}, at);
  LessonStep s;
  s.title = requiredString(j, "title", at);
  s.caption = requiredString(j, "caption", at);
  if (auto m = optionalString(j, "model", at)) s.model = modelPath(*m, fileName, at);
  s.branch = optionalString(j, "branch", at);
  if (s.branch && s.branch->trimmed().isEmpty()) at.fail("branch", "expected a branch name");
  s.step = optionalString(j, "step", at);
  if (s.step) checkStepReference(*s.step, "step", at);
  s.select = optionalString(j, "select", at);
  if (j.contains("expand")) {
    if (!j["expand"].is_array()) at.fail("expand", "expected a list of layer paths or names");
    QStringList layers;
    for (const json& l : j["expand"]) {
      if (!l.is_string()) at.fail("expand", "expected a list of strings");
      layers << QString::fromStdString(l.get<std::string>());
    }
    s.expand = layers;
  }
  s.panel = oneOf(j, "panel", lessonPanels(), at);
  s.level = oneOf(j, "level", lessonLevels(), at);
  s.backend = oneOf(j, "backend", {"reference", "cpu", "cuda"}, at);
  if (j.contains("overrides")) s.overrides = overridesFromJson(j["overrides"], at.prefix + "overrides");
  if (j.contains("params")) s.params = readParams(j["params"], at);
  if (j.contains("run")) {
    if (!j["run"].is_boolean()) at.fail("run", "expected true or false");
    s.run = j["run"].get<bool>();
  }
  if (j.contains("trace_step")) {
    if (!j["trace_step"].is_number_integer() || j["trace_step"].get<int64_t>() < 0 || j["trace_step"].get<int64_t>() > 10000)
      at.fail("trace_step", "expected a number of primitives, 0 or more");
    s.traceStep = int(j["trace_step"].get<int64_t>());
  }
  if (j.contains("wait")) s.wait = readWait(j["wait"], at);
  return s;
}

}  // namespace

const QStringList& lessonPanels() {
  static const QStringList panels{"graph", "pipeline", "inspector", "overrides", "code", "schedule", "run"};
  return panels;
}

const QStringList& lessonLevels() {
  // The Levels panel's, by the names of the driver's one stage table.
  static const QStringList levels = [] {
    QStringList names;
    for (int i = 0; i < kLevelCount; ++i) names << levelName(Level(i));
    return names;
  }();
  return levels;
}

Lesson parseLesson(const std::string& text, const QString& fileName) {
  const std::string file = fileName.toStdString();
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    fail(file + ": not JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  }
  const Where top{file + ": "};
  if (!j.is_object()) fail(file + ": expected an object {\"format\": \"tessera-lesson\", ...}");
  refuseUnknownKeys(j, {"format", "version", "title", "summary", "steps"}, top);
  if (j.value("format", "") != "tessera-lesson") top.fail("format", "expected \"tessera-lesson\"");
  if (j.value("version", 0) != 1) top.fail("version", "expected 1 (the only version there is)");
  Lesson lesson{fileName, requiredString(j, "title", top), optionalString(j, "summary", top).value_or(QString()), {}};
  if (!j.contains("steps") || !j["steps"].is_array() || j["steps"].empty()) top.fail("steps", "expected a non-empty list");
  for (size_t i = 0; i < j["steps"].size(); ++i)
    lesson.steps.push_back(readStep(j["steps"][i], fileName, Where{file + ": steps[" + std::to_string(i) + "]."}));
  if (!lesson.steps.front().model) fail(file + ": steps[0].model: missing (the first step opens the model)");
  return lesson;
}

Lesson loadLesson(const QString& path) { return parseLesson(readWholeFile(path.toStdString(), 1 << 20), path); }

LessonState lessonStateAt(const Lesson& lesson, int index) {
  LessonState st;
  for (int i = 0; i <= index && i < int(lesson.steps.size()); ++i) {
    const LessonStep& s = lesson.steps[size_t(i)];
    if (s.model) {  // a new model starts from a clean state
      st = LessonState();
      st.model = *s.model;
    }
    if (s.branch) st.branch = *s.branch;
    if (s.step) st.step = *s.step;
    if (s.select) st.select = *s.select;
    if (s.expand) st.expand = *s.expand;
    if (s.panel) st.panel = *s.panel;
    if (s.level) st.level = *s.level;
    if (s.backend) st.backend = *s.backend;
    if (s.overrides) st.overrides = *s.overrides;
    for (const auto& [node, params] : s.params)
      for (const auto& [name, value] : params) st.params[node][name] = value;
    st.run = s.run;
    st.traceStep = s.traceStep.value_or(-1);
    if (i == index) break;
    // What the learner did at an earlier step holds for the steps after it.
    const LessonWait& w = s.wait;
    if (w.kind == LessonWait::ForceOverride) st.overrides.push_back(w.override);
    if (w.kind == LessonWait::SetParam) st.params[w.node][w.param.toStdString()] = w.value;
    if (w.kind == LessonWait::GoToStep) st.step = w.step;
    if (w.kind == LessonWait::SelectNode) st.select = w.node;
  }
  return st;
}

QString lessonsDirectory() {
  if (const QString env = qEnvironmentVariable("TESSERA_LESSONS_DIR"); !env.isEmpty()) return env;
  const QString installed = QCoreApplication::applicationDirPath() + "/../share/tessera/lessons";
  if (QFileInfo(installed).isDir()) return QDir::cleanPath(installed);
  return QStringLiteral(TESSERA_LESSONS_SOURCE_DIR);
}

QStringList shippedLessons() {
  QDir dir(lessonsDirectory());
  QStringList paths;
  for (const QString& name : dir.entryList({"*.json"}, QDir::Files, QDir::Name)) paths << dir.filePath(name);
  return paths;
}

}  // namespace tessera::ui
