"""The Python of a generated module's forward on its own, no GPU needed: ModelNew(x) under no_grad with the binding
stubbed out (it returns ready tensors) and the CUDA-only input check skipped, against an nn.Module whose forward
returns its input (the call's own floor). CPU microseconds per call, the minimum of --repeats runs; for comparing
versions of the module template on one machine (its absolute figures are this machine's).

    PYTHONPATH=. python benchmarks/forward_python.py [--size 1024] [--batch 16] [--calls 20000] [--repeats 7]
"""
import argparse
import pathlib
import sys
import tempfile
import time

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import fusegen  # noqa: E402
from fusegen.codegen import write_module  # noqa: E402
from fusegen.tools.tune import _import  # noqa: E402


class _Stub:
    """The binding's forward_call, returning tensors made once."""

    def __init__(self, outs):
        self.outs = outs

    def forward_call(self, *args):
        return self.outs


class _Identity(torch.nn.Module):
    def forward(self, t):
        return t


def _us(fn, calls):
    with torch.no_grad():
        for _ in range(200):
            fn()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
    return (time.perf_counter() - start) / calls * 1e6


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args(argv)
    n = args.size
    m = _import(write_module(fusegen.plan(fusegen.Spec(n, n, n // 32)), pathlib.Path(tempfile.mkdtemp())))
    model, identity = m.ModelNew(n, n, n // 32), _Identity()
    x = torch.randn(args.batch, n)
    f64 = dict(dtype=torch.float64)
    stub = _Stub([torch.empty(args.batch, n), torch.empty(0), torch.empty(args.batch, n // 32, **f64),
                  torch.empty(args.batch, n // 32, **f64)])
    m._kernels, m._stream = (lambda device: stub), (lambda device: 0)
    m._check_input = lambda x, params: None  # (it refuses CPU tensors; timed on the GPU by host_overhead.py)
    ours = min(_us(lambda: model(x), args.calls) for _ in range(args.repeats))
    floor = min(_us(lambda: identity(x), args.calls) for _ in range(args.repeats))
    print(f"CPU us per call, size {n}, batch {args.batch}: ModelNew forward (kernels stubbed) {ours:.2f}, "
          f"an identity nn.Module {floor:.2f}, the module's own Python {ours - floor:.2f}")


if __name__ == "__main__":
    main()
