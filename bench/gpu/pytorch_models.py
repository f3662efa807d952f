#!/usr/bin/env python3
"""Models exported from PyTorch, run by Tessera, checked against PyTorch: for each model, export it with fixed
seeds (torch.onnx.export, the TorchScript exporter, opset 17, f32), write one ONNX test data set beside it
(input_0.pb; output_0.pb from PyTorch on the CPU in f32, so no TF32 enters the reference; with --dtype bf16 the
model and its input are exported in bf16 and compared with the f32 model's output), then time
`tessera-cli run MODEL --backend B --inputs DATA --output OUT --no-reference --no-baseline --json` twice, on an
empty module cache (cold) and on the same cache again (warm), and compare Tessera's output with PyTorch's
(max |difference| / max |PyTorch|). Not a unit test. Needs torch, torchvision and onnx (the GPU machine has them).

  python3 bench/gpu/pytorch_models.py --cli "gpubundle/run tessera-cli" --backend cuda --out $OUT [--models resnet50_b1,...]
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

import numpy as np


def gpt_stack(blocks):
    import torch

    class Block(torch.nn.Module):
        def __init__(self, d=768, heads=12):
            super().__init__()
            self.heads, self.d = heads, d
            self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
            self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
            self.fc, self.out = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
            s = q @ k.transpose(-2, -1) * (1.0 / (d // self.heads) ** 0.5)
            mask = torch.triu(torch.full((t, t), float("-inf"), device=x.device, dtype=x.dtype), diagonal=1)
            a = torch.softmax(s + mask, dim=-1) @ v
            x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
            return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x))))

    return torch.nn.Sequential(*[Block() for _ in range(blocks)])


def bert_encoder(layers, vocab=30522, d=768, heads=12, max_len=512):
    """BERT-base's shape written out: token, position and segment embeddings (Gather), post-norm blocks with an
    additive padding mask from the token ids (id 0 is padding), GELU MLPs, and the pooler's Tanh."""
    import torch

    class Layer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
            self.ln1, self.ln2 = torch.nn.LayerNorm(d, eps=1e-12), torch.nn.LayerNorm(d, eps=1e-12)
            self.fc, self.out = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)

        def forward(self, x, bias):
            b, t, _ = x.shape
            q, k, v = (z.reshape(b, t, heads, d // heads).transpose(1, 2) for z in self.qkv(x).split(d, dim=2))
            s = q @ k.transpose(-2, -1) * (1.0 / (d // heads) ** 0.5) + bias
            a = (torch.softmax(s, dim=-1) @ v).transpose(1, 2).reshape(b, t, d)
            x = self.ln1(x + self.proj(a))
            return self.ln2(x + self.out(torch.nn.functional.gelu(self.fc(x))))

    class Bert(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos, self.seg = torch.nn.Embedding(vocab, d), torch.nn.Embedding(max_len, d), torch.nn.Embedding(2, d)
            self.ln = torch.nn.LayerNorm(d, eps=1e-12)
            self.layers = torch.nn.ModuleList([Layer() for _ in range(layers)])
            self.pool = torch.nn.Linear(d, d)

        def forward(self, ids):
            t = ids.shape[1]
            pos = torch.arange(t, device=ids.device).unsqueeze(0)
            x = self.ln(self.tok(ids) + self.pos(pos) + self.seg(torch.zeros_like(ids)))
            bias = ((ids == 0).to(x.dtype) * -10000.0)[:, None, None, :]
            for layer in self.layers:
                x = layer(x, bias)
            return torch.tanh(self.pool(x[:, 0]))

    return Bert()


def build(name):
    import torch
    import torchvision
    torch.manual_seed(0)
    if name.startswith(("resnet18", "resnet34", "resnet50")):  # resnet50_b1: the model, then the batch
        m, shape = getattr(torchvision.models, name.split("_b")[0])(weights=None), (int(name.split("_b")[1]), 3, 224, 224)
    elif name.startswith("mobilenet_v2"):
        m, shape = torchvision.models.mobilenet_v2(weights=None), (int(name.split("_b")[1]), 3, 224, 224)
    elif name.startswith("bert_encoder"):  # name: bert_encoder_l4_b8_s128 (layers, batch, sequence)
        parts = dict((p[0], int(p[1:])) for p in name.split("_")[2:])
        m, shape = bert_encoder(parts["l"]), (parts["b"], parts["s"])
    elif name.startswith("gpt_block"):  # pre-norm causal attention and a GELU MLP, written out (GPT-2's shape)
        m, shape = gpt_stack(int(name.split("_x")[1]) if "_x" in name else 1), (8, 256, 768)
    elif name.startswith("vit_b16"):
        torch.backends.mha.set_fastpath_enabled(False)
        m, shape = torchvision.models.vit_b_16(weights=None), (int(name.split("_b")[-1]), 3, 224, 224)
    elif name.startswith(("fcn_resnet50", "deeplabv3_mobilenet", "lraspp_mobilenet")):  # bilinear Resize
        seg = torchvision.models.segmentation
        make = {"fcn_resnet50": seg.fcn_resnet50, "deeplabv3_mobilenet": seg.deeplabv3_mobilenet_v3_large,
                "lraspp_mobilenet": seg.lraspp_mobilenet_v3_large}[name.rsplit("_b", 1)[0]]
        net = make(weights=None, weights_backbone=None, num_classes=21)

        class Out(torch.nn.Module):  # the segmentation models return a dict
            def __init__(self, net):
                super().__init__()
                self.net = net

            def forward(self, x):
                return self.net(x)["out"]

        m, shape = Out(net), (int(name.rsplit("_b", 1)[1]), 3, 224, 224)
    elif name.startswith("ssdlite"):  # detection: anchors, box decoding, per-class NMS (data-dependent shapes)
        net = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None)

        class Boxes(torch.nn.Module):  # the detector returns a list of dicts: the first image's boxes
            def __init__(self, net):
                super().__init__()
                self.net = net

            def forward(self, x):
                return self.net(x)[0]["boxes"]

        m, shape = Boxes(net), (int(name.rsplit("_b", 1)[1]), 3, 320, 320)
    elif name == "encoder_layer":
        torch.backends.mha.set_fastpath_enabled(False)  # the fused fast path has no ONNX form
        m = torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, batch_first=True, dropout=0.0)
        shape = (8, 128, 512)
    else:
        raise SystemExit(f"unknown model {name}")
    m.eval()
    # torchvision zero-initializes some heads (ViT's classifier): its output would be zeros whatever the kernels
    # did, so every all-zero parameter is drawn afresh (seeded) for the comparison to mean something.
    with torch.no_grad():
        for p in m.parameters():
            if p.numel() > 1 and not p.any():
                p.normal_(0.0, 0.02)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(*shape, generator=g)
    if name.startswith("bert_encoder"):  # token ids, the last quarter of each sequence padding (id 0)
        x = torch.randint(1, 30522, shape, generator=g)
        x[:, shape[1] * 3 // 4:] = 0
    return m, x


def to_bf16(m, x):
    """The model's parameters and a floating-point input in bf16; token ids (BERT's) stay integers."""
    import torch
    return m.to(torch.bfloat16), x.to(torch.bfloat16) if x.is_floating_point() else x


def tensor_proto(t, name):
    """A TensorProto of a CPU tensor; bf16 as raw 16-bit words (numpy has no bf16)."""
    import onnx
    import torch
    from onnx import numpy_helper
    if t.dtype != torch.bfloat16:
        return numpy_helper.from_array(t.numpy(), name)
    p = onnx.TensorProto(name=name, data_type=onnx.TensorProto.BFLOAT16, dims=list(t.shape))
    p.raw_data = t.contiguous().view(torch.int16).numpy().tobytes()
    return p


def export(name, folder, dtype="f32"):
    import onnx
    import torch
    m, x = build(name)
    path = os.path.join(folder, name + ".onnx")
    with torch.no_grad():
        y = m(x)  # the f32 model's output on the CPU: the reference for either dtype
        if dtype == "bf16":
            m, x = to_bf16(m, x)
        torch.onnx.export(m, (x,), path, opset_version=17, dynamo=False, input_names=["x"], output_names=["y"])
    data = os.path.join(folder, name + "_data")
    os.makedirs(data, exist_ok=True)
    onnx.save_tensor(tensor_proto(x, "x"), os.path.join(data, "input_0.pb"))
    return path, data, y.numpy()


def torch_times(name, reps=30, dtype="f32"):
    """PyTorch eager and torch.compile on the GPU, PyTorch's default precision (TF32 for cuDNN convolutions, not for
    matmuls): medians of `reps` CUDA-event timings after warm-up, in ms."""
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    m, x = build(name)
    m, x = m.cuda(), x.cuda()
    if dtype == "bf16":
        m, x = to_bf16(m, x)

    def median_ms(f):
        with torch.no_grad():
            for _ in range(5):
                f(x)
            times = []
            for _ in range(reps):
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                f(x)
                b.record()
                torch.cuda.synchronize()
                times.append(a.elapsed_time(b))
        return float(np.median(times))

    eager = median_ms(m)
    compiled = median_ms(torch.compile(m))
    # CUDA graphs on PyTorch's side too, against Tessera's graph_ms (each call's output copied so the graph's
    # buffers are not overwritten under a later reader).
    graphs = median_ms(lambda t, f=torch.compile(m, mode="reduce-overhead"): f(t).clone())
    return {"eager_ms": round(eager, 4), "compile_ms": round(compiled, 4), "compile_graphs_ms": round(graphs, 4)}


def run(cli, model, data, out, backend, cache, tf32="off"):
    env = dict(os.environ, TESSERA_CACHE_DIR=cache)
    cmd = shlex.split(cli) + ["run", model, "--backend", backend, "--inputs", data, "--output", out,
                              "--no-reference", "--no-baseline", "--json"]
    if tf32 != "off":
        cmd += ["--tf32", tf32]
    start = time.time()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    wall = time.time() - start
    try:
        report = json.loads(p.stdout)
    except json.JSONDecodeError:
        report = {"error": (p.stderr or p.stdout)[-400:]}
    return wall, p.returncode, report


def compare(out, expected):
    import onnx
    from onnx import numpy_helper
    path = os.path.join(out, "output_0.pb")
    if not os.path.exists(path):
        return None
    t = onnx.load_tensor(path)
    if t.data_type == onnx.TensorProto.BFLOAT16:  # the 16 high bits of an f32
        words = np.frombuffer(t.raw_data, dtype=np.uint16).astype(np.uint32) << 16
        got = words.view(np.float32).reshape(tuple(t.dims)).astype(np.float64)
    else:
        got = numpy_helper.to_array(t).astype(np.float64)
    ref = expected.astype(np.float64)
    if got.shape != ref.shape:
        return float("inf")
    if np.max(np.abs(ref)) == 0 or np.std(ref) == 0:
        return None  # a constant output checks nothing
    return float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-30))


def main():
    a = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("--cli", required=True)
    a.add_argument("--baseline-cli", default="", help="an older CLI to time cold on the same models (same run)")
    a.add_argument("--backend", default="cuda")
    a.add_argument("--models", default="resnet50_b1,resnet50_b32,mobilenet_v2_b32,encoder_layer")
    a.add_argument("--out", default="bench-out")
    a.add_argument("--torch", action="store_true", help="also time PyTorch eager and torch.compile on the GPU")
    a.add_argument("--tf32", default="off", help="Tessera's --tf32 policy (pytorch: like PyTorch's defaults, which "
                   "the --torch timings always use)")
    a.add_argument("--dtype", default="f32", choices=["f32", "bf16"], help="the exported model's and input's type")
    a.add_argument("--work", default="", help="folder for the exported models and data (default: a fresh temporary one)")
    o = a.parse_args()
    os.makedirs(o.out, exist_ok=True)
    work = o.work or tempfile.mkdtemp()
    os.makedirs(work, exist_ok=True)
    rows = []
    for name in o.models.split(","):
        try:
            model, data, expected = export(name, work, o.dtype)
        except Exception as e:  # noqa: BLE001 - one model's export failing must not lose the others
            rows.append({"model": name, "export_error": str(e)[-300:]})
            print(json.dumps(rows[-1]), flush=True)
            continue
        cache = tempfile.mkdtemp()
        row = {"model": name, "tf32": o.tf32, "dtype": o.dtype}
        for phase in ["cold", "warm"]:
            out = os.path.join(work, f"{name}_{phase}")
            wall, rc, rep = run(o.cli, model, data, out, o.backend, cache, o.tf32)
            kernels = rep.get("kernels", [])
            row[phase] = {"wall_s": round(wall, 2), "rc": rc, "build_ms": rep.get("build_ms"),
                          "total_ms": rep.get("total_ms"), "whole_ms": rep.get("whole_ms"),
                          "graph_ms": rep.get("graph_ms"), "whole_note": rep.get("whole_note"), "kernels": len(kernels),
                          "cached": sum(1 for k in kernels if k.get("cached")),
                          "failed": [k["group"] + ": " + k.get("message", "")[:120] for k in kernels
                                     if k.get("status") not in ("unchecked", "ok")][:3],
                          "max_rel_err": compare(out, expected), "error": rep.get("error"),
                          "host": [k["group"] + ": " + str(k.get("host"))[:100] for k in kernels if k.get("host")][:6],
                          "slowest": [{k: kr.get(k) for k in ("group", "ms", "gflops", "precision", "nodes")}
                                      for kr in sorted(kernels, key=lambda kr: -(kr.get("ms") or 0))[:12]]}
        if o.baseline_cli:
            wall, rc, rep = run(o.baseline_cli, model, data, os.path.join(work, name + "_base"), o.backend,
                                tempfile.mkdtemp(), o.tf32)
            row["baseline_cold_wall_s"] = round(wall, 2)
            row["baseline_total_ms"] = rep.get("total_ms")
        if o.torch:
            try:
                row["torch"] = torch_times(name, dtype=o.dtype)
            except Exception as e:  # noqa: BLE001
                row["torch"] = {"error": str(e)[-200:]}
        rows.append(row)
        print(json.dumps(row), flush=True)
        with open(os.path.join(o.out, "pytorch_models.json"), "w") as f:
            json.dump(rows, f, indent=1)
    print("| model | cold s | warm s | old cold s | kernels | kernel ms | whole run ms | CUDA graph ms | eager ms | compile ms "
          "| compile with CUDA graphs ms | max rel err |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        if "cold" not in r:
            print(f"| {r['model']} | export failed: {r.get('export_error', '')[:80]} |")
            continue
        c, w = r["cold"], r["warm"]
        t = r.get("torch", {})
        print(f"| {r['model']} | {c['wall_s']} | {w['wall_s']} | {r.get('baseline_cold_wall_s', '-')} | {c['kernels']} | "
              f"{c['total_ms']} | {c.get('whole_ms', '-')} | {c.get('graph_ms', '-')} | {t.get('eager_ms', '-')} | "
              f"{t.get('compile_ms', '-')} | {t.get('compile_graphs_ms', '-')} | {c['max_rel_err']} |")


if __name__ == "__main__":
    sys.exit(main())
