#!/usr/bin/env python3
"""Each convolution and gemm of a model against cuDNN / cuBLAS on the same shapes: reads the ONNX model and the
report of `tessera-cli run MODEL --backend cuda --json`, times every Conv (and Gemm / MatMul with a constant
weight) of the model alone in PyTorch (f32; TF32 for convolutions as PyTorch's defaults allow, not for matmuls;
NCHW and channels-last, the faster kept), and prints, per Tessera kernel holding one of them, both times and their
ratio, then the sums by kind. What is left of a model's gap to torch.compile after this is the kernels' glue.
Not a unit test. Needs torch and onnx (the GPU machine has them).

  python3 bench/gpu/conv_peers.py MODEL.onnx REPORT.json [--out peers.json]
"""
import argparse
import json
import sys

import numpy as np


def shapes_of(model):
    import onnx
    inferred = onnx.shape_inference.infer_shapes(model)
    dims = {}
    for v in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        dims[v.name] = [d.dim_value for d in v.type.tensor_type.shape.dim]
    for t in model.graph.initializer:
        dims[t.name] = list(t.dims)
    return dims


def attrs(node):
    import onnx
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def median_ms(f, reps=50):
    import torch
    for _ in range(5):
        f()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        f()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return float(np.median(times))


def conv_peer(node, dims):
    """The conv alone in cuDNN (with its bias), the faster of NCHW and channels-last, in ms; and a label."""
    import torch
    a = attrs(node)
    x, w = dims[node.input[0]], dims[node.input[1]]
    stride, group = a.get("strides", [1, 1]), a.get("group", 1)
    pads, dil = a.get("pads", [0, 0, 0, 0]), a.get("dilations", [1, 1])
    label = f"{w[2]}x{w[3]} s{stride[0]} {x[1]}->{w[0]} over {x[2]}x{x[3]}" + (f" g{group}" if group > 1 else "")
    best = float("inf")
    for fmt in (torch.contiguous_format, torch.channels_last):
        xt = torch.randn(*x, device="cuda").to(memory_format=fmt)
        wt = torch.randn(*w, device="cuda").to(memory_format=fmt)
        bt = torch.randn(w[0], device="cuda")
        f = lambda: torch.relu(torch.nn.functional.conv2d(xt, wt, bt, stride, (pads[0], pads[1]), dil, group))
        with torch.no_grad():
            best = min(best, median_ms(f))
    return best, label


def gemm_peer(node, dims):
    import torch
    a, b = dims[node.input[0]], dims[node.input[1]]
    trans_b = attrs(node).get("transB", 0) if node.op_type == "Gemm" else 0
    n = b[0] if trans_b else b[-1]
    m = int(np.prod(a[:-1]))
    xt, wt = torch.randn(m, a[-1], device="cuda"), torch.randn(a[-1], n, device="cuda")
    with torch.no_grad():
        return median_ms(lambda: xt @ wt), f"gemm {m}x{a[-1]}x{n}"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("report")
    p.add_argument("--out", default="")
    o = p.parse_args()
    import onnx
    import torch
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cuda.matmul.allow_tf32 = False
    model = onnx.load(o.model)
    dims = shapes_of(model)
    weights = {t.name for t in model.graph.initializer}
    by_name = {n.name: n for n in model.graph.node}
    report = json.load(open(o.report))
    rows = []
    for k in report.get("kernels", []):
        nodes = [by_name[n] for n in k.get("nodes", []) if n in by_name]
        heavy = [n for n in nodes if n.op_type == "Conv" or
                 (n.op_type in ("Gemm", "MatMul") and len(n.input) > 1 and n.input[1] in weights)]
        if not heavy:
            rows.append({"group": k["group"], "kind": "other", "ms": k.get("ms") or 0.0, "label": nodes[0].op_type if nodes else "?"})
            continue
        node = heavy[0]
        peer, label = conv_peer(node, dims) if node.op_type == "Conv" else gemm_peer(node, dims)
        kind = label.split(" ")[0] + (" s2" if " s2 " in label else "")
        rows.append({"group": k["group"], "kind": kind, "label": label, "ms": k.get("ms") or 0.0, "peer_ms": peer,
                     "node": node.name})
    print("| kernel | node | shape | Tessera ms | cuDNN/cuBLAS ms | ratio |")
    print("| --- | --- | --- | ---: | ---: | ---: |")
    for r in rows:
        if "peer_ms" in r:
            print(f"| {r['group']} | {r['node']} | {r['label']} | {r['ms']:.4f} | {r['peer_ms']:.4f} | {r['ms'] / r['peer_ms']:.2f} |")
    sums = {}
    for r in rows:
        s = sums.setdefault(r["kind"], [0, 0.0, 0.0])
        s[0] += 1
        s[1] += r["ms"]
        s[2] += r.get("peer_ms", 0.0)
    print("\n| kind | kernels | Tessera ms | peer ms | ratio |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for kind, (n, ms, peer) in sorted(sums.items(), key=lambda kv: -kv[1][1]):
        print(f"| {kind} | {n} | {ms:.3f} | {peer:.3f} | {ms / peer:.2f} |" if peer else f"| {kind} | {n} | {ms:.3f} | - | - |")
    if o.out:
        json.dump(rows, open(o.out, "w"), indent=1)


if __name__ == "__main__":
    sys.exit(main())
