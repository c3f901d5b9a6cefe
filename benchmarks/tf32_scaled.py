"""The tf32 or 3xtf32 mode at the headline (1024 x 8192 -> 8192) on the GPU in hand: accuracy against fp64 on every
input distribution (fusegen.tools.accuracy.compare: TF32's documented tolerance, or the fp32 reference's own error)
and speed against eager and torch.compile, with TF32 on for tf32 (what `torch.backends.cuda.matmul.allow_tf32 =
True` gives a user), off for 3xtf32. On sm_90 both plans run the 16-bit wgmma engine over scaled fp16 planes, one
an operand for tf32 (issue 17 part 4: target forward <= 0.30 ms, forward+backward <= 1.0 on the H200), two for
3xtf32 (3xfp16, part 1: <= 0.70 / 2.2), which is also timed beside the 3xTF32 engine it replaces. Forward+backward
as `model(x).backward(g)` back to back (the gradients accumulating), and with them set to None before each step.

    PYTHONPATH=. python benchmarks/tf32_scaled.py [--precision tf32|3xtf32] [--batch 1024] [--reps 30]
        [--no-compile] [--out DIR]
"""
import argparse
import pathlib
import sys
import tempfile

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

import fusegen  # noqa: E402
from fusegen.tools.accuracy import DISTRIBUTIONS, compare  # noqa: E402
from fusegen.tools.tune import time_ms  # noqa: E402
from helpers import import_file, reference_namespace  # noqa: E402

GEMM_FLOP = 2 * 1024 * 8192 * 8192


def steps(model, x, g):
    """(forward, forward+backward accumulating, forward+backward from fresh gradients) calls."""
    xg = x.clone().requires_grad_()

    def fwd():
        with torch.no_grad():
            model(x)

    def fresh():
        for p in model.parameters():
            p.grad = None
        xg.grad = None
        model(xg).backward(g)

    return fwd, lambda: model(xg).backward(g), fresh


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--precision", choices=("tf32", "3xtf32"), default="tf32")
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--no-compile", action="store_true")
    parser.add_argument("--out", default=None, help="directory for the generated module (default: a temporary one)")
    args = parser.parse_args()
    gpu = torch.cuda.get_device_name()
    spec = fusegen.Spec(8192, 8192, 512, precision=args.precision)
    arch = torch.cuda.get_device_capability()
    out = pathlib.Path(args.out or tempfile.mkdtemp())
    plans = {f"fusegen {args.precision}": fusegen.plan(spec, gpu=gpu, arch=arch, scaled_planes=True)}
    if args.precision == "3xtf32":  # the 3xTF32 engine beside it
        plans["fusegen 3xtf32 (TF32 engine)"] = fusegen.plan(spec, gpu=gpu, arch=arch, scaled_planes=False)
    modules = {}
    for name, plan in plans.items():
        modules[name] = import_file(fusegen.write_module(plan, out), poison=False)  # (timed: no NaN fills)
        print(f"{gpu}: {name}: {plan.summary}", flush=True)
    Model = reference_namespace()["Model"]

    for name, module in modules.items():
        print(f"\n{name}: accuracy (normwise vs fp64: ours / fp32 reference), batch", args.batch)
        for dist in DISTRIBUTIONS:
            report, problems = compare(module.ModelNew, Model, spec, args.batch, seed=11, dist=dist)
            cells = ", ".join(f"{k} {v[0]:.2g}/{v[1]:.2g}" for k, v in report.items() if isinstance(v, tuple)
                              and k != "kink_flips")
            print(f"  {dist:12s} {'ok' if not problems else 'MISSED: ' + '; '.join(problems)}  {cells}", flush=True)

    torch.manual_seed(0)
    x = torch.randn(args.batch, 8192, device="cuda")
    g = torch.randn(args.batch, 8192, device="cuda")
    rows = [(name, module.ModelNew(8192, 8192, 512).cuda(), False) for name, module in modules.items()]
    tf32 = args.precision == "tf32"  # the peers with TF32 on for tf32, in fp32 for 3xtf32
    words = ", TF32 on" if tf32 else ", fp32"
    torch.manual_seed(0)
    rows.append(("eager" + words, Model(8192, 8192, 512).cuda(), tf32))
    if not args.no_compile:
        rows.append(("torch.compile" + words, torch.compile(Model(8192, 8192, 512).cuda()), tf32))
    print(f"\n{'':30s} {'fwd ms':>8s} {'fwd+bwd':>8s} {'fresh':>8s}  fwd TFLOP/s (one GEMM)")
    for name, model, tf32 in rows:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        fwd, acc, fresh = steps(model, x, g)
        f, a, fr = (time_ms(c, args.reps) for c in (fwd, acc, fresh))
        print(f"{name:30s} {f:8.3f} {a:8.3f} {fr:8.3f}  {GEMM_FLOP * args.batch / 1024 / f / 1e9:8.1f}", flush=True)
    torch.backends.cuda.matmul.allow_tf32 = False


if __name__ == "__main__":
    main()
