"""Where a forward's host time goes before and between its kernels: host microseconds per call of the
module's forward and of each piece of it alone (the GPU left to run behind), one synchronized call split into the
host's lead, the GPU's idle time and the kernels (step_gaps.sync_call_breakdown), and the profiled timeline of one
inference call (every host event and GPU activity, microseconds from the call's start). Several module files of
one headline-family layer (e.g. two commits' renders of it) run side by side, alternating, on one GPU.

    device: PYTHONPATH=. python3 benchmarks/host_lead.py generated/X.py [OLD.py ...] [--batch 1024] [--calls 200]
"""
import argparse
import pathlib
import statistics
import sys

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fusegen.tools.tune import _import, host_us, time_ms  # noqa: E402
from step_gaps import sync_call_breakdown  # noqa: E402  (beside this script)


def pieces(m, model, x):
    """(name, zero-argument call) for the module's forward and its parts, the headline layer's binding."""
    dev = x.device
    kernels = m._kernels(dev)
    params = tuple(p.detach() for p in model.parameters())  # fc.weight, fc.bias, gn.weight, gn.bias
    slope, eps = float(model.leaky_relu.negative_slope), float(model.gn.eps)
    stream = m._stream(dev)
    empty = x.new_empty(0)
    out, z, mean, rstd = (empty if t is None else t  # (inference's None: no such buffer)
                          for t in kernels.forward_call(x, *params, [], [slope], eps, False, False, False, stream)[:4])
    xg = x.clone().requires_grad_()

    def no_grad(fn):
        def run():
            with torch.no_grad():
                fn()
        return run

    one = x.new_zeros(1)
    return [
        ("forward, no_grad (inference)", no_grad(lambda: model(x))),
        ("forward, graph recorded (training)", lambda: model(xg)),
        ("  _check_input", lambda: m._check_input(x, params)),
        ("  _kernels + _stream", lambda: (m._kernels(dev), m._stream(dev))),
        ("  binding forward_call, inference", lambda: kernels.forward_call(x, *params, [], [slope], eps, False, False,
                                                                          False, stream)),
        ("  binding forward_call, training", lambda: kernels.forward_call(x, *params, [], [slope], eps, True, True,
                                                                         False, stream)),
        ("  binding forward, outputs given", lambda: kernels.forward(x, *params, [], [slope], out, z, mean, rstd,
                                                                     empty, eps, stream)),
        ("  torch.empty of the output's shape from Python", lambda: torch.empty(x.shape[0], m.HIDDEN_SIZE, device=dev)),
        ("  torch.empty(0) from Python", lambda: torch.empty(0, device=dev)),
        ("  one small torch kernel (x.add_(0) on 1 element)", lambda: one.add_(0)),
    ]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="+", type=pathlib.Path)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--single", type=int, default=200, help="single synchronized calls a module, interleaved")
    args = ap.parse_args(argv)
    labels = [f"{chr(65 + i)}" for i in range(len(args.modules))]
    mods, models = {}, {}
    for label, path in zip(labels, args.modules):
        mods[label] = _import(path)
        torch.manual_seed(0)
        sizes = (mods[label].INPUT_SIZE, mods[label].HIDDEN_SIZE, mods[label].NUM_GROUPS)
        models[label] = mods[label].ModelNew(*sizes).cuda()
        print(f"{label}: {path}", flush=True)
    x = torch.randn(args.batch, sizes[0], device="cuda")
    rows = {label: pieces(mods[label], models[label], x) for label in labels}
    host = {label: {name: [] for name, _ in rows[label]} for label in labels}
    single = {label: [] for label in labels}
    split = {label: [] for label in labels}
    for _ in range(args.rounds):  # alternating, so that the host's drift falls on every module alike
        for label in labels:
            for name, fn in rows[label]:
                host[label][name].append(host_us(fn, args.calls, warmup=10))
            fwd = rows[label][0][1]
            single[label].append(time_ms(fwd, 30) * 1e3)
            split[label].append(sync_call_breakdown(fwd))
    # single calls interleaved module by module, and back-to-back ones (5 a sample: the GPU kept busy)
    alone = {label: [] for label in labels}
    busy = {label: [] for label in labels}
    for _ in range(args.single):
        for label in labels:
            alone[label].append(time_ms(rows[label][0][1], 1, warmup=1) * 1e3)
    for _ in range(args.rounds):
        for label in labels:
            busy[label].append(time_ms(rows[label][0][1], 10, inner=5) * 1e3)
    for label in labels:
        print(f"\n{label} ({args.modules[labels.index(label)].name}): one profiled inference call (us: start, "
              "duration after the host's start; every host event)")
        sync_call_breakdown(rows[label][0][1], reps=3, show=True, host_over=0.0)
    print(f"\n{torch.cuda.get_device_name()}, batch {args.batch}: host us per call (medians of {args.rounds} rounds "
          f"of {args.calls} calls), then one synchronized inference call (us)")
    print(f"{'':56}" + "".join(f"{label:>10}" for label in labels))
    for name, _ in rows[labels[0]]:
        print(f"{name:56}" + "".join(f"{statistics.median(host[label][name]):10.1f}" for label in labels))
    print(f"{'one call timed between two events':56}" + "".join(
        f"{statistics.median(single[label]):10.1f}" for label in labels))
    for name, d in ((f"one call, {args.single} interleaved: median", alone), ("  10th percentile", alone),
                    ("  90th percentile", alone), ("back to back (5 calls a sample): median", busy)):
        q = 0.1 if "10th" in name else 0.9 if "90th" in name else 0.5
        print(f"{name:56}" + "".join(f"{sorted(d[label])[int(q * (len(d[label]) - 1))]:10.1f}" for label in labels))
    for j, part in enumerate(("  host lead (profiled)", "  GPU idle (profiled)", "  kernels (profiled)")):
        print(f"{part:56}" + "".join(f"{statistics.median(s[j] for s in split[label]):10.1f}" for label in labels))


if __name__ == "__main__":
    main()
