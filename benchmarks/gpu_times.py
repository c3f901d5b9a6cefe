"""GPU time of each kernel of one fusegen forward+backward (torch.profiler, CUDA activity), for sweep points.

    PYTHONPATH=. python benchmarks/gpu_times.py --points 1x4096,256x1024 [--reps 20]
"""
import argparse
import collections
import pathlib
import sys
import tempfile

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fusegen.codegen import write_module  # noqa: E402
from fusegen.tools.accuracy import ReferenceLayer  # noqa: E402
from sweep import sweep_plan  # noqa: E402  (beside this script)
from fusegen.tools.tune import _import  # noqa: E402


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
    args = ap.parse_args(argv)
    modules = {}
    for point in args.points.split(","):
        batch, size = (int(v) for v in point.split("x"))
        if size not in modules:
            workdir = pathlib.Path(tempfile.mkdtemp(prefix="fusegen-gpu-"))
            modules[size] = _import(write_module(sweep_plan(size), workdir))
        model = modules[size].ModelNew(size, size, size // 32).cuda()
        ref = ReferenceLayer(size, size, size // 32).cuda()
        x = torch.randn(batch, size, device="cuda", requires_grad=True)
        g = torch.randn(batch, size, device="cuda")
        for name, m in (("fusegen", model), ("eager", ref)):
            times = kernel_us(lambda: m(x).backward(g), args.reps)
            print(f"== batch {batch} size {size} {name}: forward+backward kernels {sum(times.values()):.1f} us")
            for k, us in times.most_common():
                print(f"   {us:8.1f}  {k}")


if __name__ == "__main__":
    main()
