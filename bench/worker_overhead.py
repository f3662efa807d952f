#!/usr/bin/env python3
"""The cost of running cpu kernels in a worker process (core/runtime/cpu/cpu_worker.h) instead of in tessera-cli
itself: each model run by two tessera-cli builds, one that calls kernels in-process (before the worker) and one
with the worker, alternating, on one warm module cache (a first untimed run of each fills it). Per model: the
best wall time of the whole `run --no-reference --no-baseline` (the worker's start, module loads, copies and
IPC are all in it) and the best sum of the kernels' medians, which must not move beyond noise (the timing loop
runs inside the worker). Prints both ratios, with/without.

  python3 bench/worker_overhead.py --before OLD/tessera-cli --after NEW/tessera-cli --models samples
"""
import argparse
import json
import os
import pathlib
import sys
import tempfile
import time

from index_checks import total_ms

HERE = pathlib.Path(__file__).resolve().parent


def timed(cli, model, reps):
    start = time.perf_counter()
    ms = total_ms(cli, model, "cpu", reps)
    return time.perf_counter() - start, ms


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="tessera-cli calling kernels in-process (a command line)")
    ap.add_argument("--after", required=True, help="tessera-cli with the cpu worker (a command line)")
    ap.add_argument("--models", default="samples", help="samples, cases, or a comma list of model files")
    ap.add_argument("--reps", type=int, default=10, help="timed launches per kernel")
    ap.add_argument("--rounds", type=int, default=5, help="runs per build, alternating; the best counts")
    ap.add_argument("--out", default="", help="also write the figures as JSON here")
    a = ap.parse_args()
    if a.models == "samples":
        models = sorted((HERE.parent / "samples").glob("*.tsr"))
    elif a.models == "cases":
        models = sorted((HERE / "cases").glob("*.tsr"))
    else:
        models = [pathlib.Path(m) for m in a.models.split(",")]
    os.environ["TESSERA_CACHE_DIR"] = tempfile.mkdtemp(prefix="tessera-worker-bench-")
    rows = []
    print(f"{'model':<22} {'wall before s':>13} {'wall after s':>12} {'ratio':>6} {'kernels before ms':>17} "
          f"{'kernels after ms':>16} {'ratio':>6}")
    for model in models:
        runs = {"before": [], "after": []}
        try:
            for which in ("before", "after"):
                timed(getattr(a, which), model, 1)  # fills the module cache: both rounds below are warm
            for _ in range(a.rounds):
                for which in ("before", "after"):
                    runs[which].append(timed(getattr(a, which), model, a.reps))
        except RuntimeError as e:
            print(f"{model.stem:<22} skipped: {e}")
            continue
        wb, wa = (min(w for w, _ in runs[k]) for k in ("before", "after"))
        kb, ka = (min(ms for _, ms in runs[k]) for k in ("before", "after"))
        rows.append({"model": model.stem, "wall_before_s": wb, "wall_after_s": wa, "kernels_before_ms": kb,
                     "kernels_after_ms": ka, "runs": runs})
        print(f"{model.stem:<22} {wb:>13.3f} {wa:>12.3f} {wa / wb:>6.3f} {kb:>17.3f} {ka:>16.3f} {ka / kb:>6.3f}")
    if a.out:
        pathlib.Path(a.out).write_text(json.dumps(rows, indent=1) + "\n")
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
