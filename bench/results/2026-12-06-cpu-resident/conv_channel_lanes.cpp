// A hand-written prototype, not Tessera's code: ResNet-50's layer4 3 x 3 conv (512 -> 512 channels over 7 x 7,
// pad 1, bias and ReLU) with its vector lanes along the output channels, to measure what a conv form for images
// narrower than 16 columns could reach (docs/performance.md, CPU 2026-12-06 later). Each work item is 32 output
// channels (two vectors) x one output row (7 accumulators each); the weights are laid out [OC/32][IC][3][3][32]
// (a constant, transformed once at load): laid out [IC][3][3][OC] instead, a work item's 128-byte reads lie 2 KiB
// apart, fall into few cache sets and miss: 1.60 ms instead of 0.70. Checked against a naive double-precision
// loop. Build and run: g++ -std=c++17 -O3 -march=native -fopenmp -include algorithm conv_channel_lanes.cpp &&
// OMP_NUM_THREADS=2 ./a.out
#include <omp.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>
typedef float vf __attribute__((vector_size(64)));
constexpr int IC = 512, OC = 512, H = 7, W = 7, HP = 9, WP = 9;
static void conv_ocl(const float* x, const float* wt /*[IC][3][3][OC]*/, const float* bias, float* out, float* xp) {
#pragma omp parallel
  {
#pragma omp for
    for (int ic = 0; ic < IC; ++ic)
      for (int r = 0; r < HP; ++r)
        for (int c = 0; c < WP; ++c)
          xp[(ic * HP + r) * WP + c] = (r >= 1 && r <= H && c >= 1 && c <= W) ? x[(ic * H + r - 1) * W + c - 1] : 0.f;
#pragma omp for
    for (int item = 0; item < (OC / 32) * H; ++item) {
      const int ob = item / H, oh = item % H;
      vf a0[7], a1[7];
      for (int i = 0; i < 7; ++i) a0[i] = a1[i] = (vf){};
      for (int ic = 0; ic < IC; ++ic)
        for (int kh = 0; kh < 3; ++kh) {
          const float* row = xp + (ic * HP + oh + kh) * WP;
#pragma GCC unroll 3
          for (int kw = 0; kw < 3; ++kw) {
            const float* wp = wt + (((size_t)ob * IC * 9) + (ic * 3 + kh) * 3 + kw) * 32;
            vf w0, w1;
            std::memcpy(&w0, wp, 64);
            std::memcpy(&w1, wp + 16, 64);
#pragma GCC unroll 7
            for (int ow = 0; ow < 7; ++ow) {
              const float xv = row[ow + kw];
              a0[ow] += w0 * xv;
              a1[ow] += w1 * xv;
            }
          }
        }
      for (int ow = 0; ow < 7; ++ow)
        for (int l = 0; l < 16; ++l) {
          int o0 = ob * 32 + l, o1 = o0 + 16;
          float v0 = a0[ow][l] + bias[o0], v1 = a1[ow][l] + bias[o1];
          out[(o0 * H + oh) * W + ow] = v0 > 0 ? v0 : 0;
          out[(o1 * H + oh) * W + ow] = v1 > 0 ? v1 : 0;
        }
    }
  }
}
int main() {
  std::vector<float> x(IC * H * W), w(OC * IC * 9), wt(w.size()), b(OC), out(OC * H * W), ref(out.size()), xp(IC * HP * WP);
  unsigned s = 1;
  auto rnd = [&] { s = s * 1664525u + 1013904223u; return float(s >> 8) / 16777216.f - 0.5f; };
  for (auto& v : x) v = rnd();
  for (auto& v : w) v = rnd() * 0.05f;
  for (auto& v : b) v = rnd();
  for (int o = 0; o < OC; ++o)
    for (int i = 0; i < IC; ++i)
      for (int k = 0; k < 9; ++k) wt[((size_t)(o / 32) * IC * 9 + i * 9 + k) * 32 + o % 32] = w[(o * IC + i) * 9 + k];
  for (int o = 0; o < OC; ++o)
    for (int oh = 0; oh < H; ++oh)
      for (int ow = 0; ow < W; ++ow) {
        double acc = b[o];
        for (int i = 0; i < IC; ++i)
          for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw) {
              int ih = oh + kh - 1, iw = ow + kw - 1;
              if (ih >= 0 && ih < H && iw >= 0 && iw < W) acc += double(w[(o * IC + i) * 9 + kh * 3 + kw]) * x[(i * H + ih) * W + iw];
            }
        ref[(o * H + oh) * W + ow] = acc > 0 ? float(acc) : 0.f;
      }
  conv_ocl(x.data(), wt.data(), b.data(), out.data(), xp.data());
  double err = 0;
  for (size_t i = 0; i < out.size(); ++i) err = std::fmax(err, std::fabs(out[i] - ref[i]));
  std::vector<double> t;
  for (int r = 0; r < 30; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    conv_ocl(x.data(), wt.data(), b.data(), out.data(), xp.data());
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  double flops = 2.0 * OC * IC * 9 * H * W;
  std::printf("max err %.3g, median %.3f ms, %.0f GFLOP/s (%d threads)\n", err, t[15], flops / t[15] / 1e6, omp_get_max_threads());
}
