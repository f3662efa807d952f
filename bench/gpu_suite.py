#!/usr/bin/env python3
"""Tessera against PyTorch on the GPU: one program run times, side by side, Tessera's tuned kernels, PyTorch
eager, torch.compile (default) and torch.compile(mode="max-autotune-no-cudagraphs") on the cases in bench/gpu/cases.py, checks
Tessera's output against PyTorch's on the same inputs, and writes gpu_suite.json and gpu_suite.md.

  python3 bench/gpu_suite.py --cli "gpubundle_bench/run tessera-cli" --out OUTDIR [--cases a,b] [--ncu auto]

See bench/README.md. Needs a CUDA GPU, PyTorch with Triton, and the onnx package (all on the H200 image).
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

from gpu import report  # noqa: E402
from gpu.cases import CASES, TARGETS  # noqa: E402
from gpu.measure import Clock, measure_case, measure_compiled_later  # noqa: E402
from gpu.ncu import profile_misses  # noqa: E402
from gpu.tessera_cli import TesseraCli  # noqa: E402
from gpu.timing import bf16_matmul_tflops, copy_bandwidth_tbps  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cli", default="tessera-cli", help="tessera-cli command (a prefix: 'BUNDLE/run tessera-cli')")
    p.add_argument("--out", default="bench-out", help="folder for gpu_suite.json, gpu_suite.md, ncu reports")
    p.add_argument("--work", default="/tmp/tessera-bench", help="scratch folder (inputs, outputs: GBs)")
    p.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    p.add_argument("--reps", type=int, default=20, help="timed repetitions (median) for every column")
    p.add_argument("--budget-s", type=float, default=480, help="stop starting new stages after this many seconds")
    p.add_argument("--stage-timeout", type=float, default=150, help="limit for one tessera-cli tune or run")
    p.add_argument("--compile-reserve-s", type=float, default=45, help="skip a torch.compile left with less time")
    p.add_argument("--no-max-autotune", action="store_true", help="skip torch.compile(mode='max-autotune-no-cudagraphs')")
    p.add_argument("--run-flags", default="--no-baseline,--no-reference",
                   help="tessera-cli run flags to pass when the CLI has them (checked against `run --help`)")
    p.add_argument("--tune-skip", default="attention",
                   help="cases not to tune (attention: each candidate's 4 GiB of scores is moved and compared on the "
                   "host, ~8 s a candidate: 15 of its 32 took 110 s on the H200; the 4096^3 gemms tune in ~10 s)")
    p.add_argument("--ncu", default="off", help="'auto' (kernels of up to --ncu-max missed cases), a list of "
                   "case names, or 'off'")
    p.add_argument("--ncu-max", type=int, default=3)
    p.add_argument("--commit", default="", help="Tessera commit measured (for the record)")
    p.add_argument("--backend", default="cuda", help="Tessera backend (cpu only for a dry run of the suite itself)")
    p.add_argument("--precision", default="exact", choices=["exact", "pytorch"],
                   help="exact: TF32 off on both sides; pytorch: PyTorch's defaults on both sides (TF32 for "
                   "convolutions: cudnn.allow_tf32, and Tessera's --tf32 pytorch; not for matmuls)")
    a = p.parse_args()
    a.tf32_flags = ["--tf32", "pytorch"] if a.precision == "pytorch" else []
    a.run_flags = [f for f in a.run_flags.split(",") if f]
    a.tune_skip = set(filter(None, a.tune_skip.split(",")))
    return a


def environment(cli, args):
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    except OSError as e:
        smi = f"nvidia-smi: {e}"
    try:
        import triton
        triton_version = triton.__version__
    except ImportError:
        triton_version = None
    props = torch.cuda.get_device_properties(0)
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": props.name, "sms": props.multi_processor_count, "nvidia_smi": smi,
        "torch": torch.__version__, "torch_cuda": torch.version.cuda, "triton": triton_version,
        "python": sys.version.split()[0], "tessera_commit": args.commit, "tessera_cli": " ".join(cli.prefix),
        "tune_available": cli.has_tune,
        "run_flags_used": [f for f in args.run_flags if cli.supports_run_flag(f)],
        "tf32": ("off (torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False)"
                 if args.precision == "exact" else
                 "PyTorch's defaults: cudnn.allow_tf32 = True, matmul.allow_tf32 = False; Tessera --tf32 pytorch"),
    }


def find_case_file(case):
    for name in case.files:
        path = os.path.join(HERE, "cases", name)
        if os.path.exists(path):
            return path
    return None


def write(suite, out):
    with open(os.path.join(out, "gpu_suite.json"), "w") as f:
        json.dump(suite, f, indent=2, default=str)
    with open(os.path.join(out, "gpu_suite.md"), "w") as f:
        f.write(report.markdown(suite) + "\n")


def compile_modes(case, args):
    """(modes now, modes put off to the end): max-autotune of the gemm-like cases takes a minute each."""
    keys = ["compile"] + ([] if args.no_max_autotune else ["max_autotune"])
    return (keys, []) if case.kind == "memory" else (keys[:1], keys[1:])


def run_case(case, cli, args, clock, later):
    tsr = find_case_file(case)
    row = {"name": case.name, "kind": case.kind, "target": TARGETS[case.kind]}
    if tsr is None:
        row.update(tessera={"notes": [f"no bench/cases/{case.files[0]}"]}, torch={})
    elif clock.left() < 30:
        row.update(tessera={"notes": ["skipped: out of time"]}, torch={})
    else:
        now, deferred = compile_modes(case, args)
        start = time.monotonic()
        row.update(measure_case(case, tsr, cli, args, clock, now))
        row["seconds"] = round(time.monotonic() - start, 1)
        row["derived"] = report.derive(case, row)
        if deferred:
            later.append((case, tsr, row, deferred))
    return row


def run_deferred(later, suite, cli, args, clock):
    for case, tsr, row, deferred in later:
        if clock.left() < args.compile_reserve_s:
            for key in deferred:
                row["torch"][key] = {"skipped": "out of time"}
            continue
        measure_compiled_later(case, tsr, cli, args, clock, deferred, row["torch"])
        row["derived"] = report.derive(case, row)
        write(suite, args.out)
        print(f"{case.name} (max-autotune): {json.dumps(row['torch'].get('max_autotune'))}", flush=True)


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = args.precision == "pytorch"
    torch.set_float32_matmul_precision("highest")
    if args.precision == "pytorch":  # both sides round the conv's operands to tf32 (10 bits): not the same roundings
        for case in CASES:
            if case.kind == "conv":
                case.tol = max(case.tol, 5e-3)
    clock = Clock(args.budget_s)
    cli = TesseraCli(args.cli)
    suite = {"environment": environment(cli, args), "targets": TARGETS, "cases": []}
    suite["ceilings"] = {"copy_tbps_measured": round(copy_bandwidth_tbps(), 3),
                         "bf16_tflops_measured": round(bf16_matmul_tflops(), 1),
                         "copy_tbps_target_basis": report.COPY_TBPS, "bf16_tflops_target_basis": report.BF16_TFLOPS}
    print(json.dumps(suite["environment"]), json.dumps(suite["ceilings"]), flush=True)
    wanted = set(filter(None, args.cases.split(",")))
    later = []  # (case, file, row, modes) whose slow compile modes run after everything else
    for case in CASES:
        if wanted and case.name not in wanted:
            continue
        row = run_case(case, cli, args, clock, later)
        suite["cases"].append(row)
        suite["cost_model"] = report.cost_model_summary(suite["cases"])
        write(suite, args.out)
        print(f"{case.name}: {json.dumps(row.get('derived', {}))} ({row.get('seconds')} s)", flush=True)
    suite["ncu"] = profile_misses(suite, cli, args, clock)
    write(suite, args.out)
    run_deferred(later, suite, cli, args, clock)
    write(suite, args.out)
    print(report.markdown(suite))


if __name__ == "__main__":
    main()
