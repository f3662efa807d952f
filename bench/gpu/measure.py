"""One case of the GPU suite: Tessera (tune, then run), then PyTorch eager, torch.compile default and
max-autotune on Tessera's own inputs, each output checked against eager."""
import os
import time

import torch

from .tensors import read_data_set, read_initializers, read_input_types
from .timing import time_ms


class Clock:
    """The suite's time budget: stages that would start past it are skipped and say so."""

    def __init__(self, budget_s):
        self.end = time.monotonic() + budget_s

    def left(self):
        return self.end - time.monotonic()


def rel_err(actual, expected):
    a, e = actual.float(), expected.float()
    if a.shape != e.shape:
        return float("inf")
    scale = e.abs().max().item()
    diff = (a - e).abs().max().item()
    if diff != diff:  # NaN
        return float("inf")
    return diff / scale if scale > 0 else diff


def kernel_rows(report):
    keep = ("group", "ms", "predicted_ms", "gbps", "gflops", "status", "max_rel_err", "message", "nodes")
    return [{k: v for k, v in k.items() if k in keep} for k in report.get("kernels", [])]


def tune_rows(report):
    keep = ("group", "template", "candidates", "candidates_measured", "cache", "best_ms", "predicted_ms",
            "model_pick_ms", "default_ms", "status", "verified_against", "params", "measurements")
    return [{k: v for k, v in k.items() if k in keep} for k in report.get("kernels", [])]


def run_tessera(case, tsr, cli, args, clock, work):
    """tune (when the CLI has it) then run --check, writing the inputs and outputs under work/data."""
    t = {"file": os.path.relpath(tsr), "tuned": False, "notes": []}
    if case.name in args.tune_skip:
        t["notes"].append("not tuned (--tune-skip): tune moves and compares every candidate's outputs on the host, "
                          "which takes minutes at this size; run used the default schedules")
    elif cli.has_tune and clock.left() > 60:
        res = cli.tune(tsr, args.backend, timeout=min(args.stage_timeout, clock.left() - 30), extra=args.tf32_flags)
        t["tune_seconds"] = res["seconds"]
        if res["report"] is not None:
            t["tune"] = tune_rows(res["report"])
            t["tuned"] = res["rc"] == 0
        if res.get("error"):
            t["notes"].append("tune: " + res["error"])
    elif not cli.has_tune:
        t["notes"].append("tessera-cli has no `tune` command: run used the default schedules")
    extra = [f for f in args.run_flags if cli.supports_run_flag(f)]
    check = "--no-reference" not in extra
    extra += args.tf32_flags
    data = os.path.join(work, "data")
    res = cli.run(tsr, args.backend, timeout=max(30, min(args.stage_timeout, clock.left() - 20)), reps=args.reps,
                  output_dir=data, check=check, extra=extra)
    t["run_seconds"] = res["seconds"]
    t["run_command"] = res["command"]
    if res.get("error"):
        t["notes"].append("run: " + res["error"])
    rep = res["report"]
    if rep is None:
        return t, None
    t["kernels"] = kernel_rows(rep)
    t["reference_checked"] = check
    t["outputs_verified"] = rep.get("outputs_verified")
    t["messages"] = rep.get("messages", [])[:20]
    ok = rep.get("ran") and all(k.get("status") in ("ok", "unchecked") for k in rep.get("kernels", []))
    t["ms"] = rep.get("total_ms") if ok else None
    if not ok:
        t["notes"].append("not every kernel ran on the GPU: no Tessera time")
    return t, data


def torch_inputs(tsr, data, cli, work):
    """Tessera's inputs (input_N.pb) and the model's initializers; uniform [-1, 1) inputs of the graph's
    types when Tessera wrote none (its run failed), so PyTorch is still timed."""
    onnx_path = os.path.join(work, "model.onnx")
    cli.convert(tsr, onnx_path)
    ins = [t for _, t in read_data_set(data, "input")] if data and os.path.isdir(data) else []
    if not ins:
        ins = [torch.rand(shape, dtype=dtype) * 2 - 1 for shape, dtype in read_input_types(onnx_path)]
    inits = list(read_initializers(onnx_path).values())
    return [t.cuda() for t in ins + inits]


def time_compiled(case, ts, expected, mode, args):
    torch._dynamo.reset()
    fn = torch.compile(case.fn, mode=mode)
    start = time.monotonic()
    out = fn(ts).clone()
    torch.cuda.synchronize()
    row = {"mode": mode or "default", "compile_s": round(time.monotonic() - start, 1),
           "check_err": rel_err(out, expected)}
    del out
    row["ms"] = time_ms(lambda: fn(ts), reps=args.reps)
    return row


# max-autotune without CUDA graphs: with them, every call of a compiled function on inputs that live outside the
# graph's pool first copies the inputs into it (a second full pass over memory-bound cases), which is not kernel time.
COMPILE_MODES = {"compile": None, "max_autotune": "max-autotune-no-cudagraphs"}


def run_compiled(case, ts, expected, keys, args, clock, r):
    """torch.compile in the modes `keys` names, each checked against eager and timed, into r[key]."""
    for key in keys:
        if clock.left() < args.compile_reserve_s:
            r[key] = {"skipped": "out of time"}
            continue
        try:
            r[key] = time_compiled(case, ts, expected, COMPILE_MODES[key], args)
        except Exception as e:  # an inductor failure is a finding, not a crash of the suite
            r[key] = {"error": f"{type(e).__name__}: {str(e)[:500]}"}


def run_torch(case, ts, tessera_out, args, clock, keys):
    r = {}
    expected = case.fn(ts)
    torch.cuda.synchronize()
    r["bytes"] = sum(t.numel() * t.element_size() for t in ts) + expected.numel() * expected.element_size()
    r["flops"] = case.flops(ts) if case.flops else None
    if tessera_out is not None:
        r["tessera_check_err"] = rel_err(tessera_out.cuda(), expected)
    r["eager_ms"] = time_ms(lambda: case.fn(ts), reps=args.reps)
    if case.library:
        r["library"] = case.library_name
        lib_out = case.library(ts)
        if case.library_same:
            r["library_check_err"] = rel_err(lib_out, expected)
        del lib_out
        r["library_ms"] = time_ms(lambda: case.library(ts), reps=args.reps)
    run_compiled(case, ts, expected, keys, args, clock, r)
    return r


def measure_case(case, tsr, cli, args, clock, keys):
    """Tessera, eager, the library bound and torch.compile in the modes `keys` names."""
    work = os.path.join(args.work, case.name)
    os.makedirs(work, exist_ok=True)
    torch.cuda.empty_cache()
    tessera, data = run_tessera(case, tsr, cli, args, clock, work)
    outs = read_data_set(data, "output") if data and os.path.isdir(data) else []
    if not outs:
        tessera["notes"].append("no Tessera outputs: PyTorch ran on its own random inputs")
    ts = torch_inputs(tsr, data, cli, work)
    result = {"tessera": tessera, "torch": run_torch(case, ts, outs[0][1] if outs else None, args, clock, keys)}
    del ts
    return result


def measure_compiled_later(case, tsr, cli, args, clock, keys, torch_row):
    """The torch.compile modes put off to the end (the slow max-autotune of gemm-like cases), on the same inputs."""
    work = os.path.join(args.work, case.name)
    torch.cuda.empty_cache()
    ts = torch_inputs(tsr, os.path.join(work, "data"), cli, work)
    expected = case.fn(ts)
    run_compiled(case, ts, expected, keys, args, clock, torch_row)
    del ts, expected
