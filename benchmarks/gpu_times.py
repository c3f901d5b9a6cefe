"""GPU time of each kernel of one fusegen forward+backward (torch.profiler, CUDA activity), for sweep points.

    PYTHONPATH=. python benchmarks/gpu_times.py --points 1x4096,256x1024 [--reps 20] [--brief]

--brief prints one line a point: the forward's kernels (no_grad) and forward+backward's, fusegen and eager, in
GPU microseconds (host time excluded: what the schedule decides). The split-K overrides (FUSEGEN_SPLIT_WAVES,
FUSEGEN_WGMMA_MIN_TILES, ...; see launchers.cuh.j2) compare schedules without a rebuild.
"""
import argparse
import collections
import pathlib
import sys

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fusegen.tools.accuracy import ReferenceLayer  # noqa: E402
from sweep import build_modules  # noqa: E402  (beside this script)


def kernel_us(fn, reps):
    """{kernel name: microseconds per call} over reps calls."""
    from torch.profiler import ProfilerActivity, profile
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    times = collections.Counter()
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            times[e.name[:90]] += e.device_time / reps
    return times


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", default="1x4096,256x1024", help="batch x size, comma-separated")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--brief", action="store_true", help="one line a point: kernel totals only")
    args = ap.parse_args(argv)
    points = [tuple(int(v) for v in point.split("x")) for point in args.points.split(",")]
    modules = build_modules(sorted({size for _, size in points}), sys.stderr)
    for batch, size in points:
        model = modules[size].ModelNew(size, size, size // 32).cuda()
        ref = ReferenceLayer(size, size, size // 32).cuda()
        x = torch.randn(batch, size, device="cuda", requires_grad=True)
        g = torch.randn(batch, size, device="cuda")
        totals = []
        for name, m in (("fusegen", model), ("eager", ref)):
            def forward(m=m):
                with torch.no_grad():
                    m(x)
            fwd = sum(kernel_us(forward, args.reps).values())
            times = kernel_us(lambda: m(x).backward(g), args.reps)
            totals.append(f"{name} {fwd:7.1f} / {sum(times.values()):7.1f}")
            if not args.brief:
                print(f"== batch {batch} size {size} {name}: forward kernels {fwd:.1f} us, forward+backward "
                      f"{sum(times.values()):.1f} us")
                for k, us in times.most_common():
                    print(f"   {us:8.1f}  {k}")
        print(f"{batch:>5} x {size:<5} GPU us fwd / fwd+bwd: " + ", ".join(totals), flush=True)


if __name__ == "__main__":
    main()
