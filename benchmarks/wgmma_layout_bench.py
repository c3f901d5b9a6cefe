"""The 16-bit wgmma mainloop alone (tests/engine_probe.py's probe: the engine, its tensor maps, a plain fp32
store), timed at the headline's GEMM shapes with R in each layout: is a GEMM's rate the mainloop's or its
epilogue's? The forward reads R = W k-contiguous, dx and dW read R column-contiguous.

    device: PYTHONPATH=. python3 benchmarks/wgmma_layout_bench.py [--block-m 128,256] [--reps 20]
"""
import argparse
import pathlib
import sys

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from engine_probe import BINDING, wgmma_probe_source  # noqa: E402

# (name, M = P rows, N = R columns, K): the forward's and dx's shape (1024 x 8192 over 8192), dW's (8192 x 8192
# over a batch of 1024)
SHAPES = [("forward / dx", 1024, 8192, 8192), ("dW", 8192, 8192, 1024)]


def main():
    from torch.utils.cpp_extension import load_inline

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--block-m", default="128,256")
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    print(f"{torch.cuda.get_device_name()}: bf16 wgmma mainloop + fp32 store, median of {args.reps}")
    print(f"{'tile rows':>9} {'shape':<14} {'R layout':<12} {'us':>8} {'TFLOP/s':>8}")
    for bm in (int(v) for v in args.block_m.split(",")):
        ext = load_inline(f"fusegen_wgmma_layout_bench_m{bm}", BINDING,
                          cuda_sources=wgmma_probe_source("bfloat16", bm), functions=["run"],
                          extra_cuda_cflags=["-O3", "-gencode=arch=compute_90a,code=sm_90a"])
        for name, m, n, k in SHAPES:
            p = torch.randn(m, k, device="cuda").to(torch.bfloat16)
            w = torch.randn(n, k, device="cuda").to(torch.bfloat16)
            for variant, layout in ((0, "k-fast"), (1, "column-fast")):
                r = w if variant == 0 else w.t().contiguous()
                for _ in range(3):
                    ext.run(variant, p, r, m, n, k)
                torch.cuda.synchronize()
                # the kernel alone (the binding's NaN fill of C is a kernel of its own)
                with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                    for _ in range(args.reps):
                        ext.run(variant, p, r, m, n, k)
                    torch.cuda.synchronize()
                times = [e.time_range.elapsed_us() for e in prof.events()
                         if e.device_type == torch.autograd.DeviceType.CUDA and "wgmma" in e.name]
                us = sorted(times)[len(times) // 2]
                print(f"{bm:9d} {name:<14} {layout:<12} {us:8.1f} {2 * m * n * k / us / 1e6:8.0f}")


if __name__ == "__main__":
    main()
