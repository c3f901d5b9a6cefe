"""3xFP16 on mma.sync (sm_80+, issue 17 part 1's sm_80/89 question), measured before any module uses it: the
16-bit mma.sync engine's two-plane form (tests/engine_probe.py's PLANES_ENGINE: each fp32 operand as fp16 hi and lo
planes of a power-of-two scale a row, three products a k16 step) against the 3xtf32 plan's sm_80 engine (mma_tf32:
the fp32 operands split into TF32 parts in registers, three m16n8k8 products) and the one-plane fp16 engine (one
product: the rate ceiling's reference), each GEMM's mainloop alone, at the headline's sizes in each GEMM's layout.
Times are the GEMM kernels' (CUDA events, medians; the planes' making is not in them: the modules make x's and
dz's per call, ~30 us at the headline, and W's once per version). Accuracy: the forward layout against fp64,
beside fp32 on CUDA cores (torch, TF32 off).

    device: PYTHONPATH=. python3 benchmarks/mma_3xfp16.py [--m 1024 --n 8192 --k 8192] [--reps 10]
"""
import argparse
import pathlib
import sys

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from engine_probe import BINDING, ENGINES, LAYOUTS, probe_source, tf32_probe_source  # noqa: E402
from fusegen.tools.tune import time_ms  # noqa: E402

# (name, layout index in LAYOUTS): the forward (x, W both k-fast), grad_input (dz k-fast, W n-fast) and
# grad_weight (dz, x both k-slow) with 16-byte copies
GEMMS = (("forward", 0), ("grad_input", 1), ("grad_weight", 2))


def build(name, source):
    from torch.utils.cpp_extension import load_inline

    major, minor = torch.cuda.get_device_capability()
    return load_inline(name, BINDING, cuda_sources=source, functions=["run"],
                       extra_cuda_cflags=["-O3", f"-arch=sm_{major}{minor}"])


def scaled_planes(x):
    """x (fp32, rows x k) as (2, rows, k) fp16 hi / lo planes of x / s, s = 2^(e - 14) a row (e: the row's largest
    exponent), and s: the modules' row scaling (operand_scale.cuh)."""
    e = torch.floor(torch.log2(x.abs().amax(dim=1, keepdim=True).clamp_min(2.0 ** -100)))
    s = torch.exp2(e - 14)
    v = x / s
    hi = v.half()
    lo = (v - hi.float()).half()
    return torch.stack([hi, lo]), s


def layout(x, k_fast):
    """x (..., rows, k) as the probe reads it: itself (k-fast) or its last two dimensions swapped, contiguous."""
    return (x if k_fast else x.transpose(-1, -2)).contiguous()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--m", type=int, default=1024)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--k", type=int, default=8192)
    ap.add_argument("--reps", type=int, default=10)
    args = ap.parse_args()
    m, n, k = args.m, args.n, args.k
    # (the half probe under tests/test_gpu_engines.py's name and flags: one build serves both)
    half, tf32 = build("fusegen_engine_probe_float16", probe_source("float16")), build("fusegen_probe_3xtf32",
                                                                                       tf32_probe_source())
    gen = torch.Generator(device="cuda").manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False
    rows, planes_variant = [], len(ENGINES) * len(LAYOUTS)
    # each GEMM's (output rows, output columns, reduction) at these sizes: dx is M x K over N, dW N x K over M
    for gemm, li, (r, c, red) in zip(*zip(*GEMMS), ((m, n, k), (m, k, n), (n, k, m))):
        a_kfast, b_kfast, _ = LAYOUTS[li]
        a = torch.randn(r, red, device="cuda", generator=gen)
        b = torch.randn(c, red, device="cuda", generator=gen) * 0.01
        (ap_, as_), (bp_, bs_) = scaled_planes(a), scaled_planes(b)
        A3, B3 = layout(ap_, a_kfast), layout(bp_, b_kfast)
        A1, B1 = A3[0].contiguous(), B3[0].contiguous()
        Af, Bf = layout(a, a_kfast), layout(b, b_kfast)
        truth = a.double() @ b.double().t()
        norm = truth.abs().max().item()
        if gemm == "forward":
            rows.append(("fp32 CUDA cores (torch, TF32 off)", gemm, None,
                         ((a @ b.t()).double() - truth).abs().max().item() / norm))
        runs = {
            "3xfp16 mma.sync (two fp16 planes)": lambda: half.run(planes_variant + li, A3, B3, r, c, red),
            "3xTF32 mma.sync (mma_tf32, split in registers)": lambda: tf32.run(li, Af, Bf, r, c, red),
            "fp16 mma.sync, one product (reference rate)": lambda: half.run(li, A1, B1, r, c, red),
        }
        for name, fn in runs.items():
            ms = time_ms(fn, args.reps)
            err = None
            if "one product" not in name:
                out = fn().double()
                if "3xfp16" in name:
                    out = out * as_.double() * bs_.double().t()
                err = (out - truth).abs().max().item() / norm
            rows.append((name, f"{gemm} {r}x{c}x{red}", (ms, 2.0 * r * c * red / ms / 1e9), err))
    print(f"\n{torch.cuda.get_device_name()}, sm_{''.join(map(str, torch.cuda.get_device_capability()))} code, "
          f"C ({m} x {n}) = A ({m} x {k}) B^T, mainloops alone (the probe stores the fp32 accumulators)")
    print(f"{'engine':48} {'GEMM':28} {'ms':>8} {'TFLOP/s':>8} {'max err / max |C| vs fp64':>26}")
    for name, gemm, t, err in rows:
        ms, tf = t if t else (float("nan"), float("nan"))
        print(f"{name:48} {gemm:28} {ms:8.3f} {tf:8.1f} {'' if err is None else f'{err:.2e}':>26}")


if __name__ == "__main__":
    main()
