"""Ratios, targets and the markdown table of the GPU suite."""
COPY_TBPS = 4.3      # issue 5's copy bandwidth (bytes read + written), measured on one H200 here
BF16_TFLOPS = 790.0  # issue 5's bf16 matrix rate (cuBLAS, random data)


def _ms(row):
    return row.get("ms") if isinstance(row, dict) else None


def best_compile_ms(t):
    times = [m for m in (_ms(t.get("compile")), _ms(t.get("max_autotune"))) if m]
    return min(times) if times else None


def derive(case, result):
    """Ratios (Tessera time over the others), achieved fractions and whether the target is met."""
    tess, tor = result["tessera"], result["torch"]
    ms = tess.get("ms")
    d = {}
    compile_ms = best_compile_ms(tor)

    def ratio(other):
        return round(ms / other, 3) if ms and other else None

    d["over_compile"] = ratio(compile_ms)
    d["over_compile_default"] = ratio(_ms(tor.get("compile")))
    d["over_max_autotune"] = ratio(_ms(tor.get("max_autotune")))
    d["over_eager"] = ratio(tor.get("eager_ms"))
    if ms and tor.get("bytes"):
        d["tbps"] = round(tor["bytes"] / (ms * 1e-3) / 1e12, 3)
        d["copy_fraction"] = round(d["tbps"] / COPY_TBPS, 3)
    if ms and tor.get("flops"):
        d["tflops"] = round(tor["flops"] / (ms * 1e-3) / 1e12, 2)
        d["bf16_rate_fraction"] = round(d["tflops"] / BF16_TFLOPS, 3)
    if ms and tor.get("library_ms"):
        d["library_fraction"] = round(tor["library_ms"] / ms, 3)  # throughput relative to the library
    checked = tor.get("tessera_check_err")
    d["correct"] = checked is not None and checked <= case.tol
    d["met"], d["why"] = target_met(case.kind, d, ms)
    return d


def target_met(kind, d, ms):
    if not ms:
        return False, "no Tessera time"
    if not d["correct"]:
        return False, "result differs from PyTorch"
    if kind == "memory":
        ok = (d["over_compile"] or 99) <= 1.0 and d.get("copy_fraction", 0) >= 0.85
        return ok, f"{d['over_compile']}x torch.compile, {d.get('copy_fraction')} of copy bandwidth"
    if kind in ("gemm_bf16", "gemm_f32"):
        need = 0.60 if kind == "gemm_bf16" else 0.70
        got = d.get("library_fraction") or 0
        return got >= need, f"{got} of cuBLAS throughput (needs {need})"
    return (d["over_eager"] or 99) < 1.0, f"{d['over_eager']}x eager"


def cost_model_summary(results):
    """Share of tuned kernels whose model pick ran within 1.25x of the measured best."""
    rows = []
    for r in results:
        for k in r["tessera"].get("tune", []) or []:
            best, pick = k.get("best_ms"), k.get("model_pick_ms")
            if best and pick and best > 0 and pick > 0:
                rows.append({"case": r["name"], "group": k.get("group"), "pick_over_best": round(pick / best, 3)})
    within = sum(1 for x in rows if x["pick_over_best"] <= 1.25)
    return {"kernels": len(rows), "within_1_25": within,
            "fraction": round(within / len(rows), 3) if rows else None, "rows": rows}


def _f(v, digits=3):
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}g}" if abs(v) < 1000 else f"{v:.0f}"
    return str(v)


def markdown(suite):
    lines = ["| case | Tessera / torch.compile | Tessera / eager | achieved | target met | Tessera ms | eager ms | "
             "compile ms | max-autotune ms | library ms | max rel err |",
             "| --- | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in suite["cases"]:
        d, t, tor = r.get("derived", {}), r["tessera"], r["torch"]
        if not d:
            lines.append(f"| {r['name']} | – | – | – | not measured ({'; '.join(t.get('notes', []))}) | "
                         + " | ".join(["–"] * 6) + " |")
            continue
        if r["kind"] == "memory" and "copy_fraction" in d:
            achieved = f"{d['copy_fraction']:.0%} of {COPY_TBPS} TB/s"
        elif r["kind"] == "gemm_bf16" and "bf16_rate_fraction" in d:
            achieved = f"{d['bf16_rate_fraction']:.0%} of {BF16_TFLOPS:.0f} TFLOP/s; {_f(d.get('library_fraction'))} of cuBLAS"
        elif "library_fraction" in d:
            achieved = f"{d.get('tflops')} TFLOP/s; {_f(d['library_fraction'])} of {tor.get('library')}"
        elif "tflops" in d:
            achieved = f"{d['tflops']} TFLOP/s"
        else:
            achieved = "–"
        lines.append("| " + " | ".join([
            r["name"], _f(d.get("over_compile")), _f(d.get("over_eager")), achieved,
            ("yes" if d.get("met") else "no") + (f" ({d.get('why')})" if not d.get("met") else ""),
            _f(t.get("ms"), 4), _f(tor.get("eager_ms"), 4), _f(_ms(tor.get("compile")), 4),
            _f(_ms(tor.get("max_autotune")), 4), _f(tor.get("library_ms"), 4), _f(tor.get("tessera_check_err"), 2),
        ]) + " |")
    cm = suite.get("cost_model", {})
    if cm.get("kernels"):
        lines.append("")
        lines.append(f"Cost model: first choice within 1.25x of the measured best on {cm['within_1_25']} of "
                     f"{cm['kernels']} tuned kernels ({cm['fraction']:.0%}; target 80%).")
    return "\n".join(lines)
