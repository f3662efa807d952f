"""Running tessera-cli from the suites: tune, run, convert, and reading the ONNX TensorProto files that
`run --output` writes (input_N.pb, output_N.pb)."""
import json
import os
import shlex
import subprocess
import time


class TesseraCli:
    """tessera-cli as a command prefix (e.g. "gpubundle_bench/run tessera-cli" on the GPU machine)."""

    def __init__(self, command):
        self.prefix = shlex.split(command)
        self.run_help = self._help("run")
        self.has_tune = self._help("tune") != ""

    def _help(self, sub):
        p = subprocess.run(self.prefix + [sub, "--help"], capture_output=True, text=True)
        return p.stdout if p.returncode == 0 else ""

    def supports_run_flag(self, flag):
        return flag in self.run_help

    def call(self, args, timeout, env=None):
        """Runs one command; returns (returncode, stdout, stderr, seconds). A time-out is returncode None."""
        start = time.monotonic()
        try:
            p = subprocess.run(self.prefix + args, capture_output=True, text=True, timeout=timeout,
                               env={**os.environ, **(env or {})})
            return p.returncode, p.stdout, p.stderr, time.monotonic() - start
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
            return None, out, err, time.monotonic() - start

    def convert(self, model, onnx_path, timeout=60):
        rc, out, err, _ = self.call(["convert", model, "-o", onnx_path], timeout)
        if rc != 0:
            raise RuntimeError(f"tessera-cli convert {model}: {err.strip() or out.strip()}")

    def tune(self, model, backend, timeout, top_k=None, extra=()):
        args = ["tune", model, "--backend", backend, "--json"]
        if top_k:
            args += ["--top-k", str(top_k)]
        return self._json_call(args + list(extra), timeout)

    def run(self, model, backend, timeout, reps=20, output_dir=None, inputs_dir=None, check=True,
            extra=(), env=None):
        args = ["run", model, "--backend", backend, "--json", "--reps", str(reps)]
        if check:
            args.append("--check")
        if output_dir:
            args += ["--output", output_dir]
        if inputs_dir:
            args += ["--inputs", inputs_dir]
        return self._json_call(args + list(extra), timeout, env)

    def _json_call(self, args, timeout, env=None):
        """Runs a --json command: {"rc", "seconds", "report" (the parsed JSON or None), "error"}."""
        rc, out, err, seconds = self.call(args, timeout, env)
        result = {"rc": rc, "seconds": round(seconds, 2), "report": None, "command": " ".join(args)}
        start = out.find("{")
        if start >= 0:
            try:
                result["report"] = json.loads(out[start:])
            except json.JSONDecodeError as e:
                result["error"] = f"unreadable JSON ({e})"
        if rc is None:
            result["error"] = f"timed out after {timeout} s"
        elif result["report"] is None:
            result["error"] = (err.strip() or out.strip() or f"exit code {rc}")[-2000:]
        if err.strip():
            result["stderr_tail"] = err.strip()[-1500:]
        return result
