#!/usr/bin/env python3
"""The gemm template's split_k over a model's gemm kernels, measured: export the model (pytorch_models.py's
definitions and export), then for each split S every gemm kernel of the fused graph gets `split_k = S` where the
template takes it (a kernel whose k steps S does not divide, or whose form refuses split-K, keeps its default and
is left out of that column), and one `tessera-cli run --backend cuda --json` times them all. Prints one row per
gemm kernel: its time at each split (the best marked), with the templates' defaults, and its operands' shapes.
Not a unit test.

  python3 bench/gpu/gemm_split_k.py --cli "gpubundle/run tessera-cli" --models resnet50_b1 --out $OUT
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pytorch_models  # noqa: E402


def cli_run(cli, args):
    return subprocess.run(shlex.split(cli) + args, capture_output=True, text=True, timeout=900)


def kernel_shapes(cli, model, tf32):
    """Each kernel's global inputs and outputs as the kernel IR declares them ('in0 f32[1, 512, 7, 7]', ...)."""
    p = cli_run(cli, ["compile", model, "--tf32", tf32, "--emit", "kernel"])
    shapes, group = {}, None
    for line in p.stdout.splitlines():
        m = re.match(r"^kernel (k\d+) ", line)
        if m:
            group = m.group(1)
            shapes[group] = []
        m = re.match(r"^  (in|out) +(\w+): global (\S+\[[^\]]*\])", line)
        if m and group:
            shapes[group].append(m.group(2) + " " + m.group(3))
    return shapes


def gemm_kernels(cli, model, tf32):
    """Group ids of the kernels the gemm template schedules (`compile --emit kernel`: 'kernel k3 (gemm)  # ...'),
    1 x 1 convs among them."""
    p = cli_run(cli, ["compile", model, "--tf32", tf32, "--emit", "kernel"])
    if p.returncode:
        sys.exit("compile failed: " + p.stderr[-400:])
    return [m.group(1) for m in re.finditer(r"^kernel (k\d+) \(gemm\)", p.stdout, re.M)]


def schedules_with(cli, model, tf32, groups, split, folder):
    """Saves schedules with split_k = split on every group that takes it; returns the file and the groups used."""
    path = os.path.join(folder, "split_%d.json" % split)
    groups = list(groups)
    while True:
        args = ["compile", model, "--tf32", tf32, "--save-schedules", path]
        for g in groups:
            args += ["--param", "%s.split_k=%d" % (g, split)]
        p = cli_run(cli, args)
        if p.returncode == 0:
            return path, groups
        bad = re.findall(r"\b(k\d+)\b", p.stderr)
        bad = [g for g in bad if g in groups]
        if not bad:
            sys.exit("compile with split_k=%d failed: %s" % (split, p.stderr[-400:]))
        groups.remove(bad[0])


def kernel_times(cli, model, data, tf32, schedules):
    """Each kernel's ms; `schedules` None runs the templates' defaults."""
    extra = ["--schedules", schedules] if schedules else []
    p = cli_run(cli, ["run", model, "--backend", "cuda", "--inputs", data, "--tf32", tf32, "--no-reference",
                      "--no-baseline", "--json"] + extra)
    if p.returncode:
        return {}, (p.stderr or p.stdout)[-400:]
    report = json.loads(p.stdout)
    return {k["group"]: k["ms"] for k in report.get("kernels", [])}, ""


def main():
    a = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("--cli", required=True)
    a.add_argument("--models", default="resnet50_b1")
    a.add_argument("--splits", default="1,2,4,8,16")
    a.add_argument("--tf32", default="pytorch")
    a.add_argument("--out", default="bench-out")
    args = a.parse_args()
    os.makedirs(args.out, exist_ok=True)
    splits = [int(s) for s in args.splits.split(",")]
    results = {}
    with tempfile.TemporaryDirectory() as work:
        for name in args.models.split(","):
            model, data, _ = pytorch_models.export(name, work)
            groups = gemm_kernels(args.cli, model, args.tf32)
            rows = {g: {} for g in groups}
            errors = {}
            defaults, error = kernel_times(args.cli, model, data, args.tf32, None)
            if error:
                errors["default"] = error
            shapes = kernel_shapes(args.cli, model, args.tf32)
            for s in splits:
                path, used = schedules_with(args.cli, model, args.tf32, groups, s, work)
                times, error = kernel_times(args.cli, model, data, args.tf32, path)
                if error:
                    errors[s] = error
                for g in used:
                    if g in times:
                        rows[g][s] = times[g]
            results[name] = {"rows": rows, "default": {g: defaults.get(g) for g in groups},
                             "shapes": {g: shapes.get(g, []) for g in groups}, "errors": errors}
            print("%s: %d gemm kernels" % (name, len(groups)))
            print("kernel  " + "  ".join("split %-3d" % s for s in splits) + "  default    shapes")
            for g, t in rows.items():
                best = min(t, key=t.get) if t else None
                cells = [("%.4f%s" % (t[s], "*" if s == best else " ")) if s in t else "   —   " for s in splits]
                d = defaults.get(g)
                print("%-6s  " % g + "  ".join("%-9s" % c for c in cells) + "  %-9s  %s" %
                      ("%.4f" % d if d else "—", "; ".join(shapes.get(g, []))))
            for s, e in errors.items():
                print("split %d: run failed: %s" % (s, e))
    with open(os.path.join(args.out, "gemm_split_k.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
