"""The card's SM clock, power and throttle reasons while a step runs back to back for seconds, against the same
step's kernels profiled from an idle card: does a sustained step run slower because the card clocks down, and
under which limit (perf notes v0.43-v0.46 inferred it from step minus kernels, never measured it).

    device: PYTHONPATH=. python3 benchmarks/power_clocks.py [--dtypes bfloat16,float16] [--seconds 4]

For each layer (fusegen's headline module and eager, per dtype) and each call (the accumulating step, the no_grad
forward): the call's kernels profiled right after an idle second (5 calls), then the call back to back for
--seconds while nvidia-smi samples the card every 50 ms, then the kernels profiled again while still warm. Prints
ms a call, the medians of the samples (SM MHz, W, degrees C) and the throttle reasons seen in them.
"""
import argparse
import pathlib
import subprocess
import sys
import time

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from step_gaps import gpu_events, headline_layers, steps  # noqa: E402

FIELDS = "clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active"
# clocks_event_reasons bits (nvidia-smi --help-query-gpu)
REASONS = {0x1: "idle", 0x2: "app clocks", 0x4: "sw power cap", 0x8: "hw slowdown", 0x20: "sw thermal",
           0x40: "hw thermal", 0x80: "hw power brake", 0x100: "display clocks"}


def median(values):
    values = sorted(values)
    return values[len(values) // 2] if values else float("nan")


def sampled(call, seconds):
    """(ms a call, [(MHz, W, C, reasons)]) over `seconds` of back-to-back calls, nvidia-smi sampling meanwhile."""
    smi = subprocess.Popen(["nvidia-smi", f"--query-gpu={FIELDS}", "--format=csv,noheader,nounits", "-lms", "50"],
                           stdout=subprocess.PIPE, text=True)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t0, calls = time.time(), 0
    start.record()
    while time.time() - t0 < seconds:
        for _ in range(5):
            call()
        calls += 5
        torch.cuda.synchronize()  # (the host may not run seconds ahead of the card)
    end.record()
    torch.cuda.synchronize()
    smi.terminate()
    out, _ = smi.communicate()
    rows = []
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        try:
            rows.append((float(parts[0]), float(parts[1]), float(parts[2]), int(parts[3], 16)))
        except (ValueError, IndexError):
            continue
    return start.elapsed_time(end) / calls, rows[len(rows) // 5:]  # (the first fifth: still warming)


def sustained_rounds(models, x, g, seconds, rounds):
    """{(label, "forward" or "step"): (ms a call, SM MHz, W)}: each model's no_grad forward and accumulating step
    (step_gaps.steps on x, g) back to back for `seconds`, in `rounds` rounds that alternate the models; medians
    (ab_modules.py and epilogue_variants.py --sustained)."""
    seen = {(label, what): [] for label in models for what in ("forward", "step")}
    for _ in range(rounds):
        for label, model in models.items():
            forward, accumulating, _ = steps(model, x, g)
            for what, call in (("forward", forward), ("step", accumulating)):
                ms, samples = sampled(call, seconds)
                seen[label, what].append((ms, median([s[0] for s in samples]), median([s[1] for s in samples])))
    return {key: tuple(median([r[j] for r in runs]) for j in range(3)) for key, runs in seen.items()}


def kernel_ms(call, reps=5):
    return sum(e.time_range.elapsed_us() for e in gpu_events(call, reps)) / reps / 1000


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtypes", default="bfloat16,float16")
    ap.add_argument("--init", default="8192,8192,512", help="input, hidden, groups")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--seconds", type=float, default=4.0)
    args = ap.parse_args()
    k, n, groups = (int(v) for v in args.init.split(","))
    m = args.batch
    gpu = torch.cuda.get_device_name()
    print(subprocess.run(["nvidia-smi", "--query-gpu=name,power.limit,power.max_limit,clocks.max.sm,clocks.sm",
                          "--format=csv"], capture_output=True, text=True).stdout)
    modes = {d: dict(dtype=d) for d in args.dtypes.split(",")}
    rows = []
    for d, name, model, x, g in headline_layers(modes, k, n, groups, m):
        forward, accumulating, _ = steps(model, x, g)
        for what, call in (("accumulating step", accumulating), ("forward", forward)):
            time.sleep(1.0)  # an idle card first, as a profile after a synchronization sees it
            cold = kernel_ms(call)
            ms, samples = sampled(call, args.seconds)
            warm = kernel_ms(call)
            seen = 0
            for s in samples:
                seen |= s[3]
            reasons = ", ".join(v for bit, v in REASONS.items() if seen & bit) or "none"
            share = {v: sum(1 for s in samples if s[3] & bit) / max(1, len(samples))
                     for bit, v in REASONS.items() if seen & bit}
            rows.append((d, name, what, ms, cold, warm, median([s[0] for s in samples]),
                         median([s[1] for s in samples]), median([s[2] for s in samples]), reasons, share))
            print(rows[-1], flush=True)
    print(f"\n{gpu}, batch {m}, {k} -> {n}, {groups} groups; sustained: {args.seconds} s back to back "
          "(nvidia-smi every 50 ms, the first fifth dropped); kernels: 5 calls profiled after 1 s idle (cold) and "
          "right after the sustained run (warm)")
    print(f"{'dtype':9} {'layer':8} {'call':18} {'ms a call':>9} {'kernels cold':>12} {'warm':>6} {'MHz':>6} "
          f"{'W':>6} {'C':>4}  throttle reasons (share of samples)")
    for d, name, what, ms, cold, warm, mhz, w, c, reasons, share in rows:
        shares = ", ".join(f"{v} {f:.0%}" for v, f in share.items()) or "none"
        print(f"{d:9} {name:8} {what:18} {ms:9.3f} {cold:12.3f} {warm:6.3f} {mhz:6.0f} {w:6.0f} {c:4.0f}  {shares}")


if __name__ == "__main__":
    main()
