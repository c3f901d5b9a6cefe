"""What the 3xfp16 engine's promotion costs and buys: the headline (1024 x 8192 -> 8192) planned for sm_90 with fp32
totals every 64 of K (the planner's), every 128, and never (the tensor cores accumulate all of K), built side by
side; each timed (forward, forward+backward with fresh gradients) and compared with fp64 on two distributions.

    device: PYTHONPATH=. python benchmarks/promote_3xfp16.py [--reps 30]
"""
import argparse
import dataclasses
import pathlib
import sys
import tempfile

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

import fusegen  # noqa: E402
from fusegen.tools.accuracy import compare  # noqa: E402
from fusegen.tools.tune import _build_all, time_ms  # noqa: E402
from helpers import import_file, reference_namespace  # noqa: E402
from tf32_scaled import steps  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    spec = fusegen.Spec(8192, 8192, 512)
    base = fusegen.plan(spec, arch=torch.cuda.get_device_capability(), scaled_planes=True)
    out = pathlib.Path(tempfile.mkdtemp())
    plans = {k: dataclasses.replace(base, promote_every_k=k) for k in (64, 128, 0)}
    paths = {k: fusegen.write_module(p, out) for k, p in plans.items()}
    failed = _build_all(list(paths.values()), jobs=len(paths))
    assert not failed, failed
    Model = reference_namespace()["Model"]
    torch.manual_seed(0)
    x = torch.randn(1024, 8192, device="cuda")
    g = torch.randn(1024, 8192, device="cuda")
    print(f"{torch.cuda.get_device_name()}: 3xfp16 headline; promotion interval, ms, error vs fp64 (ours / fp32 ref)")
    print(f"{'promote':>8s} {'fwd':>7s} {'fresh':>7s}  accuracy")
    for k, path in paths.items():
        module = import_file(path, poison=False)
        model = module.ModelNew(8192, 8192, 512).cuda()
        fwd, _, fresh = steps(model, x, g)
        f, fr = time_ms(fwd, args.reps), time_ms(fresh, args.reps)
        cells = []
        for dist in ("normal", "rand"):
            report, problems = compare(module.ModelNew, Model, spec, 1024, seed=5, dist=dist)
            cells.append(f"{dist} {'ok' if not problems else 'MISSED'} out {report['out'][0]:.2g}/{report['out'][1]:.2g}"
                         f" dW {report['grad_fc.weight'][0]:.2g}/{report['grad_fc.weight'][1]:.2g}")
        print(f"{k or 'never':>8} {f:7.3f} {fr:7.3f}  {'; '.join(cells)}", flush=True)


if __name__ == "__main__":
    main()
