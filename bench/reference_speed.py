#!/usr/bin/env python3
"""The reference interpreter's speed: the wall time of `tessera-cli run MODEL --backend reference` (load, random
inputs, every op in double-accumulated reference semantics) for two tessera-cli builds, alternating, per model.
The reference is what every checked run and the window's first result wait for (the check of a cpu or cuda run
runs the same interpreter), so its time is part of each model's latency. Prints the best and median wall of
each build and the ratio of the bests; writes reference.json and reference.md into --out.

  python3 bench/reference_speed.py --before OLD/tessera-cli --after NEW/tessera-cli --models light,MODEL.tsr

--models: samples, light (the onnx-light folder's nine, from --light or $TESSERA_ONNX_LIGHT), or model files.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import time

HERE = pathlib.Path(__file__).resolve().parent


def models_of(spec, light):
    out = []
    for item in spec.split(","):
        if item == "samples":
            out += sorted((HERE.parent / "samples").glob("*.tsr"))
        elif item == "light":
            out += sorted(pathlib.Path(light).glob("light/*.onnx"))
        elif item:
            out.append(pathlib.Path(item))
    return out


def wall(cli, model, timeout):
    start = time.perf_counter()
    r = subprocess.run(cli.split() + ["run", str(model), "--backend", "reference"], capture_output=True, text=True,
                       timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"{cli} exited {r.returncode}: {r.stderr.strip()[-300:]}")
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="a tessera-cli (a command line)")
    ap.add_argument("--after", required=True, help="the tessera-cli to compare with it")
    ap.add_argument("--models", default="light")
    ap.add_argument("--light", default=os.environ.get("TESSERA_ONNX_LIGHT", str(HERE.parent.parent / "shared/data/onnx-light")))
    ap.add_argument("--rounds", type=int, default=3, help="runs per build, alternating")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    rows = []
    print(f"{'model':<26} {'before best s':>13} {'median':>7} {'after best s':>12} {'median':>7} {'after/before':>12}")
    for model in models_of(a.models, a.light):
        runs = {"before": [], "after": []}
        try:
            for _ in range(a.rounds):
                for which in ("before", "after"):
                    runs[which].append(wall(getattr(a, which), model, a.timeout))
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            print(f"{model.stem:<26} skipped: {e}")
            continue
        row = {"model": model.stem, **{f"{k}_s": sorted(v) for k, v in runs.items()}}
        row["ratio"] = min(runs["after"]) / min(runs["before"])
        rows.append(row)
        print(f"{model.stem:<26} {min(runs['before']):>13.3f} {statistics.median(runs['before']):>7.3f} "
              f"{min(runs['after']):>12.3f} {statistics.median(runs['after']):>7.3f} {row['ratio']:>12.2f}")
    if a.out:
        out = pathlib.Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "reference.json").write_text(json.dumps({"before": a.before, "after": a.after, "models": rows}, indent=1))
        lines = ["| model | before best s | after best s | after / before |", "| --- | ---: | ---: | ---: |"]
        lines += [f"| {r['model']} | {min(r['before_s']):.3f} | {min(r['after_s']):.3f} | {r['ratio']:.2f} |" for r in rows]
        (out / "reference.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
