"""Is a 16-bit step's GPU time ours to cut? Every kernel of one forward+backward step (the parameters' gradients
set to None, x's accumulating: its add shows) for fusegen, eager and torch.compile side by side, and cuBLAS's time
for the layer's three GEMMs alone in the layouts the layer has them (x @ W^T; dz @ W; dz^T @ x), each as TFLOP/s
of its 2*M*N*K.

    device: PYTHONPATH=. python3 benchmarks/gemm_peers.py [--dtypes bfloat16,float16] [--compile max-autotune-no-cudagraphs]
"""
import argparse
import pathlib
import sys

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fusegen.tools.tune import time_ms  # noqa: E402

sys.path.insert(0, str(REPO / "benchmarks"))
from kernel_times import step_kernel_times  # noqa: E402
from step_gaps import headline_layers  # noqa: E402


def cublas_gemms(m, k, n, dt, reps):
    """{name: (ms, TFLOP/s)} of torch.matmul for the layer's three GEMMs, 5 calls a sample back to back."""
    gen = torch.Generator(device="cuda").manual_seed(2)
    x = torch.randn(m, k, device="cuda", generator=gen).to(dt)
    w = torch.randn(n, k, device="cuda", generator=gen).to(dt)
    dz = torch.randn(m, n, device="cuda", generator=gen).to(dt)
    flop = 2.0 * m * n * k
    calls = {"forward x @ W^T": lambda: x @ w.t(), "grad_input dz @ W": lambda: dz @ w,
             "grad_weight dz^T @ x": lambda: dz.t() @ x}
    return {name: (ms, flop / ms / 1e9) for name, fn in calls.items() for ms in [time_ms(fn, reps, inner=5)]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtypes", default="bfloat16,float16")
    ap.add_argument("--init", default="8192,8192,512", help="input, hidden, groups")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--compile", default="", help="also torch.compile in this mode")
    args = ap.parse_args()
    k, n, groups = (int(v) for v in args.init.split(","))
    m = args.batch
    gpu = torch.cuda.get_device_name()
    modes = {d: dict(dtype=d) for d in args.dtypes.split(",")}
    summary = []
    for d, name, model, x, g in headline_layers(modes, k, n, groups, m, args.compile):
        rows = step_kernel_times(model, x, g, args.reps, by_launch=True)
        total = sum(us for us, _ in rows.values())
        print(f"\n{d} {name}: a fresh-grads step's kernels, us (total {total:.1f})")
        for kname, (us, _) in sorted(rows.items(), key=lambda kv: -kv[1][0]):
            print(f"  {us:8.1f}  {kname[:110]}")
        summary.append((d, name, total))
    for d in modes:
        for gname, (ms, tflops) in cublas_gemms(m, k, n, getattr(torch, d), args.reps).items():
            print(f"{d} cuBLAS {gname}: {ms * 1e3:.1f} us, {tflops:.0f} TFLOP/s")
            summary.append((d, "cuBLAS " + gname, ms * 1e3))
    print(f"\n{gpu}, batch {m}, {k} -> {n}, {groups} groups (us)")
    for d, name, us in summary:
        print(f"{d:9} {name:45} {us:8.1f}")


if __name__ == "__main__":
    main()
