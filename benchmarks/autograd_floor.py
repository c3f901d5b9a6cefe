"""What a small layer's forward+backward costs the host before any kernel runs: one autograd node over x and four
parameters, written as a Python torch.autograd.Function and as a C++ torch::autograd::Function, each doing what a
generated module's node does besides launching (allocate out, z and the statistics, save seven tensors; in
backward allocate dz, dz_lo, the gradients). Host microseconds per call (tune.host_us), one line each.

    PYTHONPATH=. python benchmarks/autograd_floor.py [--size 1024] [--batch 16] [--calls 2000]
"""
import argparse
import pathlib
import sys

import torch
from torch.utils.cpp_extension import load_inline

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from fusegen.tools.tune import host_us  # noqa: E402

CPP = r"""
#include <torch/extension.h>
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct Node : public torch::autograd::Function<Node> {
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor x, torch::Tensor w, torch::Tensor b,
                               torch::Tensor g, torch::Tensor be, double slope, double eps) {
    auto o = x.options();
    auto out = torch::empty({x.size(0), w.size(0)}, o), z = torch::empty({x.size(0), w.size(0)}, o);
    auto mean = torch::empty({x.size(0), 32}, o.dtype(torch::kDouble)), rstd = torch::empty_like(mean);
    ctx->save_for_backward({x, w, g, be, z, mean, rstd});
    ctx->saved_data["slope"] = slope;
    return out;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto s = ctx->get_saved_variables();
    auto dz = torch::empty_like(s[4]), dz_lo = torch::empty_like(s[4]);
    auto db = torch::empty({s[1].size(0)}, s[1].options()), dg = torch::empty_like(db), dbe = torch::empty_like(db);
    auto dx = ctx->needs_input_grad(0) ? torch::empty_like(s[0]) : torch::Tensor();
    auto dw = ctx->needs_input_grad(1) ? torch::empty_like(s[1]) : torch::Tensor();
    return {dx, dw, db, dg, dbe, torch::Tensor(), torch::Tensor()};
  }
};

torch::Tensor node(torch::Tensor x, torch::Tensor w, torch::Tensor b, torch::Tensor g, torch::Tensor be,
                   double slope, double eps) {
  return Node::apply(x, w, b, g, be, slope, eps);
}
"""


class PyNode(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b, g, be, slope, eps):
        out, z = x.new_empty(x.shape[0], w.shape[0]), x.new_empty(x.shape[0], w.shape[0])
        mean = x.new_empty(x.shape[0], 32, dtype=torch.float64)
        rstd = torch.empty_like(mean)
        ctx.save_for_backward(x, w, g, be, z, mean, rstd)
        ctx.slope = slope
        return out

    @staticmethod
    def backward(ctx, grad):
        x, w, g, be, z, mean, rstd = ctx.saved_tensors
        dz, dz_lo = torch.empty_like(z), torch.empty_like(z)
        db, dg, dbe = (w.new_empty(w.shape[0]) for _ in range(3))
        dx = torch.empty_like(x) if ctx.needs_input_grad[0] else None
        dw = torch.empty_like(w) if ctx.needs_input_grad[1] else None
        return dx, dw, db, dg, dbe, None, None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args(argv)
    ext = load_inline("fusegen_autograd_floor", CPP, functions=["node"], verbose=False)
    n, b = args.size, args.batch
    x = torch.randn(b, n, device="cuda", requires_grad=True)
    lin = torch.nn.Linear(n, n).cuda()
    gn = torch.nn.GroupNorm(n // 32, n).cuda()
    ps = (lin.weight, lin.bias, gn.weight, gn.bias)
    g = torch.randn(b, n, device="cuda")
    rows = [
        ("Python autograd.Function: forward (graph recorded)", lambda: PyNode.apply(x, *ps, 0.01, 1e-5)),
        ("Python autograd.Function: forward+backward", lambda: PyNode.apply(x, *ps, 0.01, 1e-5).backward(g)),
        ("C++ autograd::Function: forward (graph recorded)", lambda: ext.node(x, *ps, 0.01, 1e-5)),
        ("C++ autograd::Function: forward+backward", lambda: ext.node(x, *ps, 0.01, 1e-5).backward(g)),
    ]
    print(f"host microseconds per call, {torch.cuda.get_device_name()}, size {n}, batch {b}, {args.calls} calls")
    for name, fn in rows:
        print(f"{name:<56} {host_us(fn, args.calls, warmup=20):8.1f}")


if __name__ == "__main__":
    main()
