"""A / B of two generated module files for the same layer on one GPU: forward and forward+backward, timed in
alternating rounds (A, B, A, B, ...) so that clock and host drift fall on both alike; medians of the rounds.
For "did this change cost time": e.g. the module of the previous commit (git show REV:generated/X.py > old.py)
against the current one.

    PYTHONPATH=. python benchmarks/ab_modules.py OLD.py NEW.py --init 8192,8192,512 --batch 1024 [--rounds 7] [--dtype bfloat16]

--kernels also profiles forward+backward steps of each (kernel_times.step_kernel_times, a row per launch in
launch order) and prints the two side by side: which kernel a difference comes from. --kernel-rounds profiles
them in that many alternating rounds and prints each kernel's median (one profile of A, then one of B, put
whatever drifts between the two on B: a kernel both ran alike moved by 1-3%).

--sustained S also runs each module's no_grad forward and its accumulating step (x requiring its gradient too)
back to back for S seconds, in --sustained-rounds alternating rounds: ms a call with the card's SM clock and power
(power_clocks.py). A step that runs for seconds runs at the card's power cap, where time follows energy, not the
profiled kernels' time at full clock.
"""
import argparse
import pathlib
import statistics
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from fusegen.tools.tune import _import, time_layer  # noqa: E402
from kernel_times import step_kernel_times  # noqa: E402  (beside this script)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", type=pathlib.Path)
    ap.add_argument("b", type=pathlib.Path)
    ap.add_argument("--init", required=True, help="ModelNew's constructor arguments, comma-separated integers")
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--inner", type=int, default=5)
    ap.add_argument("--kernels", action="store_true", help="also each step's kernels side by side (us)")
    ap.add_argument("--kernel-rounds", type=int, default=1, help="alternating profiles of A and B (medians)")
    ap.add_argument("--sustained", type=float, default=0.0, metavar="SECONDS")
    ap.add_argument("--sustained-rounds", type=int, default=3)
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"],
                    help="the modules' element type (the layer, its input and gradient cast to it)")
    args = ap.parse_args(argv)
    init = [int(v) for v in args.init.split(",")]
    dtype = getattr(torch, args.dtype)
    models = {}
    for label, path in (("A", args.a), ("B", args.b)):
        torch.manual_seed(0)
        models[label] = _import(path).ModelNew(*init).cuda().to(dtype)
    x = torch.randn(args.batch, init[0], device="cuda").to(dtype)
    g = torch.randn(models["A"](x).shape, device="cuda").to(dtype)  # (the output's shape: reductions drop dims)
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
    if args.kernels:
        xg = x.clone().requires_grad_()
        profiles = {label: [] for label in models}
        for _ in range(args.kernel_rounds):
            for label, model in models.items():
                profiles[label].append(step_kernel_times(model, xg, g, args.reps, by_launch=True))
        rows = {label: {name: statistics.median(p.get(name, (0.0, 0))[0] for p in runs)  # us a step
                        for name in dict.fromkeys(n for p in runs for n in p)}
                for label, runs in profiles.items()}
        print(f"{'kernel (a row per launch, launch order of A then B)':<90} {'A us':>8} {'B us':>8}"
              f"  (medians of {args.kernel_rounds} alternating profiles)")
        for name in list(dict.fromkeys(list(rows["A"]) + list(rows["B"]))):
            a, b = (rows[label].get(name, 0.0) for label in ("A", "B"))
            print(f"{name[:90]:<90} {a:8.1f} {b:8.1f}")
        print(f"{'total':<90} {sum(rows['A'].values()):8.1f} {sum(rows['B'].values()):8.1f}")
    if args.sustained:
        sustained(models, x, g, args)


def sustained(models, x, g, args):
    from power_clocks import sustained_rounds  # (beside this script)
    rows = sustained_rounds(models, x.clone().requires_grad_(), g, args.sustained, args.sustained_rounds)
    print(f"sustained: {args.sustained} s back to back a call, medians of {args.sustained_rounds} alternating rounds "
          "(ms a call, SM MHz, W)")
    for label in models:
        f, t = rows[label, "forward"], rows[label, "step"]
        print(f"{label}  forward {f[0]:.4f} ms {f[1]:5.0f} MHz {f[2]:4.0f} W   accumulating step {t[0]:.4f} ms "
              f"{t[1]:5.0f} MHz {t[2]:4.0f} W")
    print(f"B / A sustained: forward {rows['B', 'forward'][0] / rows['A', 'forward'][0]:.3f}, accumulating step "
          f"{rows['B', 'step'][0] / rows['A', 'step'][0]:.3f}")


if __name__ == "__main__":
    main()
