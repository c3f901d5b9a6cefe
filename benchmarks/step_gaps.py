"""Where a forward+backward step's time goes besides our kernels: the same step timed three ways, for fusegen and
its peers in one run.

    device: PYTHONPATH=. python3 benchmarks/step_gaps.py [--dtypes bfloat16,float16] [--rounds 3]
            [--compile max-autotune-no-cudagraphs]

- "accumulating": model(x).backward(g) back to back with the gradients kept (dtype_bench's step): from the second
  step on, autograd adds each new gradient into .grad (an extra read-read-write pass over W's gradient: 400 MB in
  bf16 at the headline) and into x.grad;
- "fresh grads": the gradients set to None before each step (what a training loop's zero_grad(set_to_none=True)
  does, and what x, an activation in a real model, never has): autograd hands over our gradients as they are;
- the GPU's kernel time of a fresh-grads step (torch.profiler), so step minus kernels is the idle GPU;
- with --breakdown, where one synchronized call's time goes (what bench.py and tf32_scaled.py time: one call
  between two events): the host's lead before the first kernel starts, the GPU's idle time between kernels, the
  kernels' own time, each a median over the calls (torch.profiler, CPU and GPU on one clock).

--dtypes takes bfloat16, float16, float32 (its default precision) or float32:P for a float32 precision P (3xtf32,
tf32, fp32).
"""
import argparse
import pathlib
import sys
import tempfile

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import fusegen  # noqa: E402
from fusegen.codegen import write_module  # noqa: E402
from fusegen.tools.accuracy import ReferenceLayer  # noqa: E402
from fusegen.tools.tune import _build_all, _import, host_us, time_ms  # noqa: E402


def gpu_events(step, reps):
    """The GPU activities (kernels, memsets, copies) of `reps` calls of step, back to back after a warm-up, in
    the order they started."""
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            step()
        torch.cuda.synchronize()
    return sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                  key=lambda e: e.time_range.start)


def kernel_us(step, reps=5):
    """GPU microseconds of kernels (and memsets / copies) per call of step."""
    return sum(e.time_range.elapsed_us() for e in gpu_events(step, reps)) / reps


def timeline(step, steps=3):
    """Each GPU activity of `steps` calls of step: its start relative to the first, its duration and the idle
    time before it (us), so that a gap can be put on the kernel it precedes."""
    events = gpu_events(step, steps)
    t0 = events[0].time_range.start if events else 0
    lines, end = [], None
    for e in events:
        r = e.time_range
        gap = 0.0 if end is None else max(0.0, r.start - end)
        lines.append(f"    {r.start - t0:9.1f} {r.elapsed_us():8.1f} {gap:7.1f}  {e.name[:90]}")
        end = r.end if end is None else max(end, r.end)
    return lines


def sync_call_breakdown(call, reps=15, show=False, host_over=20.0):
    """(host lead, GPU idle between kernels, kernel time) in microseconds, medians over `reps` calls of `call`,
    each alone between two synchronizations: lead is from the call's start on the host to its first GPU activity,
    idle the gaps between its activities, kernels the time some activity runs. show: print the last call's GPU
    activities and its host events over host_over us (offsets from the call's start on the host)."""
    marker = "fusegen_timed_call"
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(reps):
            torch.cuda.synchronize()
            with torch.profiler.record_function(marker):
                call()
            torch.cuda.synchronize()
    events = prof.events()
    cuda = torch.autograd.DeviceType.CUDA
    # the marker also has a GPU-side twin spanning the call's kernels (a user annotation): not an activity
    starts = [e.time_range.start for e in events if e.name == marker and e.device_type != cuda]
    gpu = [e for e in events if e.device_type == cuda and e.name != marker]
    if show and starts:
        t0 = max(starts)
        rows = [(e.time_range.start - t0, e.time_range.elapsed_us(), "GPU " + e.name[:80]) for e in gpu
                if e.time_range.start >= t0]
        rows += [(e.time_range.start - t0, e.time_range.elapsed_us(), "host " + e.name[:80]) for e in events
                 if e.device_type != cuda and e.time_range.start >= t0 and e.time_range.elapsed_us() > host_over
                 and e.name != marker]
        for at, us, name in sorted(rows):
            print(f"    {at:9.1f} {us:9.1f}  {name}")
    return split_calls(starts, [(e.time_range.start, e.time_range.end) for e in gpu])


def split_calls(starts, gpu):
    """sync_call_breakdown's arithmetic: the calls' host start times and the GPU activities' (start, end), one
    clock -> medians of (lead, idle, busy) over the calls that ran something; an activity belongs to the last call
    that started before it."""
    starts, gpu = sorted(starts), sorted(gpu)
    rows = []
    for i, t0 in enumerate(starts):
        t1 = starts[i + 1] if i + 1 < len(starts) else float("inf")
        mine = [(a, b) for a, b in gpu if t0 <= a < t1]
        if not mine:
            continue
        busy, end = 0.0, mine[0][0]
        for a, b in mine:  # the union of the intervals
            busy += max(0.0, b - max(a, end))
            end = max(end, b)
        rows.append((mine[0][0] - t0, end - mine[0][0] - busy, busy))
    if not rows:
        return float("nan"), float("nan"), float("nan")
    return tuple(sorted(r[j] for r in rows)[len(rows) // 2] for j in range(3))


def steps(model, x, g):
    """The three calls timed: a no_grad forward, a step whose gradients accumulate, a step with fresh gradients."""
    def forward():
        with torch.no_grad():
            model(x)

    def accumulating():
        model(x).backward(g)

    def fresh():
        model.zero_grad(set_to_none=True)
        x.grad = None
        model(x).backward(g)
    return forward, accumulating, fresh


def parse_mode(word):
    """'bfloat16' or 'float32:tf32' -> (label, Spec keyword arguments)."""
    dtype, _, precision = word.partition(":")
    return word, dict(dtype=dtype, **({"precision": precision} if precision else {}))


def headline_layers(modes, k, n, groups, m, compile_mode=""):
    """[(mode, layer name, model, x, g)] for each mode ({label: Spec keyword arguments}): fusegen's module (rendered
    and built for this GPU), eager's reference and, with compile_mode, torch.compile's, all with the same weights,
    on one x (requiring its gradient) and one output gradient g in the mode's dtype. Every mode's layers alive at
    once, so that timing rounds can alternate them."""
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="fusegen-layers-"))
    paths = {d: write_module(fusegen.plan(fusegen.Spec(k, n, groups, **kw), gpu=torch.cuda.get_device_name(),
                                          arch=torch.cuda.get_device_capability(), batch=m), workdir)
             for d, kw in modes.items()}
    failed = _build_all(list(paths.values()), len(paths))
    if failed:
        raise SystemExit(f"builds failed: {failed}")
    layers = []
    for d, kw in modes.items():
        dt = getattr(torch, kw["dtype"])
        torch.manual_seed(0)
        models = {"fusegen": _import(paths[d]).ModelNew(k, n, groups).cuda().to(dt)}
        torch.manual_seed(0)
        models["eager"] = ReferenceLayer(k, n, groups).cuda().to(dt)
        if compile_mode:
            models[f"compile {compile_mode}"] = torch.compile(ReferenceLayer(k, n, groups).cuda().to(dt),
                                                              mode=compile_mode)
        gen = torch.Generator(device="cuda").manual_seed(1)
        x = torch.randn(m, k, device="cuda", generator=gen).to(dt).requires_grad_()
        g = torch.randn(m, n, device="cuda", generator=gen).to(dt)
        layers += [(d, name, model, x, g) for name, model in models.items()]
    return layers


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtypes", default="bfloat16,float16")
    ap.add_argument("--init", default="8192,8192,512", help="input, hidden, groups")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--inner", type=int, default=5)
    ap.add_argument("--timeline", action="store_true",
                    help="also print each GPU activity of three fresh-grads steps (start, duration, idle before it) "
                         "and the host's time to issue a step")
    ap.add_argument("--breakdown", action="store_true",
                    help="also split one synchronized call (forward; fresh-grads step) into host lead, GPU idle "
                         "between kernels and kernel time")
    ap.add_argument("--rounds", type=int, default=1,
                    help="time every layer this many times in turn, reporting medians (fp16 timed after bf16 in one "
                         "round runs on a card that has been busy longer)")
    ap.add_argument("--compile", default="", help="also torch.compile in this mode (e.g. max-autotune-no-cudagraphs)")
    args = ap.parse_args()
    k, n, groups = (int(v) for v in args.init.split(","))
    m = args.batch
    gpu = torch.cuda.get_device_name()
    modes = dict(parse_mode(w) for w in args.dtypes.split(","))
    layers = headline_layers(modes, k, n, groups, m, args.compile)
    # each round times every layer in turn (the card's clocks drift under sustained load: with one round the layers
    # timed last run on the warmest card); the figures are medians over the rounds
    timed = {(d, name): [] for d, name, *_ in layers}
    for _ in range(args.rounds):
        for d, name, model, x, g in layers:
            forward, accumulating, fresh = steps(model, x, g)
            timed[d, name].append((time_ms(forward, args.reps, inner=args.inner),
                                   time_ms(accumulating, args.reps, inner=args.inner),
                                   time_ms(fresh, args.reps, inner=args.inner)))
    rows, splits = [], []
    for d, name, model, x, g in layers:
        forward, accumulating, fresh = steps(model, x, g)
        fwd, acc, fr = (sorted(t[j] for t in timed[d, name])[len(timed[d, name]) // 2] for j in range(3))
        busy = kernel_us(fresh) / 1e3
        rows.append((d, name, fwd, acc, fr, busy))
        if args.breakdown:
            show = args.timeline and name == "fusegen"
            for call, fn in (("forward", forward), ("fresh step", fresh), ("acc. step", accumulating)):
                if show:
                    print(f"{d} {name}: one synchronized {call} (us: start, duration after the host's start)")
                splits.append((d, name, call, time_ms(fn, args.reps)) + sync_call_breakdown(fn, show=show))
        if args.timeline:
            print(f"{d} {name}: host issues a fresh-grads step in {host_us(fresh):.1f} us, a forward in "
                  f"{host_us(forward):.1f} us; three fresh steps (us: start, duration, idle before):")
            print("\n".join(timeline(fresh)), flush=True)
        print(f"{d} {name}: forward {fwd:.3f} ms, fwd+bwd accumulating {acc:.3f}, fresh grads {fr:.3f} "
              f"(kernels {busy:.3f})", flush=True)
    print(f"\n{gpu}, batch {m}, {k} -> {n}, {groups} groups; medians of {args.reps} x {args.inner} calls (ms)"
          + (f", medians over {args.rounds} rounds that alternate the layers" if args.rounds > 1 else ""))
    print(f"{'dtype':9} {'layer':38} {'forward':>8} {'fwd+bwd acc.':>13} {'fwd+bwd fresh':>14} {'kernels':>8}")
    for d, name, fwd, acc, fr, busy in rows:
        print(f"{d:9} {name:38} {fwd:8.3f} {acc:13.3f} {fr:14.3f} {busy:8.3f}")
    if splits:
        print("\none synchronized call (us, medians): 'timed' between two events, one call each (as bench.py "
              "times it); the rest from 15 profiled calls")
        print(f"{'mode':14} {'layer':30} {'call':10} {'timed':>8} {'host lead':>10} {'GPU idle':>9} {'kernels':>8}")
        for d, name, call, timed, lead, idle, busy in splits:
            print(f"{d:14} {name:30} {call:10} {timed * 1e3:8.1f} {lead:10.1f} {idle:9.1f} {busy:8.1f}")


if __name__ == "__main__":
    main()
