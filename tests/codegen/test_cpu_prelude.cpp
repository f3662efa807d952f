// The C++ prelude's masked lanes (tsr_vloadm, tsr_vstorem at 16, 8 and 4 lanes) and even loads, compiled twice with the
// system compiler: for this host (AVX-512's masked moves where it has them) and without AVX-512 (lane by
// lane). Both must load exactly the lanes lo..hi-1 (the others the fill value) and store exactly those, for
// ranges that start before the vector, end past it, are empty or reversed.
#include <QStandardPaths>
#include <QtTest>

#include <vector>

#include "codegen/prelude.h"
#include "runtime/cpu/cpu_compiler.h"
#include "runtime/cpu/shared_library.h"

using namespace tessera;

namespace {

const int kRanges[][2] = {{-3, 5}, {2, 20}, {0, 16}, {5, 5}, {7, 3}, {0, 0}, {-1, 64}, {3, 7}, {0, 8}, {1, 4}};
constexpr int kCount = sizeof(kRanges) / sizeof(kRanges[0]);

// For each width (16, 8, 4 lanes) and range: the loaded lanes, then the destination after the store.
const char* kProbe = R"(
extern "C" void probe(const int* ranges, int count, float* out) {
  float src[16], dst[16];
  for (int i = 0; i < 16; ++i) src[i] = 10.0f + i;
  for (int r = 0; r < count; ++r) {
    const int64_t lo = ranges[2 * r], hi = ranges[2 * r + 1];
    tsr_vf a = tsr_vloadm(src, lo, hi, -1.0f);
    tsr_vf8 b = tsr_vloadm8(src, lo, hi, -1.0f);
    tsr_vf4 c = tsr_vloadm4(src, lo, hi, -1.0f);
    float* o = out + r * 80;
    for (int i = 0; i < TSR_VF; ++i) o[i] = a[i];
    for (int i = 0; i < TSR_VF8; ++i) o[16 + i] = b[i];
    for (int i = 0; i < 4; ++i) o[24 + i] = c[i];
    for (int i = 0; i < 16; ++i) dst[i] = 0.0f;
    tsr_vstorem(dst, tsr_vsplat(7.0f), lo, hi);
    tsr_vstorem8(dst, tsr_vsplat8(8.0f), lo, hi);
    tsr_vstorem4(dst, tsr_vsplat4(9.0f), lo, hi);
    for (int i = 0; i < 16; ++i) o[28 + i] = dst[i];
    o[44] = TSR_VF;
    o[45] = TSR_VF8;
    float wide[31];  // exactly the 2·16-1 elements the even load of 16 lanes may read
    for (int i = 0; i < 31; ++i) wide[i] = 100.0f + i;
    tsr_vf e = tsr_vload_even(wide);
    tsr_vf8 e8 = tsr_vload_even8(wide);
    tsr_vf4 e4 = tsr_vload_even4(wide);
    for (int i = 0; i < TSR_VF; ++i) o[48 + i] = e[i];
    for (int i = 0; i < TSR_VF8; ++i) o[64 + i] = e8[i];
    for (int i = 0; i < 4; ++i) o[72 + i] = e4[i];
  }
}
)";

// What the probe must give for range r: lane i loaded when lo <= i < hi (within the vector's lanes), the
// stores of 7 (the host's vector), then 8 (8 lanes), then 9 (4 lanes) each over their own lanes.
std::vector<float> expected(int r, int vf, int vf8) {
  const int lo = kRanges[r][0], hi = kRanges[r][1];
  auto kept = [&](int i, int n) { return i < n && i >= lo && i < hi; };
  std::vector<float> o(80, 0.0f);
  for (int i = 0; i < vf; ++i) o[i] = kept(i, vf) ? 10.0f + i : -1.0f;
  for (int i = 0; i < vf8; ++i) o[16 + i] = kept(i, vf8) ? 10.0f + i : -1.0f;
  for (int i = 0; i < 4; ++i) o[24 + i] = kept(i, 4) ? 10.0f + i : -1.0f;
  for (int i = 0; i < 16; ++i) o[28 + i] = kept(i, 4) ? 9.0f : kept(i, vf8) ? 8.0f : kept(i, vf) ? 7.0f : 0.0f;
  o[44] = float(vf);
  o[45] = float(vf8);
  for (int i = 0; i < vf; ++i) o[48 + i] = 100.0f + 2 * i;  // every other element
  for (int i = 0; i < vf8; ++i) o[64 + i] = 100.0f + 2 * i;
  for (int i = 0; i < 4; ++i) o[72 + i] = 100.0f + 2 * i;
  return o;
}

// Builds the prelude and the probe with `extra` flags (by `compiler`, default the backend's) and checks every
// range; returns the host's lanes.
int checkBuild(const std::vector<std::string>& extra, const std::string& compiler = "") {
  std::vector<std::string> flags = cpu::CpuCompiler::defaultFlags();
  flags.insert(flags.end(), extra.begin(), extra.end());
  cpu::CpuCompiler cc(compiler.empty() ? cpu::CpuCompiler().compilerPath() : compiler, flags);
  cpu::CpuBuild b = cc.build(codegen::detail::cppPrelude() + kProbe, "probe");
  if (!b.ok) {
    qWarning("%s", b.error.c_str());
    return -1;
  }
  std::vector<float> out(size_t(kCount) * 80, 0.0f);  // slots past a vector's lanes stay 0
  b.library->function<void(const int*, int, float*)>("probe")(&kRanges[0][0], kCount, out.data());
  const int vf = int(out[44]), vf8 = int(out[45]);
  for (int r = 0; r < kCount; ++r) {
    std::vector<float> want = expected(r, vf, vf8), got(out.begin() + r * 80, out.begin() + r * 80 + 80);
    for (int i = 0; i < 80; ++i)
      if (got[i] != want[i]) {
        qWarning("range [%d, %d), slot %d: %g, expected %g", kRanges[r][0], kRanges[r][1], i, got[i], want[i]);
        return -1;
      }
  }
  return vf;
}

}  // namespace

class TestCpuPrelude : public QObject {
  Q_OBJECT
 private slots:
  void maskedLanesOnTheHostsMoves() {
    const int lanes = checkBuild({});
    QVERIFY(lanes > 0);
    qInfo("host vectors: %d lanes", lanes);
  }
  void maskedLanesWithAvx() {
    // Without AVX-512 the masked moves are AVX's vmaskmovps (8-lane vectors where AVX2 remains).
#if !defined(__x86_64__)
    QSKIP("-mno-avx512f is an x86 flag; this host's vectors take the lane-by-lane path already");
#endif
    const int lanes = checkBuild({"-mno-avx512f"});
    QVERIFY(lanes > 0);
    QVERIFY(lanes <= 8);
  }
  void maskedLanesOneByOne() {
    // Without AVX (SSE's 4 lanes) they are the lane-by-lane fallback.
#if !defined(__x86_64__)
    QSKIP("-mno-avx is an x86 flag; this host's vectors take the lane-by-lane path already");
#endif
    QCOMPARE(checkBuild({"-mno-avx512f", "-mno-avx2", "-mno-avx", "-mno-fma"}), 4);
  }
  // The backend may find clang++ instead of g++ (cpu_compiler.cpp): the prelude compiles there too (its own
  // paths where GCC's builtins differ) and gives the same lanes.
  void maskedLanesWithClang() {
    const QString clang = QStandardPaths::findExecutable("clang++");
    if (clang.isEmpty()) QSKIP("clang++ is not installed: the prelude is checked with the backend's compiler only");
    QVERIFY(checkBuild({}, clang.toStdString()) > 0);
  }
};

QTEST_GUILESS_MAIN(TestCpuPrelude)
#include "test_cpu_prelude.moc"
