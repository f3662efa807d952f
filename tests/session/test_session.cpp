// Session files: the round trip of every field, reopening a compiled session with overrides, the errors for
// corrupt, foreign, newer and truncated files, the embedded model fallback, atomic writes and autosave recovery.
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <QtTest>
#include <filesystem>
#include <fstream>

#include "frontend/model_io.h"
#include "ir/error.h"
#include "io/atomic_file.h"
#include "session/session.h"

using namespace tessera;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string sample(const char* name) { return std::string(TESSERA_SOURCE_DIR) + "/samples/" + name; }

void writeText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string readText(const std::string& path) { return readWholeFile(path, 1 << 30); }

// The message of the Error that `f` throws; empty when it throws none.
template <class F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

// Group id → node ids, to compare two compiles.
std::map<std::string, std::vector<std::string>> groupsOf(const CompileResult& r) {
  std::map<std::string, std::vector<std::string>> groups;
  for (const FusedGroup& g : r.fusion->groups)
    for (const GroupNode& n : g.nodes) groups[g.id].push_back(n.id);
  return groups;
}

Override fuseRule(OverrideKind kind, const std::string& producer, const std::string& consumer) {
  Override o;
  o.kind = kind;
  o.producer = producer;
  o.consumer = consumer;
  return o;
}

Override split(const std::string& group) {
  Override o;
  o.kind = OverrideKind::Split;
  o.group = group;
  return o;
}

Override disablePass(const std::string& pass) {
  Override o;
  o.kind = OverrideKind::DisablePass;
  o.pass = pass;
  return o;
}

Session fullSession(const std::string& modelPath) {
  Session s = sessionForModel(modelPath, /*embed=*/true);
  s.pipeline = {.name = "o0", .disabled = {"decompose", "fuse"}, .stopAfter = "cse", .fuel = 7};
  s.overrides = {fuseRule(OverrideKind::ForbidFuse, "fc1", "bias1"), split("act"), disablePass("cse")};
  s.scheduleTraces = json{{"k0", json{{"tile", {32, 64}}, {"unroll", 4}}}};
  s.tuning = json{{"best", 1.25}, {"trials", json::array({1, 2, 3})}};
  s.lastRun = json{{"backend", "cpu"}, {"ms", 0.5}, {"ok", true}};
  s.view = json{{"step", 3}, {"level", "kernel"}, {"selection", "fc2"}, {"layout", {{"split", 0.4}}}};
  return s;
}

}  // namespace

class TestSession : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  std::string dir_;

  std::string path(const std::string& name) { return dir_ + "/" + name; }
  std::string copyOfSample(const char* name) {
    fs::copy_file(sample(name), path(name), fs::copy_options::overwrite_existing);
    return path(name);
  }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    dir_ = tmp_.path().toStdString();
  }

  void saveThenLoadKeepsEveryField() {
    std::string model = copyOfSample("mlp.tsr");
    Session s = fullSession(model);
    saveSession(s, path("full.tessera"));
    Session t = loadSession(path("full.tessera"));
    QCOMPARE(t.model.path, fs::absolute(model).lexically_normal().string());
    QCOMPARE(t.model.hash, s.model.hash);
    QVERIFY(t.model.hash.starts_with("fnv1a64:") && t.model.hash.size() == 8 + 16);
    QVERIFY(t.model.embeddedTsr && *t.model.embeddedTsr == *s.model.embeddedTsr);
    QCOMPARE(t.pipeline.name, std::string("o0"));
    QCOMPARE(t.pipeline.disabled, (std::set<std::string>{"decompose", "fuse"}));
    QCOMPARE(t.pipeline.stopAfter, std::string("cse"));
    QCOMPARE(t.pipeline.fuel.value_or(-1), int64_t(7));
    QCOMPARE(t.overrides.size(), size_t(3));
    QCOMPARE(t.overrides[0].kind, OverrideKind::ForbidFuse);
    QCOMPARE(t.overrides[0].producer, std::string("fc1"));
    QCOMPARE(t.overrides[0].consumer, std::string("bias1"));
    QCOMPARE(t.overrides[1].group, std::string("act"));
    QCOMPARE(t.overrides[2].pass, std::string("cse"));
    QCOMPARE(t.scheduleTraces, s.scheduleTraces);
    QCOMPARE(t.scheduleTraces["k0"]["unroll"].get<int>(), 4);
    QCOMPARE(t.tuning, s.tuning);
    QCOMPARE(t.lastRun, s.lastRun);
    QCOMPARE(t.view, s.view);
    QCOMPARE(t.view["selection"].get<std::string>(), std::string("fc2"));
    QVERIFY(t.warnings.empty() && !t.modelChanged && !t.modelMissing);
    // Saving what was loaded gives the same bytes: nothing is lost or reordered.
    saveSession(t, path("again.tessera"));
    QCOMPARE(readText(path("again.tessera")), readText(path("full.tessera")));
  }

  void compiledSessionReopensToTheSameGroups() {
    std::string model = copyOfSample("mlp.tsr");
    CompileOptions options;
    options.overrides = {fuseRule(OverrideKind::ForbidFuse, "fc2", "bias2")};
    CompileResult first = compileGraph(loadModel(model), options);
    QVERIFY2(first.error.empty() && first.fusion, first.error.c_str());
    QCOMPARE(first.overrides.size(), size_t(1));
    QCOMPARE(first.overrides[0].status, OverrideState::Applied);
    // Without the override: fc1+bias1+gelu and fc2+bias2, two kernels; forbidding fc2 → bias2 makes three.
    QCOMPARE(compileGraph(loadModel(model), {}).fusion->groups.size(), size_t(2));
    QCOMPARE(first.fusion->groups.size(), size_t(3));

    Session s = sessionForModel(model);
    setCompileOptions(s, options);
    saveSession(s, path("compiled.tessera"));
    Session t = loadSession(path("compiled.tessera"));
    CompileResult again = compileGraph(loadSessionModel(t), compileOptionsOf(t));
    QVERIFY2(again.error.empty() && again.fusion, again.error.c_str());
    QCOMPARE(groupsOf(again), groupsOf(first));
    QCOMPARE(again.overrides[0].status, OverrideState::Applied);
  }

  void corruptJsonNamesFileAndByte() {
    writeText(path("bad.tessera"), "{\"format\": \"tessera-session\", \"schema_version\": 1,, }");
    std::string e = errorOf([&] { loadSession(path("bad.tessera")); });
    // Bytes count from 1: the second comma is the 51st.
    QVERIFY2(e.starts_with(path("bad.tessera") + ": not valid JSON at byte 51"), e.c_str());
  }

  void wrongFormatTag() {
    writeText(path("tag.tessera"), R"({"format": "tessera-overrides", "schema_version": 1, "model": {"path": "x"}})");
    std::string e = errorOf([&] { loadSession(path("tag.tessera")); });
    QCOMPARE(e, path("tag.tessera") +
                    ": field 'format': expected \"tessera-session\", found \"tessera-overrides\"");
    writeText(path("notag.tessera"), R"({"schema_version": 1})");
    e = errorOf([&] { loadSession(path("notag.tessera")); });
    QCOMPARE(e, path("notag.tessera") + ": field 'format': missing");
  }

  void wronglyTypedFields() {
    json j = sessionToJson(fullSession(copyOfSample("mlp.tsr")));
    j["branches"][0]["pipeline"]["fuel"] = "lots";
    writeText(path("typed.tessera"), j.dump());
    std::string e = errorOf([&] { loadSession(path("typed.tessera")); });
    QCOMPARE(e, path("typed.tessera") +
                    ": field 'pipeline.fuel': expected a non-negative integer or null (in branch 'main')");
    j = sessionToJson(fullSession(copyOfSample("mlp.tsr")));
    j["view"] = json::array();
    writeText(path("typed.tessera"), j.dump());
    e = errorOf([&] { loadSession(path("typed.tessera")); });
    QCOMPARE(e, path("typed.tessera") + ": field 'view': expected an object, found array");
    j = sessionToJson(fullSession(copyOfSample("mlp.tsr")));
    j.erase("model");
    writeText(path("typed.tessera"), j.dump());
    e = errorOf([&] { loadSession(path("typed.tessera")); });
    QCOMPARE(e, path("typed.tessera") + ": field 'model': missing");
    j = sessionToJson(fullSession(copyOfSample("mlp.tsr")));
    j["branches"][0]["overrides"][1] = json{{"kind", "split"}};  // no group
    writeText(path("typed.tessera"), j.dump());
    e = errorOf([&] { loadSession(path("typed.tessera")); });
    QVERIFY2(e.starts_with(path("typed.tessera") + ":") && e.find("group") != std::string::npos, e.c_str());
  }

  void newerSchemaIsRefused() {
    json j = sessionToJson(fullSession(copyOfSample("mlp.tsr")));
    j["schema_version"] = 7;
    writeText(path("newer.tessera"), j.dump());
    std::string e = errorOf([&] { loadSession(path("newer.tessera")); });
    QCOMPARE(e, path("newer.tessera") + ": written by a newer Tessera (schema 7, this build reads up to 2)");
  }

  void draftSchemaIsMigrated() {
    std::string model = copyOfSample("mlp.tsr");
    json j{{"format", "tessera-session"}, {"model", model}, {"pipeline", "o0"}, {"fuel", 3},
           {"disabled", {"cse"}}};
    writeText(path("v0.tessera"), j.dump());
    Session s = loadSession(path("v0.tessera"));
    QCOMPARE(s.model.path, model);
    QCOMPARE(s.pipeline.name, std::string("o0"));
    QCOMPARE(s.pipeline.fuel.value_or(-1), int64_t(3));
    QCOMPARE(s.pipeline.disabled, std::set<std::string>{"cse"});
    QVERIFY(s.warnings.empty());  // no hash saved: nothing to compare
  }

  // A version-1 file (one set of options and results at the top level) opens as the one branch "main".
  void version1FileBecomesBranchMain() {
    std::string model = copyOfSample("mlp.tsr");
    json v1{{"format", "tessera-session"}, {"schema_version", 1}, {"model", {{"path", model}}},
            {"pipeline", {{"name", "o0"}, {"fuel", 4}}},
            {"overrides", json::array({{{"kind", "split"}, {"group", "act"}}})},
            {"schedule_traces", {{"fc1", {{"steps", json::array()}}}}}, {"tuning", json::object()},
            {"last_run", {{"backend", "cpu"}}}, {"view", {{"step", 2}}}};
    writeText(path("v1.tessera"), v1.dump());
    Session s = loadSession(path("v1.tessera"));
    QCOMPARE(branchNames(s), std::vector<std::string>{"main"});
    QCOMPARE(s.branch, std::string("main"));
    QCOMPARE(s.pipeline.name, std::string("o0"));
    QCOMPARE(s.pipeline.fuel.value_or(-1), int64_t(4));
    QCOMPARE(s.overrides.size(), size_t(1));
    QCOMPARE(s.overrides[0].group, std::string("act"));
    QCOMPARE(s.lastRun["backend"].get<std::string>(), std::string("cpu"));
    QVERIFY(s.scheduleTraces.contains("fc1"));
    QCOMPARE(s.view["step"].get<int>(), 2);
    QCOMPARE(sessionToJson(s)["schema_version"].get<int>(), 2);
  }

  // Branches keep their own options and results, their order and which one is active; FILE#BRANCH picks one.
  void branchesRoundTripAndAreNamedByRef() {
    Session s = fullSession(copyOfSample("mlp.tsr"));
    SessionBranch split = activeBranch(s);
    split.name = "split fc";
    split.overrides = {fuseRule(OverrideKind::ForbidFuse, "fc2", "bias2")};
    split.lastRun = json{{"backend", "cpu"}, {"total_ms", 2.0}};
    SessionBranch plain;
    plain.name = "plain";
    setBranches(s, {activeBranch(s), split, plain}, "split fc");
    QCOMPARE(branchNames(s), (std::vector<std::string>{"main", "split fc", "plain"}));
    saveSession(s, path("branches.tessera"));
    Session t = loadSession(path("branches.tessera"));
    QCOMPARE(branchNames(t), branchNames(s));
    QCOMPARE(t.branch, std::string("split fc"));
    QCOMPARE(t.overrides.size(), size_t(1));
    QCOMPARE(t.lastRun["total_ms"].get<double>(), 2.0);
    switchBranch(t, "main");
    QCOMPARE(t.overrides.size(), size_t(3));
    QCOMPARE(t.pipeline.name, std::string("o0"));
    QCOMPARE(branchNames(t), branchNames(s));  // switching keeps the order
    Session p = loadSessionRef(path("branches.tessera") + "#plain");
    QCOMPARE(p.branch, std::string("plain"));
    QVERIFY(p.overrides.empty());
    std::string e = errorOf([&] { loadSessionRef(path("branches.tessera") + "#nope"); });
    QCOMPARE(e, path("branches.tessera") + ": no branch 'nope' in the session (branches: main, split fc, plain)");
    QCOMPARE(parseSessionRef("a#b.tsr").path, std::string("a#b.tsr"));
    QVERIFY(isSessionPath("x.TESSERA#b") && !isSessionPath("x.tsr"));
    e = errorOf([&] { setBranches(s, {plain, plain}, "plain"); });
    QCOMPARE(e, std::string("two session branches are named 'plain'"));
  }

  void truncatedFile() {
    saveSession(fullSession(copyOfSample("mlp.tsr")), path("cut.tessera"));
    std::string text = readText(path("cut.tessera"));
    writeText(path("cut.tessera"), text.substr(0, text.size() / 2));
    std::string e = errorOf([&] { loadSession(path("cut.tessera")); });
    QVERIFY2(e.starts_with(path("cut.tessera") + ": not valid JSON at byte ") &&
                 e.find("truncated") != std::string::npos, e.c_str());
  }

  void missingModelFallsBackToEmbeddedCopy() {
    std::string model = path("gone.tsr");
    fs::copy_file(sample("mlp.tsr"), model, fs::copy_options::overwrite_existing);
    saveSession(sessionForModel(model, /*embed=*/true), path("gone.tessera"));
    saveSession(sessionForModel(model, /*embed=*/false), path("gone-plain.tessera"));
    fs::remove(model);
    Session s = loadSession(path("gone.tessera"));
    QVERIFY(s.modelMissing && !s.modelChanged);
    QCOMPARE(s.warnings.size(), size_t(1));
    QVERIFY2(s.warnings[0].find("missing; using the copy embedded") != std::string::npos, s.warnings[0].c_str());
    Graph g = loadSessionModel(s);
    QCOMPARE(g.numNodes(), size_t(5));
    Session plain = loadSession(path("gone-plain.tessera"));
    std::string e = errorOf([&] { loadSessionModel(plain); });
    QCOMPARE(e, "model '" + model + "' is missing and the session has no embedded copy");
  }

  void changedModelIsAWarning() {
    std::string model = path("edited.tsr");
    fs::copy_file(sample("mlp.tsr"), model, fs::copy_options::overwrite_existing);
    Session saved = sessionForModel(model);
    saveSession(saved, path("edited.tessera"));
    writeText(model, readText(model) + "# edited\n");
    Session s = loadSession(path("edited.tessera"));
    QVERIFY(s.modelChanged && !s.modelMissing);
    QCOMPARE(s.warnings.size(), size_t(1));
    QVERIFY2(s.warnings[0].starts_with("model '" + model + "' changed since the session was saved (hash was " +
                                       saved.model.hash + ", now fnv1a64:"),
             s.warnings[0].c_str());
  }

  void fnvHashOfKnownBytes() {
    writeText(path("a.bin"), "a");
    QCOMPARE(hashModelFile(path("a.bin")), std::string("fnv1a64:af63dc4c8601ec8c"));  // FNV-1a 64 of "a"
    writeText(path("empty.bin"), "");
    QCOMPARE(hashModelFile(path("empty.bin")), std::string("fnv1a64:cbf29ce484222325"));  // the offset basis
  }

  // A write that fails half way (file size limit: works as root too) leaves the old file whole, and no temporary.
  void failedWriteKeepsTheOldFile() {
    Session s = fullSession(copyOfSample("mlp.tsr"));
    saveSession(s, path("keep.tessera"));
    std::string before = readText(path("keep.tessera"));
    s.view["big"] = std::string(100000, 'x');
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit old{};
    ::getrlimit(RLIMIT_FSIZE, &old);
    rlimit small = old;
    small.rlim_cur = 4096;
    ::setrlimit(RLIMIT_FSIZE, &small);
    std::string e = errorOf([&] { saveSession(s, path("keep.tessera")); });
    ::setrlimit(RLIMIT_FSIZE, &old);
    QVERIFY2(e.starts_with(path("keep.tessera") + ": cannot write: "), e.c_str());
    QCOMPARE(readText(path("keep.tessera")), before);
    for (const auto& entry : fs::directory_iterator(dir_))
      QVERIFY2(entry.path().filename().string().find(".tmp-") == std::string::npos, entry.path().c_str());
  }

  void unwritableFolderKeepsTheOldFile() {
    fs::create_directories(path("ro"));
    std::string file = path("ro/s.tessera");
    saveSession(fullSession(copyOfSample("mlp.tsr")), file);
    std::string before = readText(file);
    fs::permissions(path("ro"), fs::perms::owner_read | fs::perms::owner_exec);
    bool root = ::geteuid() == 0;
    Session other;
    other.model.path = "other";
    std::string e = errorOf([&] { saveSession(other, file); });
    fs::permissions(path("ro"), fs::perms::owner_all);
    if (root) QSKIP("running as root: a read-only folder does not stop writes (the size-limit test covers it)");
    QVERIFY2(e.starts_with(file + ": cannot write: Permission denied"), e.c_str());
    QCOMPARE(readText(file), before);
  }

  // tessera-cli compile --save-session, then tessera-cli session prints what was saved.
  void cliSavesAndSummarizesASession() {
    std::string model = copyOfSample("mlp.tsr");
    writeText(path("ov.json"), R"({"overrides": [{"kind": "forbid-fuse", "producer": "fc2", "consumer": "bias2"}]})");
    QProcess compile;
    compile.start(TESSERA_CLI, {"compile", QString::fromStdString(model), "--overrides",
                                QString::fromStdString(path("ov.json")), "--fuel", "9", "--save-session",
                                QString::fromStdString(path("cli.tessera"))});
    QVERIFY(compile.waitForFinished(60000));
    QCOMPARE(compile.exitCode(), 0);
    QVERIFY(compile.readAllStandardOutput().contains("3 kernels for 9 nodes"));
    Session s = loadSession(path("cli.tessera"));
    QCOMPARE(s.overrides.size(), size_t(1));
    QCOMPARE(s.pipeline.fuel.value_or(-1), int64_t(9));
    QVERIFY(!s.model.embeddedTsr);
    QProcess show;
    show.start(TESSERA_CLI, {"session", QString::fromStdString(path("cli.tessera"))});
    QVERIFY(show.waitForFinished(60000));
    QCOMPARE(show.exitCode(), 0);
    QString out = show.readAllStandardOutput();
    QVERIFY2(out.contains("(unchanged)") && out.contains("fuel: 9") && out.contains("forbid-fuse fc2 -> bias2") &&
                 out.contains("last run: not stored"),
             qPrintable(out));
    writeText(path("newer.tessera"), R"({"format": "tessera-session", "schema_version": 3})");
    show.start(TESSERA_CLI, {"session", QString::fromStdString(path("newer.tessera"))});
    QVERIFY(show.waitForFinished(60000));
    QCOMPARE(show.exitCode(), 2);
    QVERIFY(show.readAllStandardError().contains("written by a newer Tessera (schema 3, this build reads up to 2)"));
  }

  // tessera-cli session FILE --new-branch NAME --overrides F: the window's branch actions, saved to the file.
  void cliAddsABranch() {
    std::string model = copyOfSample("mlp.tsr");
    writeText(path("ov2.json"), R"({"overrides": [{"kind": "split", "group": "fc1"}]})");
    QProcess p;
    p.start(TESSERA_CLI, {"compile", QString::fromStdString(model), "--save-session", QString::fromStdString(path("br.tessera"))});
    QVERIFY(p.waitForFinished(60000) && p.exitCode() == 0);
    p.start(TESSERA_CLI, {"session", QString::fromStdString(path("br.tessera")), "--new-branch", "split", "--overrides",
                          QString::fromStdString(path("ov2.json"))});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 0);
    QVERIFY(p.readAllStandardOutput().contains("branches: main, split (shown)"));
    Session s = loadSession(path("br.tessera"));
    QCOMPARE(branchNames(s), (std::vector<std::string>{"main", "split"}));
    QCOMPARE(s.overrides.size(), size_t(1));
    switchBranch(s, "main");
    QVERIFY(s.overrides.empty());
    p.start(TESSERA_CLI, {"session", QString::fromStdString(path("br.tessera") + "#main"), "--new-branch", "split"});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 2);
    QVERIFY(p.readAllStandardError().contains("two session branches are named 'split'"));
  }

  void autosaveNewerThanSavedIsFound() {
    qputenv("XDG_CACHE_HOME", QByteArray::fromStdString(path("cache")));
    std::string saved = path("work.tessera");
    Session s = fullSession(copyOfSample("mlp.tsr"));
    saveSession(s, saved);
    QCOMPARE(autosavePath(saved).substr(0, path("cache/tessera/autosave/work-").size()),
             path("cache/tessera/autosave/work-"));
    QVERIFY(!findRecoverableAutosave(saved));  // no autosave yet
    s.view["step"] = 9;
    writeAutosave(s, saved);
    fs::last_write_time(saved, fs::last_write_time(autosavePath(saved)) - std::chrono::seconds(10));
    auto found = findRecoverableAutosave(saved);
    QVERIFY(found && *found == autosavePath(saved));
    QCOMPARE(loadSession(*found).view["step"].get<int>(), 9);
    // Saving again makes the autosave older: nothing to recover.
    fs::last_write_time(saved, fs::last_write_time(autosavePath(saved)) + std::chrono::seconds(10));
    QVERIFY(!findRecoverableAutosave(saved));
    discardAutosave(saved);
    QVERIFY(!fs::exists(autosavePath(saved)));
    // Different folders, same file name: different autosaves.
    QVERIFY(autosavePath(path("a/m.tsr")) != autosavePath(path("b/m.tsr")));
    qunsetenv("XDG_CACHE_HOME");
  }
};

QTEST_GUILESS_MAIN(TestSession)
#include "test_session.moc"
