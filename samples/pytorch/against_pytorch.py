#!/usr/bin/env python3
"""Runs each model export.py wrote on a Tessera backend, on PyTorch's own input, and compares the output with
PyTorch's: the largest absolute error, and that error over the largest magnitude of PyTorch's output.

  python3 samples/pytorch/against_pytorch.py --cli PATH/tessera-cli --dir DIR [--backend cuda]

Needs numpy and onnx. Prints one line a model: kernels, Tessera's total time, the errors, or why it did not run.
"""
import argparse
import glob
import os
import re
import shlex
import subprocess
import tempfile


def main():
    a = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("--cli", required=True, help="the tessera-cli command (may be a wrapper and its argument)")
    a.add_argument("--dir", required=True)
    a.add_argument("--backend", default="cuda")
    a.add_argument("--timeout", type=int, default=240)
    o = a.parse_args()
    import numpy as np
    import onnx
    from onnx import numpy_helper
    for model in sorted(glob.glob(os.path.join(o.dir, "*.onnx"))):
        name = os.path.basename(model)[:-5]
        data = os.path.join(o.dir, name + "_data")
        with tempfile.TemporaryDirectory() as out:
            cmd = shlex.split(o.cli) + ["run", model, "--backend", o.backend, "--inputs", data, "--output", out, "--no-baseline",
                   "--no-reference"]
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=o.timeout)
            except subprocess.TimeoutExpired:
                print(f"{name}: no result in {o.timeout} s", flush=True)
                continue
            got_path = os.path.join(out, "output_0.pb")
            if r.returncode != 0 or not os.path.exists(got_path):
                print(f"{name}: run failed (exit {r.returncode}): {(r.stderr or r.stdout).strip()[-300:]}", flush=True)
                continue
            want = numpy_helper.to_array(onnx.load_tensor(os.path.join(data, "output_0.pb"))).astype(np.float64)
            got = numpy_helper.to_array(onnx.load_tensor(got_path)).astype(np.float64)
            kernels = len(re.findall(r"^  k\d+ ", r.stdout, re.M))
            total = re.search(r"^total ([0-9.]+) ms", r.stdout, re.M)
            if got.shape != want.shape:
                print(f"{name}: output shape {got.shape}, PyTorch's {want.shape}", flush=True)
                continue
            err = float(np.max(np.abs(got - want)))
            scale = float(np.max(np.abs(want))) or 1.0
            print(f"{name}: {kernels} kernels, {total.group(1) if total else '?'} ms, max abs err {err:.3g}, "
                  f"over max |output| {err / scale:.3g}", flush=True)


if __name__ == "__main__":
    main()
