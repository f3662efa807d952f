"""Timing on the GPU with CUDA events, and the two ceilings measured on the spot."""
import statistics

import torch


def time_ms(fn, warmup=3, reps=20):
    """Median of per-call times between CUDA events, after `warmup` calls; no host wait between calls."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for s, e in zip(starts, ends):
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def copy_bandwidth_tbps(gib=2):
    """Device-to-device copy, bytes read plus bytes written over time."""
    n = gib * (1 << 30) // 4
    src = torch.randn(n, device="cuda")
    dst = torch.empty_like(src)
    ms = time_ms(lambda: dst.copy_(src), warmup=3, reps=10)
    del src, dst
    return 2 * n * 4 / (ms * 1e-3) / 1e12


def bf16_matmul_tflops(n=8192):
    """An n×n×n bf16 product through cuBLAS on random data."""
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    ms = time_ms(lambda: a @ b, warmup=3, reps=10)
    del a, b
    return 2 * n ** 3 / (ms * 1e-3) / 1e12
