#!/usr/bin/env python3
"""The cost of checking indices read from tensors (kernel IR CheckedIndex): every case model under
bench/cases run by two tessera-cli builds, one without the checks (d0ff768 or earlier) and one with them,
alternating, each run the median of --reps launches after warm-up; prints each case's best total per build and
the ratio with/without (target: < 1.03). Cases without a Gather generate the same kernel bodies in both builds
(only the prelude gains tsr_index), so their ratios show the noise; gather_embed and gather_columns carry the
checks.

  python3 bench/index_checks.py --before "OLD/run tessera-cli" --after "NEW/run tessera-cli" --backend cuda
"""
import argparse
import json
import pathlib
import shlex
import statistics
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent


def total_ms(cli, case, backend, reps):
    cmd = shlex.split(cli) + ["run", str(case), "--backend", backend, "--json", "--no-reference", "--no-baseline",
                              "--no-tuned", "--reps", str(reps)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {out.returncode}: {out.stderr.strip()[:300]}")
    report = json.loads(out.stdout[out.stdout.index("{"):])
    bad = [k for k in report["kernels"] if k["status"] != "unchecked"]
    if bad:
        raise RuntimeError(f"{case.name}: kernel {bad[0]['group']} {bad[0]['status']}: {bad[0].get('message', '')}")
    return report["total_ms"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="tessera-cli without index checks (a command line)")
    ap.add_argument("--after", required=True, help="tessera-cli with index checks (a command line)")
    ap.add_argument("--backend", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--cases", default="", help="comma list of case names (default: every bench/cases/*.tsr)")
    ap.add_argument("--reps", type=int, default=50, help="launches per run (the run's median)")
    ap.add_argument("--rounds", type=int, default=3, help="runs per build, alternating; the best counts")
    ap.add_argument("--out", default="", help="also write the figures as JSON here")
    a = ap.parse_args()
    names = [n for n in a.cases.split(",") if n]
    cases = sorted(p for p in (HERE / "cases").glob("*.tsr") if not names or p.stem in names)
    rows = []
    print(f"{'case':<18} {'without ms':>11} {'with ms':>11} {'ratio':>7}")
    for case in cases:
        times = {"before": [], "after": []}
        try:
            for _ in range(a.rounds):
                for which in ("before", "after"):
                    times[which].append(total_ms(getattr(a, which), case, a.backend, a.reps))
        except RuntimeError as e:
            print(f"{case.stem:<18} skipped: {e}")
            continue
        b, w = min(times["before"]), min(times["after"])
        ratio = w / b if b > 0 else float("nan")
        rows.append({"case": case.stem, "without_ms": b, "with_ms": w, "ratio": ratio, "runs": times})
        print(f"{case.stem:<18} {b:11.4f} {w:11.4f} {ratio:7.3f}")
    if rows:
        print(f"median ratio {statistics.median(r['ratio'] for r in rows):.3f}, worst {max(r['ratio'] for r in rows):.3f}")
    if a.out:
        pathlib.Path(a.out).write_text(json.dumps({"backend": a.backend, "reps": a.reps, "cases": rows}, indent=1) + "\n")
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
