"""The GPU suite's cases: each a Tessera model in bench/cases/ and the same computation in PyTorch.

A case's torch function takes the model's tensors in order (graph inputs, then initializers) so it computes
exactly what the .tsr file says on exactly Tessera's inputs. `kind` picks the target (docs/performance.md):
  memory     at least as fast as torch.compile and >= 85% of the copy bandwidth (each input read once, each
             output written once)
  gemm_bf16  >= 60% of cuBLAS's throughput (torch.mm alone); gemm_f32 >= 70% (no TF32 anywhere)
  attention, conv   faster than PyTorch eager
"""
from dataclasses import dataclass, field
from typing import Callable, Optional

import torch
import torch.nn.functional as F


@dataclass
class Case:
    name: str
    files: tuple                      # candidate .tsr names in bench/cases (the first that exists is used)
    kind: str
    fn: Callable                      # (list of tensors) -> output
    flops: Callable = None            # (list of tensors) -> useful FLOPs
    tol: float = 1e-4                 # max |tessera - torch| / max |torch|
    library: Optional[Callable] = None  # a library-only lower bound timed beside eager (cuBLAS mm, SDPA)
    library_name: str = ""
    library_same: bool = False          # the library computes the case itself (checked), not just its core
    notes: list = field(default_factory=list)


def _by_rank(ts, rank):
    return [t for t in ts if t.dim() == rank]


def gelu_chain(ts):
    x, w, b = ts
    return F.gelu(x * w + b)


def softmax(ts):
    return torch.softmax(ts[0], dim=-1)


def layernorm(ts):
    x, gamma, beta = ts
    return F.layer_norm(x, (x.shape[-1],), gamma, beta, 1e-5)


def gemm_bias_relu(ts):
    a, b = _by_rank(ts, 2)[:2]
    bias = _by_rank(ts, 1)[0]
    return torch.relu(a @ b + bias)


def gemm_only(ts):
    a, b = _by_rank(ts, 2)[:2]
    return a @ b


def gemm_flops(ts):
    a, b = _by_rank(ts, 2)[:2]
    return 2 * a.shape[0] * a.shape[1] * b.shape[1]


def attention(ts):
    q, k, v = ts[:3]
    return torch.softmax((q @ k.transpose(-1, -2)) * 0.125, dim=-1) @ v


def attention_sdpa(ts):
    q, k, v = ts[:3]
    return F.scaled_dot_product_attention(q, k, v, scale=0.125)


def attention_flops(ts):
    q = ts[0]
    b, h, s, d = q.shape
    return 2 * 2 * b * h * s * s * d


def conv_bn_relu(ts):
    x, w, gamma, beta, mean, var = ts
    c = F.conv2d(x, w, None, padding=1)
    return torch.relu(F.batch_norm(c, mean, var, gamma, beta, False, 0.0, 1e-5))


def conv1x1_bn_relu(ts):
    x, w, gamma, beta, mean, var = ts
    c = F.conv2d(x, w, None)
    return torch.relu(F.batch_norm(c, mean, var, gamma, beta, False, 0.0, 1e-5))


def conv_flops(ts):
    x, w = ts[0], ts[1]
    n, _, h, wd = x.shape
    m, c, kh, kw = w.shape
    return 2 * n * m * h * wd * c * kh * kw


CASES = [
    Case("softmax", ("softmax.tsr",), "memory", softmax),
    Case("layernorm", ("layernorm.tsr",), "memory", layernorm),
    Case("gelu_chain", ("gelu_chain.tsr",), "memory", gelu_chain),
    Case("conv_bn_relu", ("conv_bn_relu.tsr",), "conv", conv_bn_relu, conv_flops, tol=1e-4),
    Case("conv1x1_bn_relu", ("conv1x1_bn_relu.tsr",), "conv", conv1x1_bn_relu, conv_flops, tol=1e-4),
    Case("gemm_f32", ("gemm_f32.tsr", "gemm_f32_4096.tsr"), "gemm_f32", gemm_bias_relu, gemm_flops,
         tol=1e-4, library=gemm_only, library_name="cuBLAS mm"),
    Case("gemm_bf16", ("gemm_bf16.tsr", "gemm_bf16_4096.tsr"), "gemm_bf16", gemm_bias_relu, gemm_flops,
         tol=2e-2, library=gemm_only, library_name="cuBLAS mm"),
    Case("attention", ("attention.tsr",), "attention", attention, attention_flops, tol=3e-2,
         library=attention_sdpa, library_name="SDPA (flash)", library_same=True),
]

# What each kind must reach (docs/performance.md, issue 5's targets).
TARGETS = {
    "memory": "<= torch.compile and >= 85% of 4.3 TB/s",
    "gemm_bf16": ">= 60% of cuBLAS throughput",
    "gemm_f32": ">= 70% of cuBLAS throughput",
    "attention": "faster than eager",
    "conv": "faster than eager",
}
