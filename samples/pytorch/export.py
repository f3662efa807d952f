#!/usr/bin/env python3
"""Real architectures exported from PyTorch the way a user exports them today: torchvision's definitions, seeded
random weights (no download: the machines that run this reach no network), `torch.onnx.export(..., dynamo=True)`
(torch.export, the default exporter of recent PyTorch, which keeps each node's module path in its metadata).
The weights are random, so the outputs mean nothing; the graphs, shapes and layers are the real ones.

  python3 samples/pytorch/export.py --out DIR [--models shufflenet_v2_x0_5,squeezenet1_1]

Needs torch, torchvision, onnx and onnxscript (the GPU machine has them). Writes DIR/NAME.onnx and, beside it,
DIR/NAME_data/input_0.pb and output_0.pb (PyTorch's own output on the CPU in f32) as an ONNX test data set.
"""
import argparse
import os

BUILDERS = {
    "shufflenet_v2_x0_5": lambda tv: tv.models.shufflenet_v2_x0_5(weights=None),
    "squeezenet1_1": lambda tv: tv.models.squeezenet1_1(weights=None),
    "mobilenet_v3_small": lambda tv: tv.models.mobilenet_v3_small(weights=None),
    "resnet18": lambda tv: tv.models.resnet18(weights=None),
}


def export(name, out):
    import onnx
    import torch
    import torchvision
    from onnx import numpy_helper
    torch.manual_seed(0)
    m = BUILDERS[name](torchvision).eval()
    with torch.no_grad():
        for b in m.modules():  # fresh batch-norm statistics, so folding them changes the weights measurably
            if isinstance(b, torch.nn.BatchNorm2d):
                b.running_mean.normal_(0.0, 0.1)
                b.running_var.uniform_(0.5, 1.5)
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1))
    path = os.path.join(out, name + ".onnx")
    with torch.no_grad():
        y = m(x)
        torch.onnx.export(m, (x,), path, dynamo=True, input_names=["x"], output_names=["y"], external_data=False)
    data = os.path.join(out, name + "_data")
    os.makedirs(data, exist_ok=True)
    onnx.save_tensor(numpy_helper.from_array(x.numpy(), "x"), os.path.join(data, "input_0.pb"))
    onnx.save_tensor(numpy_helper.from_array(y.numpy(), "y"), os.path.join(data, "output_0.pb"))
    print(f"{path}: {os.path.getsize(path) / 1e6:.1f} MB, {len(onnx.load(path).graph.node)} nodes", flush=True)


def main():
    a = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("--out", required=True)
    a.add_argument("--models", default="shufflenet_v2_x0_5,squeezenet1_1")
    o = a.parse_args()
    os.makedirs(o.out, exist_ok=True)
    for name in o.models.split(","):
        export(name, o.out)


if __name__ == "__main__":
    main()
