#!/usr/bin/env python3
"""Latency from `run` to printed times: the wall time of `tessera-cli run MODEL --backend B --no-reference
--no-baseline --json`, cold (an empty module cache) and warm (the same cache again), per model. Python standard
library only; not a unit test (timings do not belong in CTest).

  python3 bench/latency.py --backend cpu  --models samples,light [--out DIR]
  python3 bench/latency.py --backend cuda --models samples,cases,/path/resnet50.onnx --cli "gpubundle/run tessera-cli"

Every model gets a fresh cache folder (TESSERA_CACHE_DIR) for its cold run, which its warm runs then reuse, so the
user's own cache is never touched (nor its tuned schedules used: both runs are on the default schedules). Also
reported: repeat_s, the second of two runs in one more process (`run --repeat 2`: the window's Run pressed again,
its compiled graph and kernels kept); from the run's JSON: build_ms (generate + compile or load), how many kernels came from the cache, the sum
and the largest of the kernels' compile times (the largest is what re-timing after one kernel's schedule edit
costs on top of a warm run), total_ms (the kernels' summed medians) and launches_s = total_ms x (reps + 2
warm-up launches), the part of the wall spent in the timed launches themselves. `--budget-ms N` adds a warm run with
`run --budget-ms N`, `--no-cache` one with the cache off (every kernel compiled, as before the cache). `--window`
times what the window shows first instead: the run checked against the reference at the window's reps (its
unfused baseline follows there, after the times are shown). Writes latency.json and latency.md into --out.
"""
import argparse
import glob
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
LIGHT = os.environ.get("TESSERA_ONNX_LIGHT", os.path.join(REPO, "..", "shared", "data", "onnx-light"))
GROUPS = {
    "samples": lambda: sorted(glob.glob(os.path.join(REPO, "samples", "*.tsr"))),
    "cases": lambda: sorted(p for p in glob.glob(os.path.join(HERE, "cases", "*.tsr")) if "_check" not in p),
    "light": lambda: sorted(glob.glob(os.path.join(LIGHT, "light", "*.onnx"))),
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cli", default=os.path.join(REPO, "build", "release", "app", "cli", "tessera-cli"),
                   help="the CLI, or a command line that runs it (a device bundle's 'OUT/run tessera-cli')")
    p.add_argument("--backend", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--models", default="samples", help="comma-separated: samples, cases, light, or model files")
    p.add_argument("--warm", type=int, default=2, help="warm runs per model (the median is reported)")
    p.add_argument("--reps", type=int, default=10, help="run --reps (timed launches per kernel)")
    p.add_argument("--no-cache", action="store_true", help="also time a run with --no-cache")
    p.add_argument("--budget-ms", type=float, default=0, help="also time a warm run with run --budget-ms N")
    p.add_argument("--extra", default="", help="more run flags, e.g. '--arch sm_90'")
    p.add_argument("--window", action="store_true",
                   help="time what the window shows first: the run checked against the reference, with the window's "
                        "reps (5 cpu, 20 cuda; --reps is ignored) and time budget (10 ms a kernel on the cpu); its unfused baseline, which the window shows "
                        "after, is left out as ever")
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--out", default="bench-out")
    a = p.parse_args()
    # the window's time budget a kernel (ui/run/run_controller.cpp: kCpuKernelBudgetMs), passed where no other is
    a.window_budget_ms = 10 if a.window and a.backend == "cpu" else 0
    if a.window:
        a.reps = 5 if a.backend == "cpu" else 20
    return a


def models(spec):
    out = []
    for item in filter(None, spec.split(",")):
        out += GROUPS[item]() if item in GROUPS else [item]
    return out


def run_once(args, model, cache_dir, no_cache=False, budget_ms=0, repeat=1):
    checks = [] if args.window else ["--no-reference"]
    cmd = shlex.split(args.cli) + ["run", model, "--backend", args.backend, "--no-baseline", "--json",
                                   "--reps", str(args.reps)] + checks + shlex.split(args.extra)
    if repeat > 1:
        cmd += ["--repeat", str(repeat)]
    if no_cache:
        cmd.append("--no-cache")
    budget_ms = budget_ms or args.window_budget_ms
    if budget_ms > 0:
        cmd += ["--budget-ms", str(budget_ms)]
    env = dict(os.environ, TESSERA_CACHE_DIR=cache_dir)
    env.pop("TESSERA_MODULE_CACHE", None)
    start = time.monotonic()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    wall = time.monotonic() - start
    row = {"wall_s": wall, "rc": p.returncode}
    try:
        j = json.loads(p.stdout)
    except json.JSONDecodeError:
        row["error"] = (p.stderr or p.stdout).strip().splitlines()[-1:] or ["no output"]
        return row
    ks = j.get("kernels", [])
    compiles = [k.get("compile_ms", 0) for k in ks]
    row.update(build_s=j.get("build_ms", 0) / 1e3, total_ms=j.get("total_ms", 0), kernels=len(ks),
               cached=sum(1 for k in ks if k.get("cached")), compile_sum_s=sum(compiles) / 1e3,
               compile_max_s=max(compiles, default=0) / 1e3, ran=j.get("ran", False),
               not_ok=sum(1 for k in ks if k.get("status") not in ("ok", "unchecked")),
               # the launches' own share of the wall: each kernel runs warmup (2) + reps times
               launches_s=j.get("total_ms", 0) * (args.reps + 2) / 1e3, load=os.getloadavg()[0])
    if "run_wall_ms" in j:  # the runs of --repeat: the last is the window's Run pressed again
        row["repeat_s"] = j["run_wall_ms"][-1] / 1e3
    return row


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else None


def calibrated_devices(args):
    """The cpu's measured figures (`tune --calibrate-cpu`, once a machine, not once a model): measured here once and
    copied into each model's fresh cache, so that a cold run is cold for its modules only, as on a machine that
    has run Tessera before (the CLI's run measures the cpu after the run when it was not; the window's first
    result does not wait for it). None for other backends."""
    if args.backend != "cpu":
        return None
    folder = tempfile.mkdtemp(prefix="tessera-latency-devices-")
    env = dict(os.environ, TESSERA_CACHE_DIR=folder)
    subprocess.run(shlex.split(args.cli) + ["tune", "--calibrate-cpu"], env=env, capture_output=True, timeout=args.timeout)
    return os.path.join(folder, "devices")


def measure(args, model, devices=None):
    cache = tempfile.mkdtemp(prefix="tessera-latency-")
    if devices and os.path.isdir(devices):
        shutil.copytree(devices, os.path.join(cache, "devices"))
    try:
        result = {"model": os.path.relpath(model, REPO) if model.startswith(REPO) else model}
        result["cold"] = run_once(args, model, cache)
        warm = [run_once(args, model, cache) for _ in range(args.warm)]
        result["warm"] = min(warm, key=lambda r: abs(r["wall_s"] - median([w["wall_s"] for w in warm])))
        result["repeat"] = run_once(args, model, cache, repeat=2)
        if args.budget_ms > 0:
            result["warm_budget"] = run_once(args, model, cache, budget_ms=args.budget_ms)
        if args.no_cache:
            result["no_cache"] = run_once(args, model, cache, no_cache=True)
        return result
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def fmt(row, key, spec="{:.2f}"):
    v = row.get(key)
    return "-" if v is None else spec.format(v)


def table(results, backend):
    lines = [f"| model ({backend}) | kernels | cold wall s | cold build s | compile sum s | compile max s | "
             f"warm wall s | warm build s | cached | launches s | repeat s | budget wall s | no-cache wall s | kernels ms |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        c, w, n, b = r["cold"], r["warm"], r.get("no_cache", {}), r.get("warm_budget", {})
        rep = r.get("repeat", {})
        note = "" if "error" not in c else " (" + " ".join(c["error"]) + ")"
        lines.append(f"| {os.path.basename(r['model'])}{note} | {c.get('kernels', '-')} | {fmt(c, 'wall_s')} | "
                     f"{fmt(c, 'build_s')} | {fmt(c, 'compile_sum_s')} | {fmt(c, 'compile_max_s')} | "
                     f"{fmt(w, 'wall_s')} | {fmt(w, 'build_s')} | {w.get('cached', '-')}/{w.get('kernels', '-')} | "
                     f"{fmt(w, 'launches_s')} | {fmt(rep, 'repeat_s')} | {fmt(b, 'wall_s')} | {fmt(n, 'wall_s')} | {fmt(w, 'total_ms', '{:.3f}')} |")
    return "\n".join(lines)


def main():
    args = parse_args()
    results = []
    devices = calibrated_devices(args)
    for m in models(args.models):
        r = measure(args, m, devices)
        results.append(r)
        c, w = r["cold"], r["warm"]
        print(f"{os.path.basename(m):32s} cold {c['wall_s']:6.2f} s (build {c.get('build_s', 0):5.2f})  "
              f"warm {w['wall_s']:6.2f} s (build {w.get('build_s', 0):5.2f}, {w.get('cached', 0)}/"
              f"{w.get('kernels', 0)} cached)" + (f"  ERROR {c['error']}" if "error" in c else ""), flush=True)
    os.makedirs(args.out, exist_ok=True)
    meta = {"backend": args.backend, "cli": args.cli, "cpus": os.cpu_count(), "reps": args.reps, "window": args.window,
            "load_average": os.getloadavg()[0],
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    with open(os.path.join(args.out, "latency.json"), "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
    md = table(results, args.backend)
    with open(os.path.join(args.out, "latency.md"), "w") as f:
        f.write(md + "\n")
    print(md)
    return 0 if all("error" not in r["cold"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
