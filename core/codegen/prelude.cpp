#include "codegen/prelude.h"

namespace tessera::codegen::detail {

namespace {

// ONNX's float8 formats in generated code (codes 0..4: e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0), stored as a byte:
// the first four decoded by fields, encoded by rounding to the nearest multiple of the value's binade quantum
// (ties to even), exactly as the reference (ir/float8.cpp) does in double; e8m0, a bare exponent, from the f32's
// exponent field rounded up (Cast's default round_mode). `q` qualifies each function for the target, `bits` is
// its f32-to-bits function.
std::string float8Helpers(const std::string& q, const std::string& bits) {
  return "// float8 (ONNX's e4m3fn 0, e4m3fnuz 1, e5m2 2, e5m2fnuz 3, e8m0 4) in a byte; encode rounds to nearest even\n"
         "// (e8m0: up).\n" + q +
         R"( void tsr_f8_format(int f, int& eb, int& mb, int& bias, bool& inf, bool& uz) {
  eb = f < 2 ? 4 : 5; mb = f < 2 ? 3 : 2; bias = f == 0 ? 7 : f == 1 ? 8 : f == 2 ? 15 : 16;
  inf = f == 2; uz = f == 1 || f == 3;
}
)" + q + R"( double tsr_f8_magnitude(int e, int m, int mb, int bias) {
  return e == 0 ? ldexp((double)m, 1 - bias - mb) : ldexp(1.0 + ldexp((double)m, -mb), e - bias);
}
)" + q + R"( float tsr_f8_decode(unsigned b, int f) {
  if (f == 4) return (b & 0xFFu) == 0xFFu ? NAN : (float)ldexp(1.0, (int)(b & 0xFFu) - 127);
  int eb, mb, bias; bool inf, uz; tsr_f8_format(f, eb, mb, bias, inf, uz);
  const unsigned sign = 1u << (eb + mb), emax = (1u << eb) - 1u, mfull = (1u << mb) - 1u;
  b &= 0xFFu;
  const unsigned e = (b >> mb) & emax, m = b & mfull;
  if (uz && b == sign) return NAN;
  if (inf && e == emax) return m ? NAN : (b & sign) ? -INFINITY : INFINITY;
  if (!inf && !uz && e == emax && m == mfull) return NAN;
  const double v = tsr_f8_magnitude((int)e, (int)m, mb, bias);
  return (float)((b & sign) ? -v : v);
}
)" + q + R"( unsigned tsr_f8_fields(double a, int mb, int bias) {
  const double minNormal = ldexp(1.0, 1 - bias);
  if (a < minNormal) return (unsigned)llround(a / ldexp(minNormal, -mb));
  const int x = ilogb(a);
  return (unsigned)(((x + bias) << mb) | (int)llround((ldexp(a, -x) - 1.0) * (double)(1 << mb)));
}
)" + q + R"( unsigned char tsr_f8_encode(double v, int f, int saturate) {
  if (f == 4) {
    const unsigned u = )" + bits + R"(((float)v), exponent = (u >> 23) & 0xFFu;
    if (exponent == 0xFFu) return 0xFF;
    const bool up = (u & 0x7FFFFFu) != 0 && !(exponent == 0xFEu && saturate);
    return (unsigned char)(exponent + (up ? 1u : 0u));
  }
  int eb, mb, bias; bool inf, uz; tsr_f8_format(f, eb, mb, bias, inf, uz);
  const unsigned sign = 1u << (eb + mb), emax = (1u << eb) - 1u, mfull = (1u << mb) - 1u;
  if (v != v) return (unsigned char)(uz ? sign : sign - 1u);
  const unsigned s = copysign(1.0, v) < 0 ? sign : 0u;
  double a = fabs(v);
  const double top = inf ? tsr_f8_magnitude((int)emax - 1, (int)mfull, mb, bias)
                         : tsr_f8_magnitude((int)emax, (int)(uz ? mfull : mfull - 1u), mb, bias);
  if (a != 0 && a <= 1.7976931348623157e308) {
    const double minNormal = ldexp(1.0, 1 - bias);
    const double quantum = ldexp(1.0, (a < minNormal ? 1 - bias : ilogb(a)) - mb);
    a = nearbyint(a / quantum) * quantum;
  }
  if (a > top) {
    if (saturate) return (unsigned char)(s | tsr_f8_fields(top, mb, bias));
    if (inf) return (unsigned char)(s | (emax << mb));
    return (unsigned char)(uz ? sign : sign - 1u);
  }
  if (a == 0) return (unsigned char)(uz ? 0u : s);
  return (unsigned char)(s | tsr_f8_fields(a, mb, bias));
}
)";
}

}  // namespace

std::string cudaPrelude(bool halfTypes) {
  std::string s;
  if (halfTypes)
    s += "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
         "// Two 16-bit values in one 32-bit register, the first in the low half (an mma operand pair).\n"
         "__device__ __forceinline__ unsigned tsr_pack2(__half lo, __half hi) {\n"
         "  return (unsigned)__half_as_ushort(lo) | ((unsigned)__half_as_ushort(hi) << 16);\n}\n"
         "__device__ __forceinline__ unsigned tsr_pack2(__nv_bfloat16 lo, __nv_bfloat16 hi) {\n"
         "  return (unsigned)__bfloat16_as_ushort(lo) | ((unsigned)__bfloat16_as_ushort(hi) << 16);\n}\n";
  s += R"(#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
template <class T> __device__ __forceinline__ T tsr_max(T a, T b) { return a > b ? a : b; }
template <class T> __device__ __forceinline__ T tsr_min(T a, T b) { return a < b ? a : b; }
// Float max and min that keep a NaN from either side (the reference's and numpy's rule; fmaxf drops it).
template <class T> __device__ __forceinline__ T tsr_fmax(T a, T b) { return (a > b || a != a) ? a : b; }
template <class T> __device__ __forceinline__ T tsr_fmin(T a, T b) { return (a < b || a != a) ? a : b; }
// Online softmax's pair (kernel IR maxsumexp): m the running max, s the sum of exp(x - m) so far; one exp a
// value. merge combines two threads' pairs.
__device__ __forceinline__ void tsr_maxsumexp(float& m, float& s, float x) {
  if (x > m) { s = s * expf(m - x) + 1.0f; m = x; } else if (x != -INFINITY) { s += expf(x - m); }
}
__device__ __forceinline__ void tsr_maxsumexp(double& m, double& s, double x) {
  if (x > m) { s = s * exp(m - x) + 1.0; m = x; } else if (x != -INFINITY) { s += exp(x - m); }
}
__device__ __forceinline__ void tsr_maxsumexp_merge(float& m, float& s, float m2, float s2) {
  const float n = fmaxf(m, m2);
  if (n != -INFINITY) s = s * expf(m - n) + s2 * expf(m2 - n);
  m = n;
}
__device__ __forceinline__ void tsr_maxsumexp_merge(double& m, double& s, double m2, double s2) {
  const double n = fmax(m, m2);
  if (n != -INFINITY) s = s * exp(m - n) + s2 * exp(m2 - n);
  m = n;
}
// Float to integer, saturating (C leaves out-of-range conversions undefined); NaN gives 0.
__device__ __forceinline__ long long tsr_ftoi(double v) {
  if (v != v) return 0;
  if (v >= 9.2233720368547758e18) return 9223372036854775807LL;
  if (v <= -9.2233720368547758e18) return -9223372036854775807LL - 1;
  return (long long)v;
}
// An index read from a tensor, checked against ONNX's range -n..n-1 (a negative one counts from the end): the
// index in [0, n), or 0 after recording the kernel's first failure as [check + 1, index, n, position].
__device__ __forceinline__ long long tsr_index(long long* err, int check, long long v, long long n, long long pos) {
  const long long w = v < 0 ? v + n : v;
  if ((unsigned long long)w < (unsigned long long)n) return w;
  if (atomicCAS((unsigned long long*)err, 0ull, (unsigned long long)check + 1ull) == 0ull) {
    err[1] = v; err[2] = n; err[3] = pos;
  }
  return 0;
}
)";
  return s + float8Helpers("__device__ __forceinline__", "__float_as_uint");
}

// The C++ prelude is fixed text: every generated C++ module starts with it.
constexpr const char* kCppPrelude = R"(#include <cstdint>
#include <cstring>
// The C library's math, declared here: <cmath> costs a module about 0.35 s of its compile, more than most
// kernels' own code (docs/performance.md, CPU 2026-12-06). Each for float (expf) and double (exp).
#define TSR_LIBM(name) float name##f(float); double name(double);
#define TSR_LIBM2(name) float name##f(float, float); double name(double, double);
extern "C" {
TSR_LIBM(fabs) TSR_LIBM(exp) TSR_LIBM(log) TSR_LIBM(sqrt) TSR_LIBM(tanh) TSR_LIBM(erf) TSR_LIBM(erfc)
TSR_LIBM(sin) TSR_LIBM(cos) TSR_LIBM(tan) TSR_LIBM(asin) TSR_LIBM(acos) TSR_LIBM(atan) TSR_LIBM(sinh)
TSR_LIBM(cosh) TSR_LIBM(asinh) TSR_LIBM(acosh) TSR_LIBM(atanh) TSR_LIBM(floor) TSR_LIBM(ceil) TSR_LIBM(rint)
TSR_LIBM(nearbyint) TSR_LIBM2(fmod) TSR_LIBM2(pow) TSR_LIBM2(copysign)
float ldexpf(float, int); double ldexp(double, int); long long llround(double); int ilogb(double);
}
#define INFINITY (__builtin_inff())
#define NAN (__builtin_nanf(""))
// A kernel's global workspace on the CPU (a GPU form's partials): zeroed, freed on return (no <memory> either).
template <class T> struct tsr_workspace {
  T* p;
  explicit tsr_workspace(long long n) : p(new T[n]()) {}
  ~tsr_workspace() { delete[] p; }
  tsr_workspace(const tsr_workspace&) = delete;
  tsr_workspace& operator=(const tsr_workspace&) = delete;
};
static inline float tsr_exp(float x) { return expf(x); }
static inline double tsr_exp(double x) { return exp(x); }
extern "C" int omp_get_level(void);  // OpenMP's (the module is built with -fopenmp): parallel regions around the caller
// The CPU vector path (docs/codegen.md): one vector register of f32 lanes, as wide as this host's (the module
// is compiled with -march=native); loads and stores through memcpy, so no alignment is assumed.
#if defined(__AVX512F__)
#define TSR_VBYTES 64
#elif defined(__AVX__)
#define TSR_VBYTES 32
#else
#define TSR_VBYTES 16
#endif
#define TSR_VF (TSR_VBYTES / 4)
typedef float tsr_vf __attribute__((vector_size(TSR_VBYTES)));
static inline tsr_vf tsr_vload(const float* p) { tsr_vf v; std::memcpy(&v, p, sizeof v); return v; }
static inline void tsr_vstore(float* p, tsr_vf v) { std::memcpy(p, &v, sizeof v); }
static inline tsr_vf tsr_vsplat(float x) { return x - (tsr_vf){}; }
// Narrower vectors for a kernel whose vectorized loops are multiples of 8 (or 4) lanes but not of 16, such as
// a 56-wide image row in tiles of 8: at most 8 (or 4) lanes a step, the host's width where it is narrower.
#define TSR_VBYTES8 (TSR_VBYTES < 32 ? TSR_VBYTES : 32)
#define TSR_VF8 (TSR_VBYTES8 / 4)
typedef float tsr_vf8 __attribute__((vector_size(TSR_VBYTES8)));
static inline tsr_vf8 tsr_vload8(const float* p) { tsr_vf8 v; std::memcpy(&v, p, sizeof v); return v; }
static inline void tsr_vstore8(float* p, tsr_vf8 v) { std::memcpy(p, &v, sizeof v); }
static inline tsr_vf8 tsr_vsplat8(float x) { return x - (tsr_vf8){}; }
#define TSR_VF4 4
typedef float tsr_vf4 __attribute__((vector_size(16)));
static inline tsr_vf4 tsr_vload4(const float* p) { tsr_vf4 v; std::memcpy(&v, p, sizeof v); return v; }
static inline void tsr_vstore4(float* p, tsr_vf4 v) { std::memcpy(p, &v, sizeof v); }
static inline tsr_vf4 tsr_vsplat4(float x) { return x - (tsr_vf4){}; }
// Lane masks: i32 vectors with as many lanes as the f32 vectors (a comparison of two gives one), the lane
// indices 0, 1, ..., and a lane test's bound clamped to i32 (one that far out passes or fails every lane alike).
typedef int32_t tsr_vi __attribute__((vector_size(TSR_VBYTES)));
typedef int32_t tsr_vi8 __attribute__((vector_size(TSR_VBYTES8)));
typedef int32_t tsr_vi4 __attribute__((vector_size(16)));
template <class VI> static inline VI tsr_iota_of() {
  VI v;
  for (int i = 0; i < (int)(sizeof(VI) / 4); ++i) v[i] = i;
  return v;
}
static inline tsr_vi tsr_viota() { return tsr_iota_of<tsr_vi>(); }
static inline tsr_vi8 tsr_viota8() { return tsr_iota_of<tsr_vi8>(); }
static inline tsr_vi4 tsr_viota4() { return tsr_iota_of<tsr_vi4>(); }
static inline int32_t tsr_gap(int64_t g) { return (int32_t)(g < -(1 << 30) ? -(1 << 30) : g > (1 << 30) ? (1 << 30) : g); }
// Masked lanes: lanes lo..hi-1 of the vector at p loaded (the others `fill`) or stored (the others left as they
// are), no memory touched outside them: a guarded row read or written where it overlaps its bounds, such as a
// padded patch's fill. AVX-512's masked moves where the host has them, else AVX's (vmaskmovps), through the
// builtins their intrinsics are made of (<immintrin.h> costs 0.25 s a module; GCC's builtins, clang's differ);
// lane by lane otherwise.
static inline uint32_t tsr_lanemask(int64_t lo, int64_t hi, int64_t n) {
  lo = lo < 0 ? 0 : lo;
  hi = hi > n ? n : hi;
  return lo >= hi ? 0u : (uint32_t)((1ull << hi) - (1ull << lo));
}
template <class V> static inline V tsr_vloadm_lanes(const float* p, int64_t lo, int64_t hi, float fill) {
  V v = fill - (V){};
  const uint32_t m = tsr_lanemask(lo, hi, sizeof(V) / 4);
  for (int i = 0; i < (int)(sizeof(V) / 4); ++i)
    if (m >> i & 1u) v[i] = p[i];
  return v;
}
template <class V> static inline void tsr_vstorem_lanes(float* p, V v, int64_t lo, int64_t hi) {
  const uint32_t m = tsr_lanemask(lo, hi, sizeof(V) / 4);
  for (int i = 0; i < (int)(sizeof(V) / 4); ++i)
    if (m >> i & 1u) p[i] = v[i];
}
#if defined(__AVX__) && defined(__GNUC__) && !defined(__clang__)
// AVX's masked moves (vmaskmovps, no AVX-512) take the lanes kept as a vector: all ones in lanes lo..hi-1; one
// pair for the 8- and 4-lane vectors.
template <class VI> static inline VI tsr_lanebits(int64_t lo, int64_t hi) {
  const VI i = tsr_iota_of<VI>();
  return (i >= (VI){} + tsr_gap(lo)) & (i < (VI){} + tsr_gap(hi));
}
template <class V, class VI> static inline V tsr_avx_loadm(const float* p, int64_t lo, int64_t hi, float fill) {
  const VI m = tsr_lanebits<VI>(lo, hi);
  V v;
  if constexpr (sizeof(V) == 32) v = __builtin_ia32_maskloadps256((const V*)p, m);
  else v = __builtin_ia32_maskloadps((const V*)p, m);
  return m ? v : fill - (V){};
}
template <class V, class VI> static inline void tsr_avx_storem(float* p, V v, int64_t lo, int64_t hi) {
  if constexpr (sizeof(V) == 32) __builtin_ia32_maskstoreps256((V*)p, tsr_lanebits<VI>(lo, hi), v);
  else __builtin_ia32_maskstoreps((V*)p, tsr_lanebits<VI>(lo, hi), v);
}
#endif
#if defined(__AVX512F__) && defined(__GNUC__) && !defined(__clang__)
static inline tsr_vf tsr_vloadm(const float* p, int64_t lo, int64_t hi, float fill) {
  return __builtin_ia32_loadups512_mask(p, tsr_vsplat(fill), (uint16_t)tsr_lanemask(lo, hi, 16));
}
static inline void tsr_vstorem(float* p, tsr_vf v, int64_t lo, int64_t hi) {
  __builtin_ia32_storeups512_mask(p, v, (uint16_t)tsr_lanemask(lo, hi, 16));
}
#elif defined(__AVX__) && defined(__GNUC__) && !defined(__clang__)
static inline tsr_vf tsr_vloadm(const float* p, int64_t lo, int64_t hi, float fill) { return tsr_avx_loadm<tsr_vf, tsr_vi>(p, lo, hi, fill); }
static inline void tsr_vstorem(float* p, tsr_vf v, int64_t lo, int64_t hi) { tsr_avx_storem<tsr_vf, tsr_vi>(p, v, lo, hi); }
#else
static inline tsr_vf tsr_vloadm(const float* p, int64_t lo, int64_t hi, float fill) { return tsr_vloadm_lanes<tsr_vf>(p, lo, hi, fill); }
static inline void tsr_vstorem(float* p, tsr_vf v, int64_t lo, int64_t hi) { tsr_vstorem_lanes(p, v, lo, hi); }
#endif
#if defined(__AVX512VL__) && defined(__GNUC__) && !defined(__clang__)
static inline tsr_vf8 tsr_vloadm8(const float* p, int64_t lo, int64_t hi, float fill) {
  return __builtin_ia32_loadups256_mask(p, tsr_vsplat8(fill), (uint8_t)tsr_lanemask(lo, hi, 8));
}
static inline void tsr_vstorem8(float* p, tsr_vf8 v, int64_t lo, int64_t hi) {
  __builtin_ia32_storeups256_mask(p, v, (uint8_t)tsr_lanemask(lo, hi, 8));
}
static inline tsr_vf4 tsr_vloadm4(const float* p, int64_t lo, int64_t hi, float fill) {
  return __builtin_ia32_loadups128_mask(p, tsr_vsplat4(fill), (uint8_t)tsr_lanemask(lo, hi, 4));
}
static inline void tsr_vstorem4(float* p, tsr_vf4 v, int64_t lo, int64_t hi) {
  __builtin_ia32_storeups128_mask(p, v, (uint8_t)tsr_lanemask(lo, hi, 4));
}
#elif defined(__AVX__) && defined(__GNUC__) && !defined(__clang__)  // TSR_VBYTES8 is 32 here
static inline tsr_vf8 tsr_vloadm8(const float* p, int64_t lo, int64_t hi, float fill) { return tsr_avx_loadm<tsr_vf8, tsr_vi8>(p, lo, hi, fill); }
static inline void tsr_vstorem8(float* p, tsr_vf8 v, int64_t lo, int64_t hi) { tsr_avx_storem<tsr_vf8, tsr_vi8>(p, v, lo, hi); }
static inline tsr_vf4 tsr_vloadm4(const float* p, int64_t lo, int64_t hi, float fill) { return tsr_avx_loadm<tsr_vf4, tsr_vi4>(p, lo, hi, fill); }
static inline void tsr_vstorem4(float* p, tsr_vf4 v, int64_t lo, int64_t hi) { tsr_avx_storem<tsr_vf4, tsr_vi4>(p, v, lo, hi); }
#else
static inline tsr_vf8 tsr_vloadm8(const float* p, int64_t lo, int64_t hi, float fill) { return tsr_vloadm_lanes<tsr_vf8>(p, lo, hi, fill); }
static inline void tsr_vstorem8(float* p, tsr_vf8 v, int64_t lo, int64_t hi) { tsr_vstorem_lanes(p, v, lo, hi); }
static inline tsr_vf4 tsr_vloadm4(const float* p, int64_t lo, int64_t hi, float fill) { return tsr_vloadm_lanes<tsr_vf4>(p, lo, hi, fill); }
static inline void tsr_vstorem4(float* p, tsr_vf4 v, int64_t lo, int64_t hi) { tsr_vstorem_lanes(p, v, lo, hi); }
#endif
// Every other element from p (p[0], p[2], ..., p[2·(lanes-1)]): a stride-2 window's taps from a local patch.
// Reads p[0 .. 2·lanes-2] only, as two vectors (the second masked) whose even lanes one shuffle keeps.
template <class V, class VI> static inline V tsr_vload_even_of(V a, V b) {
  constexpr int n = sizeof(V) / 4;
#if defined(__GNUC__) && !defined(__clang__)
  VI even;
  for (int i = 0; i < n; ++i) even[i] = 2 * i;
  return __builtin_shuffle(a, b, even);
#else  // clang has no __builtin_shuffle: lane by lane
  V r;
  for (int i = 0; i < n; ++i) r[i] = 2 * i < n ? a[2 * i] : b[2 * i - n];
  return r;
#endif
}
static inline tsr_vf tsr_vload_even(const float* p) {
  return tsr_vload_even_of<tsr_vf, tsr_vi>(tsr_vload(p), tsr_vloadm(p + TSR_VF, 0, TSR_VF - 1, 0.0f));
}
static inline tsr_vf8 tsr_vload_even8(const float* p) {
  return tsr_vload_even_of<tsr_vf8, tsr_vi8>(tsr_vload8(p), tsr_vloadm8(p + TSR_VF8, 0, TSR_VF8 - 1, 0.0f));
}
static inline tsr_vf4 tsr_vload_even4(const float* p) {
  return tsr_vload_even_of<tsr_vf4, tsr_vi4>(tsr_vload4(p), tsr_vloadm4(p + 4, 0, 3, 0.0f));
}
template <class T> static inline T tsr_max(T a, T b) { return a > b ? a : b; }
template <class T> static inline T tsr_min(T a, T b) { return a < b ? a : b; }
// Float max and min that keep a NaN from either side (the reference's and numpy's rule; fmax drops it).
template <class T> static inline T tsr_fmax(T a, T b) { return (a > b || a != a) ? a : b; }
template <class T> static inline T tsr_fmin(T a, T b) { return (a < b || a != a) ? a : b; }
// The same lane by lane on vectors (a vector comparison gives a mask; ?: on a mask selects per lane).
template <class V> static inline V tsr_vfmax(V a, V b) { return ((a > b) | (a != a)) ? a : b; }
template <class V> static inline V tsr_vfmin(V a, V b) { return ((a < b) | (a != a)) ? a : b; }
// exp on f32 vectors, lane by lane: x = n·ln2 + r with |r| <= ln2/2 (ln2 in two parts, so n·ln2 is exact),
// e^r by its Taylor series to r^7 (the first term left out is under 6e-9 of e^r), times 2^n made from exponent
// bits in two halves (2^-127 and 2^128 are no normal floats, their halves are). Measured against std::exp over
// [-87, 88.7]: at most 0.85 ulp (test_rows_cpu). Past 88.72 it is inf, below -87.34 (where exp is denormal or 0)
// it is 0, NaN stays NaN.
template <class V> static inline V tsr_vexp(V x) {
  typedef __typeof__(x < x) I;
  const V zero = {};
  V c = x > 88.75f ? zero + 88.75f : x;  // inside the range the result takes (NaN passes through)
  c = c < -87.5f ? zero - 87.5f : c;
  const V big = zero + 12582912.0f;  // 1.5·2^23: adding it rounds to an integer
  V t = c * 1.44269504088896341f + big;
  V n = t - big;
  V r = (c - n * 0.693359375f) - n * -2.12194440e-4f;
  V p = r * (1.0f / 5040) + (1.0f / 720);
  p = p * r + (1.0f / 120);
  p = p * r + (1.0f / 24);
  p = p * r + (1.0f / 6);
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  I ni = __builtin_convertvector(n, I), half = ni >> 1;
  I e1 = (half + 127) << 23, e2 = (ni - half + 127) << 23;
  V s1, s2;
  std::memcpy(&s1, &e1, sizeof s1);
  std::memcpy(&s2, &e2, sizeof s2);
  V y = p * s1 * s2;
  y = x > 88.7228394f ? zero + INFINITY : y;
  y = x < -87.3365479f ? zero : y;
  return x != x ? x : y;
}
// erf on f32 vectors, lane by lane: below 0.875, x·P(x²) (P fitted to erf(x)/x in double, degree 6, within
// 2.5e-10 of it); up to 3.92, 1 - exp(-x²)·R(t), t = (x - 2.3975) / 1.5225 (R fitted to erfc(x)·exp(x²),
// degree 12, within 1.1e-8 of it); beyond, ±1 (erfc(3.92) < 2^-25). Measured against std::erf over [-5, 5]:
// at most 2.2 ulp (test_rows_cpu).
template <class V> static inline V tsr_verf(V x) {
  const V zero = {};
  V a = x < 0 ? -x : x;
  V u = a * a;
  V p = u * 8.731110354e-05f - 8.224370069e-04f;
  p = p * u + 5.207945726e-03f;
  p = p * u - 2.686209306e-02f;
  p = p * u + 1.128374309e-01f;
  p = p * u - 3.761263686e-01f;
  p = p * u + 1.128379167e+00f;
  V t = (a - 2.3975f) * (1.0f / 1.5225f);
  V q = t * 2.102898682e-05f - 6.038029309e-05f;
  q = q * t + 9.046004521e-05f;
  q = q * t - 2.116912510e-04f;
  q = q * t + 5.908604641e-04f;
  q = q * t - 1.415957063e-03f;
  q = q * t + 3.218618663e-03f;
  q = q * t - 7.172216950e-03f;
  q = q * t + 1.546681682e-02f;
  q = q * t - 3.209808044e-02f;
  q = q * t + 6.388953236e-02f;
  q = q * t - 1.213780662e-01f;
  q = q * t + 2.186978689e-01f;
  V r = a < 0.875f ? a * p : 1.0f - tsr_vexp(-u) * q;
  r = a < 3.92f ? r : zero + 1.0f;
  r = x < 0 ? -r : r;
  return x != x ? x : r;
}
// Online softmax's pair (kernel IR maxsumexp): m the running max, s the sum of exp(x - m) so far.
template <class T> static inline void tsr_maxsumexp(T& m, T& s, T x) {
  if (x > m) { s = s * tsr_exp(m - x) + T(1); m = x; } else if (x != -INFINITY) { s += tsr_exp(x - m); }
}
static inline int64_t tsr_ftoi(double v) {
  if (v != v) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return (int64_t)v;
}
// An index read from a tensor, checked against ONNX's range -n..n-1 (a negative one counts from the end): the
// index in [0, n), or 0 after recording the kernel's first failure (OpenMP threads race for it) as
// [check + 1, index, n, position].
static inline int64_t tsr_index(int64_t* err, int check, int64_t v, int64_t n, int64_t pos) {
  const int64_t w = v < 0 ? v + n : v;
  if (__builtin_expect((uint64_t)w < (uint64_t)n, 1)) return w;
  int64_t none = 0;
  if (__atomic_compare_exchange_n(err, &none, (int64_t)check + 1, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    err[1] = v; err[2] = n; err[3] = pos;
  }
  return 0;
}
// IEEE half and bfloat16 bits to and from float, rounding to nearest even.
static inline float tsr_bits(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
static inline uint32_t tsr_ubits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
static inline float tsr_h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1fu) return tsr_bits(sign | 0x7f800000u | (man << 13));
  if (exp == 0) return (sign ? -1.0f : 1.0f) * ldexpf((float)man, -24);
  return tsr_bits(sign | ((exp + 112u) << 23) | (man << 13));
}
static inline uint16_t tsr_f2h(float f) {
  uint32_t u = tsr_ubits(f), sign = (u >> 16) & 0x8000u;
  float a = fabsf(f);
  if (a != a) return (uint16_t)(sign | 0x7e00u);
  if (a >= 65520.0f) return (uint16_t)(sign | 0x7c00u);
  if (a < 6.103515625e-05f) return (uint16_t)(sign | (uint32_t)nearbyintf(a * 16777216.0f));
  uint32_t au = tsr_ubits(a);
  uint32_t rounded = au + 0xfffu + ((au >> 13) & 1u);
  return (uint16_t)(sign | (((rounded >> 13) - (112u << 10)) & 0x7fffu));
}
static inline float tsr_bf2f(uint16_t b) { return tsr_bits((uint32_t)b << 16); }
static inline uint16_t tsr_f2bf(float f) {
  uint32_t u = tsr_ubits(f);
  if (f != f) return (uint16_t)((u >> 16) | 0x40u);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
)";

std::string cppPrelude() { return kCppPrelude + float8Helpers("static inline", "tsr_ubits"); }

}  // namespace tessera::codegen::detail
