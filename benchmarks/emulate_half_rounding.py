"""The headline layer in 16 bits emulated on the CPU: fp64 arithmetic rounded to the 16-bit type exactly where the
16-bit modules round (the Linear's output and bias, y, the output, dz once, the backward GEMMs' outputs), against
eager PyTorch in that type on the CPU (and on the GPU with --gpu); errors against fp64 (relative Frobenius) of every
intermediate (z the Linear's output, y the GroupNorm's, dz the gradient at z) and of the output and gradients, on
the draws tests/test_gpu_dtypes.py makes (seed batch * 7 + input, x then the output's gradient).

    PYTHONPATH=. python3 benchmarks/emulate_half_rounding.py BATCH INPUT HIDDEN GROUPS {bf16,f16} DIST [DRAWS]
        [--unrounded z|dz]   (leave that rounding out: which one the gradients' error comes from)
        [--gpu]              (eager on the GPU too: where it departs from eager on the CPU)
        [--seed S]           (the weights' seed, torch.manual_seed; 0 by default, test_random_shapes_per_dtype's k)
        [--per-draw]         (each draw's dz error and its sign flips: elements whose emulated y and fp64's fall on
                              two sides of 0, where LeakyReLU's gradient is 2 on one side and 0.02 on the other)
"""
import argparse
import copy
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from fusegen.tools.accuracy import draw_input  # noqa: E402

TENSORS = ("z", "y", "out", "dz", "grad x", "grad W")


class Layer(torch.nn.Module):  # the reference's modules, in its order (same seed, same weights)
    def __init__(self, input_size, hidden, groups):
        super().__init__()
        self.fc = torch.nn.Linear(input_size, hidden)
        self.gn = torch.nn.GroupNorm(groups, hidden)

    def forward(self, x):
        self.z = self.fc(x)
        self.z.retain_grad()
        self.y = self.gn(self.z)
        y = torch.nn.functional.leaky_relu(self.y, 0.01)
        return y + y


def eager(model, x, g):
    """Every tensor of TENSORS, in float64 on the CPU, from running `model` forward and backward."""
    xr = x.clone().requires_grad_()
    out = model(xr)
    out.backward(g)
    found = (model.z, model.y, out, model.z.grad, xr.grad, model.fc.weight.grad)
    model.zero_grad(set_to_none=True)
    return [t.detach().double().cpu() for t in found]


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
    return [z, y, out, dz, rnd(dz @ W), rnd(dz.t() @ x)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sizes", nargs=4, type=int, metavar="BATCH INPUT HIDDEN GROUPS")
    ap.add_argument("dtype", choices=["bf16", "f16"])
    ap.add_argument("dist")
    ap.add_argument("draws", nargs="?", type=int, default=1)
    ap.add_argument("--unrounded", choices=["z", "dz"], default=None)
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--per-draw", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    batch, input_size, hidden, groups = args.sizes
    dt = {"bf16": torch.bfloat16, "f16": torch.float16}[args.dtype]
    torch.manual_seed(args.seed)
    ref = Layer(input_size, hidden, groups).to(dt)
    ref64 = copy.deepcopy(ref).double()
    ref_gpu = copy.deepcopy(ref).cuda() if args.gpu else None
    gen = torch.Generator().manual_seed(batch * 7 + input_size)
    columns = ["emulated", "eager CPU"] + (["eager GPU"] if args.gpu else [])
    sq = {k: [0.0] * (len(columns) + 1) for k in TENSORS}  # squared errors per column, then fp64's squared norm
    apart = {k: 0 for k in TENSORS}  # elements where eager on the GPU and on the CPU differ
    for _ in range(args.draws):
        x = draw_input((batch, input_size), args.dist, gen).to(dt)
        g = draw_input((batch, hidden), "normal", gen).to(dt)
        results = {"fp64": eager(ref64, x.double(), g.double()), "eager CPU": eager(ref, x, g),
                   "emulated": emulated(ref, x, g, groups, dt, args.unrounded)}
        if args.gpu:
            results["eager GPU"] = eager(ref_gpu, x.cuda(), g.cuda())
            for k, a, b in zip(TENSORS, results["eager GPU"], results["eager CPU"]):
                apart[k] += int((a != b).sum())
        if args.per_draw:
            (_, y, _, dz, *_), (_, y64, _, dz64, *_) = results["emulated"], results["fp64"]
            flips, sq_err = y.sign() != y64.sign(), (dz - dz64).square()
            print(f"  draw: dz error {(sq_err.sum() / dz64.square().sum()).sqrt():.3g}, {int(flips.sum())} sign "
                  f"flips carrying {sq_err[flips].sum() / sq_err.sum():.0%} of its square")
        for i, k in enumerate(TENSORS):
            t = results["fp64"][i]
            for j, c in enumerate(columns):
                sq[k][j] += (results[c][i] - t).square().sum().item()
            sq[k][-1] += t.square().sum().item()
    print(f"{args.dtype} {tuple(args.sizes)} {args.dist}, {args.draws} draw(s)"
          f"{', ' + args.unrounded + ' unrounded' if args.unrounded else ''}: error vs fp64, " + " / ".join(columns)
          + ("; elements where the GPU's eager differs from the CPU's" if args.gpu else ""))
    for k, v in sq.items():
        errs = " / ".join(f"{(a / v[-1]) ** 0.5:.3g}" for a in v[:-1])
        print(f"  {k:7s} {errs}" + (f"   {apart[k]}" if args.gpu else ""))


if __name__ == "__main__":
    main()
