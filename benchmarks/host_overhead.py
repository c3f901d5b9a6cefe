"""Where the host time of one fusegen call goes: each step of the generated module's forward and backward timed
alone (CPU microseconds per call, the GPU left to run behind), against PyTorch eager's whole call.

    PYTHONPATH=. python benchmarks/host_overhead.py [--size 1024] [--batch 16] [--calls 2000]
"""
import argparse
import pathlib
import sys

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fusegen.tools.accuracy import ReferenceLayer  # noqa: E402
from sweep import build_modules  # noqa: E402  (beside this script)
from fusegen.tools.tune import host_us  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args(argv)
    size, batch, calls = args.size, args.batch, args.calls
    m = build_modules([size], sys.stderr)[size]
    dev = torch.device("cuda")
    model = m.ModelNew(size, size, size // 32).cuda()
    ref = ReferenceLayer(size, size, size // 32).cuda()
    x = torch.randn(batch, size, device="cuda")
    xg = x.clone().requires_grad_()
    g = torch.randn(batch, size, device="cuda")
    kernels = m._kernels(dev)
    params = (model.fc.weight, model.fc.bias, model.gn.weight, model.gn.bias)  # in the module's PARAM_NAMES order
    w, b, gam, bet = (p.detach() for p in params)
    slope = 0.01  # the headline chain's one stage constant (LeakyReLU's slope)
    out, z, mean, rstd = m._forward_impl(x, w, b, gam, bet, slope, 1e-5, True)[:4]
    empty = x.new_empty(0)
    one = x.new_zeros(1)
    stream = m._stream(dev)
    dz, dx, dw = torch.empty_like(z), torch.empty_like(x), torch.empty_like(w)
    gb = [torch.empty(size, device="cuda") for _ in range(3)]

    # autograd's own cost for a graph of our shape: one Function node over x and the four parameters, whose
    # backward computes nothing (ready-made gradients), then the engine accumulates them into .grad as ours
    leaves = [xg] + list(params)
    ready = [torch.zeros_like(t) for t in leaves]

    class Floor(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x_, *ps):
            return x_.new_empty(batch, size)

        @staticmethod
        def backward(ctx, grad):
            return tuple(ready)

    class OneLaunch(torch.nn.Module):  # the least a drop-in module's forward can cost: nn.Module's call, a launch
        def forward(self, t):
            return t.add_(0)

    one_launch = OneLaunch()

    def no_grad(fn):
        def run():
            with torch.no_grad():
                fn()
        return run

    rows = [
        ("eager forward (no_grad)", no_grad(lambda: ref(x))),
        ("eager forward+backward", lambda: ref(xg).backward(g)),
        ("fusegen forward (no_grad)", no_grad(lambda: model(x))),
        ("fusegen forward+backward", lambda: model(xg).backward(g)),
        ("  autograd floor: a no-op Function over x and 4 parameters, fwd+bwd", lambda: Floor.apply(*leaves).backward(g)),
        ("  _check_input", lambda: m._check_input(x, params)),
        # (x.device, as the forward passes it: with its index, the raw stream query; torch.device("cuda") takes
        # torch.cuda.current_stream, several microseconds slower)
        ("  _kernels(x.device)", lambda: m._kernels(x.device)),
        ("  _stream(x.device)", lambda: m._stream(x.device)),
        ("  one new_empty", lambda: x.new_empty(batch, size)),
        ("  _forward_impl (the binding allocates and launches)", lambda: m._forward_impl(x, w, b, gam, bet, slope,
                                                                                       1e-5, False)),
        ("  binding forward, outputs given (checks + launch)", lambda: kernels.forward(
            x, w, b, gam, bet, [], [slope], out, z, mean, rstd, empty, 1e-5, stream)),
        ("  _backward_impl (the binding allocates and launches)", lambda: m._backward_impl(
            g, x, w, gam, bet, z, mean, rstd, slope, True, True)),
        ("  binding backward_epilogue", lambda: kernels.backward_epilogue(g, z, mean, rstd, gam, bet, [], [slope], dz,
                                                                          empty, gb[0], gb[1], gb[2], [], empty,
                                                                          stream)),
        ("  binding grad_input", lambda: kernels.grad_input(dz, empty, w, dx, stream)),
        ("  binding grad_weight", lambda: kernels.grad_weight(dz, empty, x, dw, stream)),
        ("  one small CUDA kernel launch (torch: x.add_(0) on 1 element)", lambda: one.add_(0)),
        ("  the same from an nn.Module's forward (no_grad)", no_grad(lambda: one_launch(one))),
    ]
    print(f"host microseconds per call, {torch.cuda.get_device_name()}, size {size}, batch {batch}, {calls} calls")
    for name, fn in rows:
        print(f"{name:<62} {host_us(fn, calls, warmup=20):8.1f}")


if __name__ == "__main__":
    main()
