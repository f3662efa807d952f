#!/usr/bin/env python3
"""Tessera's `cpu` backend against onnxruntime (CPU) on the samples and the light ONNX models: same threads,
same inputs. Python standard library only; onnxruntime comes from the npm package in bench/cpu.

  (cd bench/cpu && npm install --ignore-scripts)   # once
  python3 bench/cpu_suite.py --cli build/release/app/cli/tessera-cli [--threads N] [--light DIR] [--out DIR]

For each model: `tessera-cli run MODEL --backend cpu --json --check --output DATA` (with OMP_NUM_THREADS=N)
writes the inputs it ran on and its outputs; `node bench/cpu/ort_time.js MODEL.onnx DATA --threads N` runs
onnxruntime on those inputs (intraOpNumThreads=N) and compares with Tessera's outputs. Tessera's time is the sum
of its kernels' medians; onnxruntime's the median of whole session.run calls. See bench/README.md.
"""
import argparse
import datetime
import glob
import json
import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cli", default=os.path.join(REPO, "build", "release", "app", "cli", "tessera-cli"))
    p.add_argument("--threads", type=int, default=os.cpu_count(), help="OMP_NUM_THREADS and ORT intraOpNumThreads")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--light", default=os.environ.get("TESSERA_ONNX_LIGHT",
                                                       os.path.join(REPO, "..", "shared", "data", "onnx-light")),
                   help="onnx-light folder (light-testdata/<model>/...); skipped when absent (env TESSERA_ONNX_LIGHT)")
    p.add_argument("--models", default="", help="comma-separated model names to run (default: all)")
    p.add_argument("--out", default="bench-out", help="folder for cpu_suite.json and cpu_suite.md")
    p.add_argument("--work", default="/tmp/tessera-bench-cpu", help="scratch folder")
    p.add_argument("--timeout", type=float, default=600, help="limit for one tessera-cli run")
    return p.parse_args()


def call(cmd, timeout, env=None):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return None, "", f"timed out after {timeout} s"


def parse_json(out):
    start = out.find("{")
    try:
        return json.loads(out[start:]) if start >= 0 else None
    except json.JSONDecodeError:
        return None


def models(args):
    """(name, model path for Tessera, .onnx path for onnxruntime or None to convert, inputs folder or None)."""
    found = []
    for tsr in sorted(glob.glob(os.path.join(REPO, "samples", "*.tsr"))):
        found.append((os.path.basename(tsr)[:-4], tsr, None, None))
    testdata = os.path.join(args.light, "light-testdata")
    if os.path.isdir(testdata):
        for d in sorted(glob.glob(os.path.join(testdata, "*"))):
            found.append((os.path.basename(d), os.path.join(d, "model.onnx"), os.path.join(d, "model.onnx"),
                          os.path.join(d, "test_data_set_0")))
    else:
        print(f"note: no light models at {testdata}: skipped (set --light or TESSERA_ONNX_LIGHT)", file=sys.stderr)
    wanted = set(filter(None, args.models.split(",")))
    return [m for m in found if not wanted or m[0] in wanted]


def tessera_flags(args):
    rc, out, _ = call([args.cli, "run", "--help"], 30)
    return ["--no-baseline"] if rc == 0 and "--no-baseline" in out else []


def run_tessera(args, model, data, inputs, flags):
    cmd = [args.cli, "run", model, "--backend", "cpu", "--json", "--check", "--reps", str(args.reps),
           "--output", data] + flags
    if inputs:
        cmd += ["--inputs", inputs]
    rc, out, err = call(cmd, args.timeout, {"OMP_NUM_THREADS": str(args.threads)})
    rep = parse_json(out)
    t = {"rc": rc}
    if rep is None:
        t["error"] = (err.strip() or out.strip())[-800:]
        return t
    kernels = rep.get("kernels", [])
    ok = [k for k in kernels if k.get("status") == "ok"]
    t.update(kernels=len(kernels), kernels_ok=len(ok), outputs_verified=rep.get("outputs_verified"),
             ms_generated=rep.get("total_ms"), whole_ms=rep.get("whole_ms"))
    t["ms"] = rep.get("total_ms") if kernels and len(ok) == len(kernels) else None
    if t["ms"] is None:
        t["why_no_time"] = sorted({k.get("message", k.get("status", ""))[:160] for k in kernels
                                   if k.get("status") != "ok"})[:5]
    return t


def run_ort(args, onnx_path, data):
    cmd = ["node", os.path.join(HERE, "cpu", "ort_time.js"), onnx_path, data, "--threads", str(args.threads),
           "--reps", str(args.reps)]
    rc, out, err = call(cmd, args.timeout)
    rep = parse_json(out)
    return rep if rep is not None else {"error": (err.strip() or out.strip())[-800:]}


def measure(args, name, model, onnx_path, inputs, flags):
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    if onnx_path is None:
        onnx_path = os.path.join(work, "model.onnx")
        rc, out, err = call([args.cli, "convert", model, "-o", onnx_path], 120)
        if rc != 0:
            return {"name": name, "error": f"convert: {err.strip() or out.strip()}"}
    data = os.path.join(work, "data")
    row = {"name": name, "model": os.path.relpath(model, REPO) if model.startswith(REPO) else model}
    row["tessera"] = run_tessera(args, model, data, inputs, flags)
    row["ort"] = run_ort(args, onnx_path, data) if os.path.exists(os.path.join(data, "input_0.pb")) else \
        {"error": "Tessera wrote no inputs"}
    t, o = row["tessera"].get("ms"), row["ort"].get("median_ms")
    row["tessera_over_ort"] = round(t / o, 3) if t and o else None
    # onnxruntime times whole session runs: Tessera's whole run (kernels back to back in its worker) is the
    # like-for-like figure; the sum of kernels timed alone stays the ratio above.
    w = row["tessera"].get("whole_ms") if t else None
    row["tessera_whole_over_ort"] = round(w / o, 3) if w and o else None
    errs = [x.get("max_rel_err") for x in row["ort"].get("outputs", []) if x.get("compared")]
    row["max_rel_diff"] = max(errs) if errs else None
    return row


def fmt(v, d=4):
    return "–" if v is None else (f"{v:.{d}g}" if isinstance(v, float) else str(v))


def markdown(suite):
    lines = ["| model | Tessera / onnxruntime | whole run / onnxruntime | Tessera ms | whole run ms | onnxruntime ms | kernels ok "
             "| outputs agree (max rel diff) | note |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for r in suite["models"]:
        t, o = r.get("tessera", {}), r.get("ort", {})
        note = r.get("error") or t.get("error") or o.get("error") or "; ".join(t.get("why_no_time", []))
        lines.append(f"| {r['name']} | {fmt(r.get('tessera_over_ort'), 3)} | {fmt(r.get('tessera_whole_over_ort'), 3)} | "
                     f"{fmt(t.get('ms'))} | {fmt(t.get('whole_ms'))} | {fmt(o.get('median_ms'))} | {t.get('kernels_ok', '–')}/{t.get('kernels', '–')} | "
                     f"{fmt(r.get('max_rel_diff'), 2)} | {note.replace('|', '/')[:200]} |")
    return "\n".join(lines)


def environment(args):
    cpu = ""
    if os.path.exists("/proc/cpuinfo"):
        cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
    rc, node_version, _ = call(["node", "--version"], 30)
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "cpu": cpu,
            "cores": os.cpu_count(), "threads": args.threads, "load_average": os.getloadavg(),
            "os": platform.platform(), "node": node_version.strip(), "cli": args.cli}


def main():
    args = parse_args()
    if not os.path.exists(os.path.join(HERE, "cpu", "node_modules", "onnxruntime-node")):
        sys.exit("bench/cpu/node_modules is missing: run (cd bench/cpu && npm install --ignore-scripts) first")
    os.makedirs(args.out, exist_ok=True)
    flags = tessera_flags(args)
    suite = {"environment": environment(args), "tessera_run_flags": flags, "models": []}
    for name, model, onnx_path, inputs in models(args):
        row = measure(args, name, model, onnx_path, inputs, flags)
        suite["models"].append(row)
        print(f"{name}: Tessera {fmt(row.get('tessera', {}).get('ms'))} ms (whole run "
              f"{fmt(row.get('tessera', {}).get('whole_ms'))}), onnxruntime {fmt(row.get('ort', {}).get('median_ms'))} ms, "
              f"ratio {fmt(row.get('tessera_over_ort'), 3)} (whole run {fmt(row.get('tessera_whole_over_ort'), 3)})", flush=True)
        with open(os.path.join(args.out, "cpu_suite.json"), "w") as f:
            json.dump(suite, f, indent=2)
    suite["environment"]["load_average_end"] = os.getloadavg()
    with open(os.path.join(args.out, "cpu_suite.json"), "w") as f:
        json.dump(suite, f, indent=2)
    with open(os.path.join(args.out, "cpu_suite.md"), "w") as f:
        f.write(markdown(suite) + "\n")
    print(markdown(suite))


if __name__ == "__main__":
    main()
