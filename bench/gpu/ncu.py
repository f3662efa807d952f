"""Nsight Compute's Speed Of Light section for the Tessera kernels of cases that missed their target: where the
time goes (memory or compute throughput as a share of peak), the measured reason docs/performance.md gives."""
import os
import re
import shutil
import subprocess

METRICS = ("Duration", "Memory Throughput", "DRAM Throughput", "Compute (SM) Throughput", "L1/TEX Cache Throughput",
           "L2 Cache Throughput", "Achieved Occupancy", "Registers Per Thread", "Block Size", "Grid Size")


def parse_sections(text):
    """{kernel name: {metric: "value unit"}} from ncu's text report."""
    kernels, current = {}, None
    for line in text.splitlines():
        head = re.match(r"^\s{2}(\S.*?)\s+\(\d+, \d+, \d+\)x\(\d+, \d+, \d+\)", line)
        if head:
            current = kernels.setdefault(head.group(1), {})
            continue
        m = re.match(r"^\s+(.+?)\s{2,}(\S+)\s+([\d.,]+)\s*$", line)
        if current is not None and m and m.group(1).strip() in METRICS:
            current[m.group(1).strip()] = f"{m.group(3)} {m.group(2)}"
    return kernels


def chosen(suite, args):
    if args.ncu == "off":
        return []
    if args.ncu != "auto":
        return [c for c in suite["cases"] if c["name"] in args.ncu.split(",")]
    missed = [c for c in suite["cases"] if c.get("tessera", {}).get("ms") and not c.get("derived", {}).get("met")]
    one_per_kind = {}
    for c in missed:
        one_per_kind.setdefault(c["kind"], c)
    return list(one_per_kind.values())[: args.ncu_max]


def profile_misses(suite, cli, args, clock):
    if args.ncu == "off":
        return {}
    if not shutil.which("ncu"):
        return {"error": "ncu not on PATH"}
    out = {}
    for case in chosen(suite, args):
        if clock.left() < 40:
            out[case["name"]] = {"skipped": "out of time"}
            continue
        run = ["run", case["tessera"]["file"], "--backend", args.backend, "--reps", "1"]
        run += [f for f in args.run_flags if cli.supports_run_flag(f)]
        cmd = ["ncu", "--section", "SpeedOfLight", "--section", "Occupancy", "--section", "LaunchStats",
               "--clock-control", "none", "--kernel-id", ":::1"] + cli.prefix + run
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=min(120, clock.left() - 20))
            text = p.stdout + p.stderr
        except subprocess.TimeoutExpired as e:
            text = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            text += "\n(timed out)"
        with open(os.path.join(args.out, f"ncu_{case['name']}.txt"), "w") as f:
            f.write(" ".join(cmd) + "\n" + text)
        out[case["name"]] = parse_sections(text)
    return out
