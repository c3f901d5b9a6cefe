"""One layer's module in one dtype, stepped forward+backward a few times: a program for a profiler to watch (its
kernels by name, after the warm-up steps), e.g. Nsight Compute on the forward and backward GEMMs.

    device: PYTHONPATH=. ncu --clock-control none -k regex:"wgmma|one_pass" --launch-skip 4 --launch-count 4 \\
            python3 benchmarks/profile_step.py --dtype bfloat16 [--init 8192,8192,512] [--batch 1024] [--precision tf32] [--steps 3]
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
from fusegen.tools.tune import _import  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtype", default="bfloat16", choices=["float32", "bfloat16", "float16"])
    ap.add_argument("--init", default="8192,8192,512", help="input, hidden, groups")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--precision", default="3xtf32", help="float32 layers: 3xtf32 (the default), tf32 or fp32")
    ap.add_argument("--steps", type=int, default=3, help="forward+backward steps after one warm-up step")
    args = ap.parse_args()
    input_size, hidden, groups = (int(v) for v in args.init.split(","))
    spec = fusegen.Spec(input_size, hidden, groups, dtype=args.dtype,
                        **({"precision": args.precision} if args.dtype == "float32" else {}))
    p = fusegen.plan(spec, gpu=torch.cuda.get_device_name(), arch=torch.cuda.get_device_capability(),
                     batch=args.batch)
    print(f"{p.module_name}: {p.summary}", flush=True)
    dtype = getattr(torch, args.dtype)
    model = _import(write_module(p, pathlib.Path(tempfile.mkdtemp(prefix="fusegen-profile-")))).ModelNew(
        input_size, hidden, groups).cuda().to(dtype)
    x = torch.randn(args.batch, input_size, device="cuda", dtype=dtype, requires_grad=True)
    g = torch.randn(args.batch, hidden, device="cuda", dtype=x.dtype)
    for _ in range(1 + args.steps):
        model(x).backward(g)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
