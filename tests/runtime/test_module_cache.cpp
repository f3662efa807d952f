// The compiled-module cache (core/runtime/cache): a miss then a hit that runs no compiler, a change of any key
// field misses, damaged entries (corrupt, truncated, foreign, another key's) are misses with a warning and are
// replaced by the next store, concurrent stores of one key leave one whole entry, the size limit, trimming the
// least recently used, the default folder and its switch; and the bounded job pool.
#include <QtTest>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "runtime/cache/module_cache.h"
#include "runtime/cache/parallel_jobs.h"

using namespace tessera;
using namespace tessera::modcache;
namespace fs = std::filesystem;

namespace {

ModuleKey sampleKey() { return {"cubin", "__global__ void k() {}", "-std=c++17", "sm_90", "NVRTC 13.0"}; }

// What a backend does: the cache first, else "compile" (counted) and store.
std::string imageFor(const ModuleCache& cache, const ModuleKey& key, int& compiles, std::string* warning = nullptr) {
  if (std::optional<std::string> hit = cache.find(key, warning)) return *hit;
  ++compiles;
  std::string image = "ELF image of " + key.source + " for " + key.target + std::string(1000, '\0') + "end";
  cache.store(key, image);
  return image;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

size_t filesIn(const std::string& dir) {
  size_t n = 0;
  for (auto it = fs::directory_iterator(dir); it != fs::directory_iterator(); ++it) ++n;
  return n;
}

// Restores an environment variable when the test ends.
struct EnvGuard {
  std::string name;
  std::optional<std::string> old;
  explicit EnvGuard(std::string n) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
  }
  ~EnvGuard() {
    if (old) setenv(name.c_str(), old->c_str(), 1);
    else unsetenv(name.c_str());
  }
};

}  // namespace

class TestModuleCache : public QObject {
  Q_OBJECT
 private slots:
  void missThenHitRunsNoCompiler() {
    QTemporaryDir dir;
    ModuleCache cache(dir.path().toStdString());
    int compiles = 0;
    std::string first = imageFor(cache, sampleKey(), compiles);
    QCOMPARE(compiles, 1);
    QVERIFY(fs::exists(cache.pathFor(sampleKey())));
    std::string warning;
    std::string second = imageFor(cache, sampleKey(), compiles, &warning);
    QCOMPARE(compiles, 1);  // read from the entry, not compiled
    QCOMPARE(second, first);
    QVERIFY2(warning.empty(), warning.c_str());
    QCOMPARE(filesIn(cache.dir()), size_t(1));  // no temporary files left behind
  }

  void anyKeyFieldChangeMisses() {
    QTemporaryDir dir;
    ModuleCache cache(dir.path().toStdString());
    int compiles = 0;
    imageFor(cache, sampleKey(), compiles);
    std::vector<ModuleKey> changed(5, sampleKey());
    changed[0].source += " ";
    changed[1].options += " -lineinfo";
    changed[2].target = "sm_80";
    changed[3].toolkit = "NVRTC 12.8";
    changed[4].kind = "cpu-so";
    for (const ModuleKey& k : changed) {
      QVERIFY(k.hash() != sampleKey().hash());
      QVERIFY(!cache.find(k));
    }
    for (const ModuleKey& k : changed) imageFor(cache, k, compiles);
    QCOMPARE(compiles, 6);
    for (const ModuleKey& k : changed) imageFor(cache, k, compiles);
    QCOMPARE(compiles, 6);
    // Fields are framed by their lengths: moving a character from one field to the next is another key.
    ModuleKey a = sampleKey(), b = sampleKey();
    a.options = "-std=c++17";
    a.target = "sm_90";
    b.options = "-std=c++17s";
    b.target = "m_90";
    QVERIFY(a.hash() != b.hash());
  }

  void damagedEntriesAreMissesAndReplaced_data() {
    QTest::addColumn<QString>("damage");
    QTest::addColumn<QString>("reason");
    QTest::newRow("one image byte flipped") << "flip" << "corrupt";
    QTest::newRow("truncated") << "truncate" << "truncated";
    QTest::newRow("grown") << "append" << "overlong";
    QTest::newRow("not an entry") << "garbage" << "not a module cache entry";
    QTest::newRow("no header end") << "headless" << "no header";
    QTest::newRow("empty file") << "empty" << "no header";
    QTest::newRow("another key's entry") << "foreign" << "another module";
  }
  void damagedEntriesAreMissesAndReplaced() {
    QFETCH(QString, damage);
    QFETCH(QString, reason);
    QTemporaryDir dir;
    ModuleCache cache(dir.path().toStdString());
    int compiles = 0;
    std::string good = imageFor(cache, sampleKey(), compiles);
    std::string path = cache.pathFor(sampleKey()), entry = readFile(path);
    if (damage == "flip") entry[entry.size() - 10] ^= 0x20;
    if (damage == "truncate") entry.resize(entry.size() - 100);
    if (damage == "append") entry += "x";
    if (damage == "garbage") entry = "\x7f" "ELF\n\nnot ours";
    if (damage == "headless") entry = "tessera-module 1\nkey 0\n";
    if (damage == "empty") entry.clear();
    if (damage == "foreign") {
      ModuleKey other = sampleKey();
      other.source = "__global__ void other() {}";
      cache.store(other, "other image");
      entry = readFile(cache.pathFor(other));  // a whole, valid entry, but for another key
    }
    writeFile(path, entry);
    std::string warning;
    QVERIFY(!cache.find(sampleKey(), &warning));  // never loaded
    QVERIFY2(warning.find(reason.toStdString()) != std::string::npos, warning.c_str());
    QVERIFY2(warning.find(path) != std::string::npos, warning.c_str());  // names the file
    QCOMPARE(imageFor(cache, sampleKey(), compiles), good);  // compiled again
    QCOMPARE(compiles, 2);
    QCOMPARE(imageFor(cache, sampleKey(), compiles), good);  // and the new entry is whole
    QCOMPARE(compiles, 2);
  }

  void concurrentStoresOfOneKeyLeaveOneWholeEntry() {
    QTemporaryDir dir;
    ModuleCache cache(dir.path().toStdString());
    std::atomic<int> compiles{0}, wrong{0};
    std::string expected = "image " + std::string(1 << 20, 'x');  // large enough for writes to overlap
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
      threads.emplace_back([&] {
        for (int round = 0; round < 5; ++round) {
          std::optional<std::string> hit = cache.find(sampleKey());
          if (!hit) {
            ++compiles;
            cache.store(sampleKey(), expected);
          } else if (*hit != expected) {
            ++wrong;  // a reader saw a half-written entry
          }
        }
      });
    for (auto& t : threads) t.join();
    QCOMPARE(wrong.load(), 0);
    QVERIFY(compiles.load() >= 1);
    QCOMPARE(cache.find(sampleKey()).value_or(""), expected);
    QCOMPARE(filesIn(cache.dir()), size_t(1));
  }

  void imagesOverTheLimitAreNotStored() {
    QTemporaryDir dir;
    ModuleCache cache(dir.path().toStdString(), 100);
    std::string why = cache.store(sampleKey(), std::string(101, 'x'));
    QVERIFY2(why.find("over the limit of 100") != std::string::npos, why.c_str());
    QVERIFY(!cache.find(sampleKey()));
    QVERIFY(cache.store(sampleKey(), std::string(100, 'x')).empty());
    QCOMPARE(cache.find(sampleKey())->size(), size_t(100));
  }

  void trimRemovesTheLeastRecentlyUsed() {
    QTemporaryDir dir;
    ModuleCache cache(dir.path().toStdString());
    std::vector<ModuleKey> keys;
    auto past = fs::file_time_type::clock::now() - std::chrono::hours(1);
    for (int i = 0; i < 10; ++i) {
      keys.push_back(sampleKey());
      keys.back().source += std::to_string(i);
      QVERIFY(cache.store(keys.back(), std::string(1000, char('a' + i))).empty());
      fs::last_write_time(cache.pathFor(keys.back()), past + std::chrono::seconds(i));  // stored in key order
    }
    QVERIFY(cache.find(keys[0]));  // the oldest, used again now
    int64_t entry = int64_t(fs::file_size(cache.pathFor(keys[0])));
    QCOMPARE(cache.trim(100 * entry), size_t(0));  // within the limit: nothing goes
    size_t removed = cache.trim(5 * entry);         // down to 3/4 of 5 entries: 3 stay
    QCOMPARE(removed, size_t(7));
    QVERIFY(cache.find(keys[0]));                   // kept: used most recently
    QVERIFY(cache.find(keys[9]) && cache.find(keys[8]));
    for (int i = 1; i < 8; ++i) QVERIFY(!cache.find(keys[i]));
    QCOMPARE(ModuleCache().trim(0), size_t(0));  // disabled: nothing to do
  }

  void anUnwritableFolderIsReportedNotThrown() {
    QTemporaryDir dir;
    std::string file = dir.filePath("plain-file").toStdString();
    writeFile(file, "x");
    ModuleCache cache(file + "/modules");  // a folder under a file cannot be made
    std::string why = cache.store(sampleKey(), "image");
    QVERIFY2(why.find("module not cached") != std::string::npos, why.c_str());
    QVERIFY(!cache.find(sampleKey()));
  }

  void defaultFolderAndSwitch() {
    EnvGuard dirGuard("TESSERA_CACHE_DIR"), switchGuard("TESSERA_MODULE_CACHE");
    QTemporaryDir dir;
    setenv("TESSERA_CACHE_DIR", dir.path().toUtf8().constData(), 1);
    unsetenv("TESSERA_MODULE_CACHE");
    QCOMPARE(defaultModuleCache().dir(), (fs::path(dir.path().toStdString()) / "modules").string());
    QVERIFY(defaultModuleCache().enabled());
    for (const char* off : {"0", "off"}) {
      setenv("TESSERA_MODULE_CACHE", off, 1);
      ModuleCache none = defaultModuleCache();
      QVERIFY(!none.enabled());
      QVERIFY(none.store(sampleKey(), "image").empty());
      QVERIFY(!none.find(sampleKey()));
    }
    QVERIFY(!fs::exists(fs::path(dir.path().toStdString()) / "modules"));
  }

  void jobsRunOnceEachOnBoundedThreads() {
    std::vector<std::atomic<int>> runs(100);
    std::atomic<int> running{0}, most{0};
    runJobs(runs.size(), [&](size_t i) {
      int now = ++running;
      for (int m = most.load(); now > m && !most.compare_exchange_weak(m, now);) {
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      ++runs[i];
      --running;
    }, 3);
    for (auto& r : runs) QCOMPARE(r.load(), 1);
    QVERIFY(most.load() <= 3);
    QVERIFY(hardwareThreads() >= 1);
    runJobs(0, [](size_t) { QFAIL("no jobs to run"); });
  }

  void aThrowingJobLetsTheOthersFinish() {
    std::atomic<int> done{0};
    bool thrown = false;
    try {
      runJobs(20, [&](size_t i) {
        if (i == 3) throw std::runtime_error("job 3 failed");
        ++done;
      }, 4);
    } catch (const std::runtime_error& e) {
      thrown = std::string(e.what()) == "job 3 failed";
    }
    QVERIFY(thrown);
    QCOMPARE(done.load(), 19);
  }
};

QTEST_APPLESS_MAIN(TestModuleCache)
#include "test_module_cache.moc"
