"""Per-kernel GPU time of a model file's fused module, forward and backward (torch.profiler): which kernel a change
should go after. Prints each kernel's microseconds per forward+backward step, its share, and the step's total.

    device: PYTHONPATH=. python3 benchmarks/kernel_times.py examples/gn_softmax_8192.py [--reps 10] [--precision P]
"""
import argparse
import collections
import pathlib
import sys
import tempfile

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

import fusegen  # noqa: E402
from fusegen.frontend import load_model_file, model_spec  # noqa: E402
from helpers import import_file, prebuild  # noqa: E402


def step_kernel_times(model, x, grad, reps, by_launch=False):
    """kernel name -> (microseconds per forward+backward step, launches per step) of model(x).backward(grad),
    after three warm-up steps (builds loaded, allocator primed). by_launch: a kernel launched several times a
    step gets a row per launch, in launch order ("name #1", "name #2": e.g. dx and dW on one GEMM kernel)."""
    for _ in range(3):
        model.zero_grad(set_to_none=True)
        model(x).backward(grad)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            model.zero_grad(set_to_none=True)
            model(x).backward(grad)
        torch.cuda.synchronize()
    rows = collections.defaultdict(lambda: [0.0, 0.0])
    if by_launch:
        kernels = sorted((e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
                         key=lambda e: e.time_range.start)
        per_step = collections.Counter(e.name for e in kernels)
        seen = collections.Counter()
        for e in kernels:
            n = per_step[e.name] // reps
            key = e.name if n <= 1 else f"{e.name} #{seen[e.name] % n + 1}"
            seen[e.name] += 1
            rows[key][0] += e.time_range.elapsed_us() / reps
            rows[key][1] += 1 / reps
        return {k: tuple(v) for k, v in rows.items()}
    return kernel_totals(prof.key_averages(), reps)


def kernel_totals(averages, reps):
    """kernel name -> (GPU microseconds, launches) per rep, from a profile's key_averages() over reps reps
    (device time under either of torch's names for it; the host-side sync entry and unnamed events left out)."""
    rows = collections.defaultdict(lambda: [0.0, 0.0])
    for e in averages:
        t = getattr(e, "device_time_total", None)
        t = getattr(e, "cuda_time_total", 0.0) if t is None else t
        if t > 0 and e.key not in ("", "cudaDeviceSynchronize"):
            rows[e.key][0] += t / reps
            rows[e.key][1] += e.count / reps
    return {k: tuple(v) for k, v in rows.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_file")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--out", default=tempfile.mkdtemp(prefix="fusegen-kt-"))
    ap.add_argument("--precision", default=None, help="fp32 layers: 3xtf32 (default), tf32 or fp32")
    args = ap.parse_args()
    f = pathlib.Path(args.model_file)
    plan = fusegen.plan(model_spec(f, precision=args.precision)[0], gpu=torch.cuda.get_device_name(), arch=torch.cuda.get_device_capability())
    path = fusegen.write_module(plan, args.out)
    prebuild([path])
    model_file, module = load_model_file(f), import_file(path, poison=False)  # (timed: no NaN fills)
    torch.manual_seed(0)
    model = module.ModelNew(*model_file.get_init_inputs()).cuda()
    x = model_file.get_inputs()[0].cuda()
    with torch.no_grad():
        grad = torch.randn_like(model(x))
    rows = step_kernel_times(model, x, grad, args.reps)
    times = {k: t for k, (t, _) in rows.items()}
    calls = {k: c for k, (_, c) in rows.items()}
    total = sum(times.values())
    print(f"{f.name}: {plan.summary}; {torch.cuda.get_device_name()}, "
          f"{args.reps} forward+backward steps")
    print(f"{'us/step':>9} {'share':>6} {'calls':>5}  kernel")
    for k, t in sorted(times.items(), key=lambda kv: -kv[1]):
        print(f"{t:9.1f} {100 * t / total:5.1f}% {calls[k]:5.1f}  {k[:110]}")
    print(f"{total:9.1f} 100.0%        all kernels")


if __name__ == "__main__":
    main()
