"""A / B of two generated module files for the same layer on one GPU: forward and forward+backward, timed in
alternating rounds (A, B, A, B, ...) so that clock and host drift fall on both alike; medians of the rounds.
For "did this change cost time": e.g. the module of the previous commit (git show REV:generated/X.py > old.py)
against the current one.

    PYTHONPATH=. python benchmarks/ab_modules.py OLD.py NEW.py --init 8192,8192,512 --batch 1024 [--rounds 7]
"""
import argparse
import pathlib
import statistics
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from fusegen.tools.tune import _import, time_layer  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", type=pathlib.Path)
    ap.add_argument("b", type=pathlib.Path)
    ap.add_argument("--init", required=True, help="ModelNew's constructor arguments, comma-separated integers")
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--inner", type=int, default=5)
    args = ap.parse_args(argv)
    init = [int(v) for v in args.init.split(",")]
    models = {}
    for label, path in (("A", args.a), ("B", args.b)):
        torch.manual_seed(0)
        models[label] = _import(path).ModelNew(*init).cuda()
    x = torch.randn(args.batch, init[0], device="cuda")
    g = torch.randn(args.batch, models["A"](x).shape[-1], device="cuda")
    times = {label: ([], []) for label in models}
    for _ in range(args.rounds):
        for label, model in models.items():
            f, fb = time_layer(model, x, g, args.reps, inner=args.inner)
            times[label][0].append(f)
            times[label][1].append(fb)
    print(f"{torch.cuda.get_device_name()}, batch {args.batch}, init {init}, {args.rounds} alternating rounds")
    for label, path in (("A", args.a), ("B", args.b)):
        f, fb = (statistics.median(t) for t in times[label])
        print(f"{label} {path.name:<56} forward {f:8.4f} ms  forward+backward {fb:8.4f} ms")
    fa, fba = (statistics.median(t) for t in times["A"])
    fbb_f, fbb = (statistics.median(t) for t in times["B"])
    print(f"B / A: forward {fbb_f / fa:.3f}, forward+backward {fbb / fba:.3f}")


if __name__ == "__main__":
    main()
