#!/usr/bin/env python3
"""Real architectures exported from PyTorch the way a user exports them today: torchvision's definitions, seeded
random weights (no download: the machines that run this reach no network), `torch.onnx.export(..., dynamo=True)`
(torch.export, the default exporter of recent PyTorch, which keeps each node's module path in its metadata).
The weights are random, so the outputs mean nothing; the graphs, shapes and layers are the real ones.

  python3 samples/pytorch/export.py --out DIR [--models shufflenet_v2_x0_5,squeezenet1_1] [--exporter torchscript]

`--exporter torchscript` uses the older TorchScript exporter (`dynamo=False`, opset 17), which traces a detector's
data-dependent post-processing (torch.export refuses it) into Loop, If and NonMaxSuppression nodes.

Models: torchvision classifiers and segmenters (1 x 3 x 224 x 224), and gpt_tiny / bert_tiny, a GPT-2-like decoder
and a BERT-like encoder written here as those models' PyTorch code is (token ids in, logits out).

Needs torch, torchvision, onnx and onnxscript (the GPU machine has them). Writes DIR/NAME.onnx and, beside it,
DIR/NAME_data/input_0.pb and output_0.pb (PyTorch's own output on the CPU in f32) as an ONNX test data set.
"""
import argparse
import os

IMAGE = (1, 3, 224, 224)


def wrapped(build, forward):
    """A torchvision model from `build` inside a module whose forward is `forward(model, x)`, and a seeded input."""
    def make(tv, torch):
        m = build(tv)

        class Wrapped(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = m

            def forward(self, x):
                return forward(self.m, x)
        return Wrapped(), torch.randn(*IMAGE, generator=torch.Generator().manual_seed(1))
    return make


def image_model(build):
    """A torchvision image model and its input shape; segmentation models return a dict, whose "out" is kept."""
    def output(m, x):
        y = m(x)
        if isinstance(y, list):  # a detector: the first image's boxes
            return y[0]["boxes"]
        return y["out"] if isinstance(y, dict) else y
    return wrapped(build, output)


def spread_scores(detector):
    """Random weights give a detector thousands of boxes with near-equal scores, whose order (and so which boxes
    NMS keeps) a last-bit rounding decides: its classification head's weights are scaled up so that the scores
    are far apart and the boxes kept are the model's, not the rounding's."""
    import torch
    with torch.no_grad():
        for name, mod in detector.named_modules():
            if "classification_head" in name and isinstance(mod, torch.nn.Conv2d):
                mod.weight.mul_(30.0)
    return detector


def detector_head(build):
    """A detector up to its head, before the post-processing whose choices (thresholds, NMS, the top boxes)
    turn last-bit differences into other boxes: the resize and normalization, the backbone and the head's box
    regressions and class logits, one tensor [1, anchors, 4 + classes]. What a comparison with PyTorch can check
    exactly."""
    def head(det, x):
        import torch
        images, _ = det.transform(list(x))
        out = det.head(list(det.backbone(images.tensors).values()))
        return torch.cat([out["bbox_regression"], out["cls_logits"]], dim=-1)
    return wrapped(build, head)


def tiny_transformer(causal):
    """A GPT-2-like decoder (causal self-attention, token and position embeddings, an LM head) or a BERT-like
    encoder (the same without the mask): 4 blocks of width 256, 4 heads, 64 tokens, vocabulary 1000, pre-norm,
    GELU, attention through scaled_dot_product_attention as both models' PyTorch code has it."""
    def make(_tv, torch):
        nn, F = torch.nn, torch.nn.functional
        width, heads, tokens, vocab = 256, 4, 64, 1000

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
                self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
                self.fc1, self.fc2 = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

            def forward(self, x):
                b, t, _ = x.shape
                q, k, v = self.qkv(self.ln1(x)).split(width, dim=2)
                q, k, v = (z.view(b, t, heads, width // heads).transpose(1, 2) for z in (q, k, v))
                a = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                x = x + self.proj(a.transpose(1, 2).reshape(b, t, width))
                return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.tok, self.pos = nn.Embedding(vocab, width), nn.Embedding(tokens, width)
                self.blocks = nn.ModuleList(Block() for _ in range(4))
                self.ln, self.head = nn.LayerNorm(width), nn.Linear(width, vocab, bias=False)

            def forward(self, ids):
                x = self.tok(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
                for blk in self.blocks:
                    x = blk(x)
                return self.head(self.ln(x))
        ids = torch.randint(0, vocab, (1, tokens), generator=torch.Generator().manual_seed(1))
        return Model(), ids
    return make


BUILDERS = {
    "shufflenet_v2_x0_5": image_model(lambda tv: tv.models.shufflenet_v2_x0_5(weights=None)),
    "squeezenet1_1": image_model(lambda tv: tv.models.squeezenet1_1(weights=None)),
    "mobilenet_v3_small": image_model(lambda tv: tv.models.mobilenet_v3_small(weights=None)),
    "resnet18": image_model(lambda tv: tv.models.resnet18(weights=None)),
    "efficientnet_b0": image_model(lambda tv: tv.models.efficientnet_b0(weights=None)),
    "lraspp_mobilenet_v3_large": image_model(
        lambda tv: tv.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None)),
    "deeplabv3_mobilenet_v3_large": image_model(
        lambda tv: tv.models.segmentation.deeplabv3_mobilenet_v3_large(weights=None, weights_backbone=None)),
    "resnet50": image_model(lambda tv: tv.models.resnet50(weights=None)),
    "mobilenet_v2": image_model(lambda tv: tv.models.mobilenet_v2(weights=None)),
    "densenet121": image_model(lambda tv: tv.models.densenet121(weights=None)),
    "googlenet": image_model(lambda tv: tv.models.googlenet(weights=None, aux_logits=False, init_weights=True)),
    "regnet_y_400mf": image_model(lambda tv: tv.models.regnet_y_400mf(weights=None)),
    "convnext_tiny": image_model(lambda tv: tv.models.convnext_tiny(weights=None)),
    "vit_b_16": image_model(lambda tv: tv.models.vit_b_16(weights=None)),
    "swin_t": image_model(lambda tv: tv.models.swin_t(weights=None)),
    "fcn_resnet50": image_model(
        lambda tv: tv.models.segmentation.fcn_resnet50(weights=None, weights_backbone=None, aux_loss=False)),
    "ssdlite320_mobilenet_v3_large": image_model(
        lambda tv: spread_scores(tv.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None))),
    "ssdlite320_head": detector_head(
        lambda tv: spread_scores(tv.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None))),
    "gpt_tiny": tiny_transformer(causal=True),
    "bert_tiny": tiny_transformer(causal=False),
}


def export(name, out, exporter="dynamo"):
    import onnx
    import torch
    import torchvision
    from onnx import numpy_helper
    torch.manual_seed(0)
    m, x = BUILDERS[name](torchvision, torch)
    m = m.eval()
    with torch.no_grad():
        for b in m.modules():  # fresh batch-norm statistics, so folding them changes the weights measurably
            if isinstance(b, torch.nn.BatchNorm2d):
                b.running_mean.normal_(0.0, 0.1)
                b.running_var.uniform_(0.5, 1.5)
    path = os.path.join(out, name + ".onnx")
    with torch.no_grad():
        y = m(x)
        if exporter == "torchscript":
            torch.onnx.export(m, (x,), path, dynamo=False, opset_version=17, input_names=["x"], output_names=["y"])
        else:
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
    a.add_argument("--exporter", choices=["dynamo", "torchscript"], default="dynamo")
    o = a.parse_args()
    os.makedirs(o.out, exist_ok=True)
    for name in o.models.split(","):
        try:
            export(name, o.out, o.exporter)
        except Exception as e:  # one model the exporter refuses leaves the others
            print(f"{name}: export failed: {type(e).__name__}: {str(e)[:300]}", flush=True)


if __name__ == "__main__":
    main()
