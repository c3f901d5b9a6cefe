"""The headline layer in 16 bits emulated on the CPU: fp64 arithmetic rounded to the 16-bit type exactly where the
16-bit modules round (the Linear's output and bias, y, the output, dz once, the backward GEMMs' outputs), against
eager PyTorch in that type on the CPU; errors against fp64 (relative Frobenius) for the output, grad x and grad W,
on the draws tests/test_gpu_dtypes.py makes (seed batch * 7 + input, x then the output's gradient).

    PYTHONPATH=. python3 benchmarks/emulate_half_rounding.py BATCH INPUT HIDDEN GROUPS {bf16,f16} DIST [DRAWS]
        [--unrounded z|dz]   (leave that rounding out: which one the gradients' error comes from)
"""
import argparse
import copy
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from fusegen.tools.accuracy import draw_input  # noqa: E402


class Layer(torch.nn.Module):  # the reference's modules, in its order (same seed, same weights)
    def __init__(self, input_size, hidden, groups):
        super().__init__()
        self.fc = torch.nn.Linear(input_size, hidden)
        self.gn = torch.nn.GroupNorm(groups, hidden)

    def forward(self, x):
        y = torch.nn.functional.leaky_relu(self.gn(self.fc(x)), 0.01)
        return y + y


def emulated(layer, x, g, groups, dt, unrounded):
    rnd = lambda t: t.to(dt).double()  # noqa: E731
    W, b, gamma, beta = (p.detach().double() for p in (layer.fc.weight, layer.fc.bias, layer.gn.weight, layer.gn.bias))
    x = x.double()
    z = x @ W.t() + rnd(b)
    z = z if unrounded == "z" else rnd(z)
    zg = z.view(z.shape[0], groups, -1)
    mean, var = zg.mean(-1, keepdim=True), zg.var(-1, unbiased=False, keepdim=True)
    rstd = (var + 1e-5).rsqrt()
    y = rnd((((zg - mean.float().double()) * rstd.float().double()).view_as(z)) * gamma + beta)
    a = rnd(torch.where(y > 0, y, 0.01 * y))
    out = rnd(a + a)
    gy = torch.where(y > 0, 2 * g.double(), 0.02 * g.double()) * gamma  # fp32 / fp64 in the kernels
    gg, xhat = gy.view_as(zg), ((zg - mean) * rstd)
    dz = (rstd * (gg - gg.mean(-1, keepdim=True) - xhat * (gg * xhat).mean(-1, keepdim=True))).view_as(z)
    dz = dz if unrounded == "dz" else rnd(dz)
    return out, rnd(dz @ W), rnd(dz.t() @ x)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sizes", nargs=4, type=int, metavar="BATCH INPUT HIDDEN GROUPS")
    ap.add_argument("dtype", choices=["bf16", "f16"])
    ap.add_argument("dist")
    ap.add_argument("draws", nargs="?", type=int, default=1)
    ap.add_argument("--unrounded", choices=["z", "dz"], default=None)
    args = ap.parse_args()
    batch, input_size, hidden, groups = args.sizes
    dt = {"bf16": torch.bfloat16, "f16": torch.float16}[args.dtype]
    torch.manual_seed(0)
    ref = Layer(input_size, hidden, groups).to(dt)
    ref64 = copy.deepcopy(ref).double()
    gen = torch.Generator().manual_seed(batch * 7 + input_size)
    sq = {k: [0.0, 0.0, 0.0] for k in ("out", "grad x", "grad W")}
    for _ in range(args.draws):
        x = draw_input((batch, input_size), args.dist, gen).to(dt)
        g = draw_input((batch, hidden), "normal", gen).to(dt)
        results = {}
        for name, model, xin, gin in (("eager", ref, x, g), ("fp64", ref64, x.double(), g.double())):
            xr = xin.clone().requires_grad_()
            out = model(xr)
            out.backward(gin)
            results[name] = (out.detach().double(), xr.grad.double(), model.fc.weight.grad.double())
            model.zero_grad()
        results["emulated"] = emulated(ref, x, g, groups, dt, args.unrounded)
        for i, k in enumerate(sq):
            t = results["fp64"][i]
            sq[k][0] += (results["emulated"][i] - t).square().sum().item()
            sq[k][1] += (results["eager"][i] - t).square().sum().item()
            sq[k][2] += t.square().sum().item()
    print(f"{args.dtype} {tuple(args.sizes)} {args.dist}, {args.draws} draw(s)"
          f"{', ' + args.unrounded + ' unrounded' if args.unrounded else ''}: error vs fp64, emulated / eager (CPU)")
    for k, (a, b, n) in sq.items():
        print(f"  {k:7s} {(a / n) ** 0.5:.3g} / {(b / n) ** 0.5:.3g}")


if __name__ == "__main__":
    main()
