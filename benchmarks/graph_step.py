"""A layer's forward+backward with the host out of the way: captured once in a CUDA graph and replayed (what
torch.compile's reduce-overhead mode does), fusegen against eager captured the same way, at sweep points.

    PYTHONPATH=. python benchmarks/graph_step.py [--points 16x1024,64x512] [--replays 200]

Prints one line a point: microseconds per replayed forward+backward (the median of --reps samples of
--replays replays each), and the eager-over-fusegen ratio. At small sizes the sweep's eager-mode calls are
bound by host time (PyTorch's autograd engine included); this shows what the kernels cost once it is gone.
"""
import argparse
import pathlib
import statistics
import sys

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fusegen.tools.accuracy import ReferenceLayer  # noqa: E402
from fusegen.tools.tune import capture_step  # noqa: E402
from sweep import build_modules  # noqa: E402  (beside this script)


def graphed_step_us(model, x, g, replays, reps):
    """Microseconds per replay of model(x).backward(g) captured in a CUDA graph (gradients written in place)."""
    graph, _ = capture_step(model, x, g)
    samples = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(replays):
            graph.replay()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1e3 / replays)
    return statistics.median(samples)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--points", default="1x512,16x512,16x1024,64x1024,256x1024,256x2048,1x8192",
                    help="batch x size, comma-separated")
    ap.add_argument("--replays", type=int, default=200)
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args(argv)
    points = [tuple(int(v) for v in point.split("x")) for point in args.points.split(",")]
    modules = build_modules(sorted({size for _, size in points}), sys.stderr)
    print(f"forward+backward replayed from a CUDA graph, us per step, {torch.cuda.get_device_name()}")
    for batch, size in points:
        torch.manual_seed(0)
        x = torch.randn(batch, size, device="cuda", requires_grad=True)
        g = torch.randn(batch, size, device="cuda")
        ours = graphed_step_us(modules[size].ModelNew(size, size, size // 32).cuda(), x, g, args.replays, args.reps)
        eager = graphed_step_us(ReferenceLayer(size, size, size // 32).cuda(), x, g, args.replays, args.reps)
        print(f"{batch:>5} x {size:<5} fusegen {ours:8.1f}  eager {eager:8.1f}  eager / fusegen {eager / ours:5.2f}x")


if __name__ == "__main__":
    main()
