"""The host's time to issue one forward+backward step of the headline layer, piece by piece, with the GPU held busy
(torch.cuda._sleep queued first) so that no call waits on it: what a step costs the host when the GPU is not what
it waits for. Session 42's timeline had the host at 600-725 us a 16-bit step against ~0.68 ms of kernels, and the
GPU idle ~200 us in the first step after a synchronization while the backward was being issued.

    device: PYTHONPATH=. python3 benchmarks/host_step.py [--dtypes bfloat16,float16] [--calls 30] [--profile]

Rows (host us a call, median of --samples runs of --calls calls): the forward with its graph recorded; the
backward alone (retain_graph); the fresh-grads and accumulating steps; our binding's backward_call alone; an
autograd node that does nothing on the same inputs (the engine's own cost); eager PyTorch's step. --profile also
prints the host events of one fresh step over 5 us (torch.profiler, which inflates them).
"""
import argparse
import pathlib
import statistics
import sys
import tempfile
import time

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import fusegen  # noqa: E402
from fusegen.codegen import write_module  # noqa: E402
from fusegen.tools.accuracy import ReferenceLayer  # noqa: E402
from fusegen.tools.tune import _build_all, _import  # noqa: E402


def busy_host_us(fn, calls, samples, sleep_cycles=400_000_000):
    """Median host us a call of fn over `samples` runs of `calls` calls, each run behind a GPU sleep long enough
    that the queue never drains (and so never blocks the host)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    runs = []
    for _ in range(samples):
        torch.cuda._sleep(sleep_cycles)  # ~0.2 s at ~2 GHz
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        runs.append((time.perf_counter() - start) / calls * 1e6)
        torch.cuda.synchronize()
    return statistics.median(runs)


class _Nothing(torch.autograd.Function):
    """An autograd node over the layer's inputs that launches nothing: the engine's own cost a step."""

    @staticmethod
    def forward(ctx, x, *params):
        return x.new_empty(0)

    @staticmethod
    def backward(ctx, g):
        return (None,) * 5


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtypes", default="bfloat16,float16")
    ap.add_argument("--init", default="8192,8192,512", help="input, hidden, groups")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    k, n, groups = (int(v) for v in args.init.split(","))
    m = args.batch
    gpu = torch.cuda.get_device_name()
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="fusegen-host-"))
    paths = {d: write_module(fusegen.plan(fusegen.Spec(k, n, groups, dtype=d), gpu=gpu,
                                          arch=torch.cuda.get_device_capability(), batch=m), workdir)
             for d in args.dtypes.split(",")}
    failed = _build_all(list(paths.values()), len(paths))
    if failed:
        raise SystemExit(f"builds failed: {failed}")
    table = []
    for d, path in paths.items():
        dt = getattr(torch, d)
        mod = _import(path)
        torch.manual_seed(0)
        model = mod.ModelNew(k, n, groups).cuda().to(dt)
        torch.manual_seed(0)
        eager = ReferenceLayer(k, n, groups).cuda().to(dt)
        x = torch.randn(m, k, device="cuda").to(dt).requires_grad_()
        g = torch.randn(m, n, device="cuda").to(dt)
        params = [p for p in model.parameters()]

        def fresh(layer):
            def step():
                layer.zero_grad(set_to_none=True)
                x.grad = None
                layer(x).backward(g)
            return step

        kept = model(x)
        saved = kept.grad_fn.saved_tensors  # x, weight, gamma, beta, z, mean, rstd, x_planes

        def nothing_step():
            out = _Nothing.apply(x, *params)
            out.backward(out.new_empty(0))

        rows = [
            ("fusegen forward, graph recorded", lambda: model(x)),
            ("fusegen backward alone (retain_graph)", lambda: kept.backward(g, retain_graph=True)),
            ("fusegen fresh-grads step", fresh(model)),
            ("fusegen accumulating step", lambda: model(x).backward(g)),
            ("  the module's _backward_impl alone", lambda: mod._backward_impl(g, *saved[:7], 0.01, True, True,
                                                                               *saved[7:])),
            ("  an autograd node launching nothing", nothing_step),
            ("eager fresh-grads step", fresh(eager)),
        ]
        for what, fn in rows:
            us = busy_host_us(fn, args.calls, args.samples)
            table.append((d, what, us))
            print(f"{d:9} {what:42} {us:8.1f}", flush=True)
        if args.profile:
            step = fresh(model)
            for _ in range(3):
                step()
            torch.cuda.synchronize()
            torch.cuda._sleep(400_000_000)
            acts = [torch.profiler.ProfilerActivity.CPU]
            with torch.profiler.profile(activities=acts) as prof:
                step()
            events = sorted(prof.events(), key=lambda e: e.time_range.start)
            t0 = events[0].time_range.start if events else 0
            print(f"{d}: one fresh step's host events over 5 us (start, duration us, thread)")
            for e in events:
                if e.time_range.elapsed_us() > 5:
                    print(f"    {e.time_range.start - t0:9.1f} {e.time_range.elapsed_us():9.1f} {e.thread:>8}  "
                          f"{e.name[:90]}")
            torch.cuda.synchronize()
    print(f"\n{gpu}: host us a call with the GPU held busy (medians of {args.samples} x {args.calls} calls)")
    for d, what, us in table:
        print(f"{d:9} {what:42} {us:8.1f}")


if __name__ == "__main__":
    main()
