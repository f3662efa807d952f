#!/usr/bin/env python3
"""What one OpenMP parallel region per kernel costs the cpu backend against one region per model run (issue 19's
"one parallel region per model run"): a loop of near-empty kernels built with the backend's compiler and flags,
each kernel once as its own `#pragma omp parallel for` (what generated kernels are today) and once as an
`#pragma omp for` inside one region that stays open (what a region per run would make of it). Prints the
microseconds per kernel of each, their difference, and with a CPU suite result (--suite) that difference times
each model's kernel count against the model's time.

  python3 bench/region_cost.py --threads 1,2 --suite bench/results/2026-12-05-cpu-masked/2threads/cpu_suite.json
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

PROGRAM = r"""
#include <chrono>
#include <cstdio>
static float sink[64];
int main(int argc, char** argv) {
  const int n = 200000;
  double region = 1e30, shared = 1e30;
  for (int round = 0; round < 5; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) {
      #pragma omp parallel for
      for (int j = 0; j < 64; ++j) sink[j] = float(j + i);
    }
    auto t1 = std::chrono::steady_clock::now();
    #pragma omp parallel
    for (int i = 0; i < n; ++i) {
      #pragma omp for
      for (int j = 0; j < 64; ++j) sink[j] = float(j + i);
    }
    auto t2 = std::chrono::steady_clock::now();
    double a = std::chrono::duration<double, std::micro>(t1 - t0).count() / n;
    double b = std::chrono::duration<double, std::micro>(t2 - t1).count() / n;
    region = a < region ? a : region;
    shared = b < shared ? b : shared;
  }
  std::printf("%.4f %.4f\n", region, shared);
  return 0;
}
"""


def measure(compiler, threads):
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "regions.cpp"), os.path.join(d, "regions")
        pathlib.Path(src).write_text(PROGRAM)
        subprocess.run([compiler, "-std=c++17", "-O3", "-march=native", "-fopenmp", src, "-o", exe], check=True)
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        region, shared = map(float, subprocess.run([exe], env=env, check=True, capture_output=True, text=True).stdout.split())
    return {"threads": threads, "us_region_per_kernel": region, "us_in_open_region": shared, "us_saved": region - shared}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", default="1,2", help="comma list of thread counts")
    ap.add_argument("--compiler", default=shutil.which("c++") or shutil.which("g++") or "g++")
    ap.add_argument("--suite", default="", help="a cpu_suite.json: its models' kernel counts and times")
    ap.add_argument("--out", default="", help="also write the figures as JSON here")
    a = ap.parse_args()
    rows = [measure(a.compiler, int(t)) for t in a.threads.split(",")]
    for r in rows:
        print(f"{r['threads']} thread(s): {r['us_region_per_kernel']:.3f} us a kernel in its own region, "
              f"{r['us_in_open_region']:.3f} us in an open one: {r['us_saved']:.3f} us saved a kernel")
    shares = []
    if a.suite:
        suite = json.load(open(a.suite))
        threads = suite["models"][0]["ort"].get("threads") if suite.get("models") else None
        row = next((r for r in rows if r["threads"] == threads), rows[-1])
        for m in suite["models"]:
            t = m.get("tessera", {})
            if t.get("kernels") and t.get("ms"):
                saved_ms = row["us_saved"] * t["kernels"] / 1000
                shares.append({"model": m["name"], "kernels": t["kernels"], "ms": t["ms"], "saved_ms": saved_ms,
                               "share": saved_ms / t["ms"]})
        for s in sorted(shares, key=lambda s: -s["share"])[:8]:
            print(f"  {s['model']}: {s['kernels']} kernels, {s['ms']:.3f} ms, at most {s['saved_ms'] * 1000:.1f} us "
                  f"({100 * s['share']:.2f}%) to save at {row['threads']} thread(s)")
    if a.out:
        json.dump({"compiler": a.compiler, "rows": rows, "models": shares}, open(a.out, "w"), indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
