"""One layer in several dtypes on the GPU: fusegen's module for each dtype against PyTorch eager and torch.compile
(default mode) in that dtype, model and input cast as a harness casts them; the output's relative error against
fp64 for each; and fusegen's kernels one by one (torch.profiler), the GEMM kernels with their TFLOP/s (2 M N K
flops a launch of a whole GEMM, split-K parts summed per step).

    device: PYTHONPATH=. python3 benchmarks/dtype_bench.py [--dtypes bfloat16,float16] [--init 8192,8192,512]
            [--batch 1024] [--compile] [--autocast] [--variants m256n128s4:tile_local,m128n128s6:fragment]
    --variants: fusegen's module once per wgmma tile (a tuning candidate's name) and GroupNorm strategy given,
    instead of the planned one (what the planner or the tuning table would choose, measured side by side).
"""
import argparse
import copy
import pathlib
import sys
import tempfile

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import fusegen  # noqa: E402
from fusegen.codegen import write_module  # noqa: E402
from fusegen.tools.accuracy import ReferenceLayer, rel_err  # noqa: E402
from fusegen.tools.tune import _build_all, _import, candidates, time_layer  # noqa: E402

sys.path.insert(0, str(REPO / "benchmarks"))
from kernel_times import step_kernel_times  # noqa: E402

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
# kernel name -> the GEMM each of its launches in a step runs, in launch order (each the layer's M x N x K: batch,
# hidden, input); the wgmma engine runs dx and then dw through one kernel
GEMMS = {"linear_gn_forward_kernel": ("forward",), "wgmma_forward_kernel": ("forward",),
         "wgmma_forward_persistent_kernel": ("forward",),
         "grad_input_kernel": ("dx",), "grad_weight_kernel": ("dw",),
         # (dW reads dz row-contiguous where the engine can: its own instance; else dx and dW share one)
         "wgmma_store_kernel<false>": ("dw",), "wgmma_store_kernel<(bool)0>": ("dw",),
         "wgmma_store_kernel": ("dx", "dw"),
         # the persistent kernel <E, P_K_FAST>: the same split of roles
         "wgmma_store_persistent_kernel<": ("dx", "dw")}


def gemm_launches(key):
    """The GEMMs of a kernel's launches in a step (None: not a GEMM), from its name."""
    if "wgmma_store_persistent_kernel<" in key and (", false>" in key or ", (bool)0>" in key):
        return ("dw",)
    return next((v for name, v in GEMMS.items() if name in key), None)


class UnderAutocast(torch.nn.Module):
    """model called under torch.autocast("cuda", dtype) (backward then runs outside it, as training runs it)."""

    def __init__(self, model, dtype):
        super().__init__()
        self.model, self.dtype = model, dtype

    def forward(self, x):
        with torch.autocast("cuda", dtype=self.dtype):
            return self.model(x)


def _grads(model, x, g):
    """(x's gradient, the weight's) of one forward+backward from fresh gradients."""
    model.zero_grad(set_to_none=True)
    xr = x.clone().requires_grad_()
    model(xr).backward(g)
    weight = next(p for p in model.parameters() if p.dim() == 2)
    return xr.grad, weight.grad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtypes", default="bfloat16,float16")
    ap.add_argument("--init", default="8192,8192,512", help="input, hidden, groups")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--inner", type=int, default=5)
    ap.add_argument("--compile", action="store_true", help="also torch.compile (default mode) in each dtype")
    ap.add_argument("--autocast", action="store_true",
                    help="the float32 layer under torch.autocast(dtype) instead: fusegen's --autocast module, eager "
                         "and torch.compile each called under it")
    ap.add_argument("--variants", default="", help="TILE:STRATEGY,... fusegen modules to time instead of the planned")
    ap.add_argument("--build-only", action="store_true",
                    help="build the modules (into the shared build cache) and stop: a device call builds them beside "
                         "other work, then times with nothing else on the GPU")
    args = ap.parse_args()
    input_size, hidden, groups = (int(v) for v in args.init.split(","))
    dtypes = args.dtypes.split(",")
    gpu = torch.cuda.get_device_name()
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="fusegen-dtypes-"))
    paths = {}  # (dtype, label) -> module file
    variants = [v.split(":") for v in args.variants.split(",") if v]
    for d in dtypes:
        spec = fusegen.Spec(input_size, hidden, groups, **({"autocast": d} if args.autocast else {"dtype": d}))
        plans = {"fusegen": fusegen.plan(spec, gpu=gpu, arch=torch.cuda.get_device_capability(), batch=args.batch)}
        if variants:
            tiles = {t.name: t for t in candidates(spec.arithmetic, torch.cuda.get_device_capability())}
            plans = {f"fusegen {t} {st}": fusegen.plan(spec, tile=tiles[t], group_strategy=st) for t, st in variants}
        for label, p in plans.items():
            paths[d, label] = write_module(p, workdir)
            print(f"{d}: {label}: {p.module_name}: {p.summary}")
    failed = _build_all(list(paths.values()), len(paths))
    if failed:
        raise SystemExit("builds failed:\n" + "\n".join(f"{p}: {err}" for p, err in failed.items()))
    if args.build_only:
        return
    m, n, k = args.batch, hidden, input_size
    flops = 2.0 * m * n * k
    table = []
    for d in dtypes:
        dt = DTYPES[d]
        torch.manual_seed(0)
        tensors = torch.float32 if args.autocast else dt  # (autocast: float32 parameters and input)
        ours = {}
        for (dd, label), path in paths.items():
            if dd == d:
                torch.manual_seed(0)
                ours[label] = _import(path).ModelNew(input_size, hidden, groups).cuda().to(tensors)
        torch.manual_seed(0)
        eager = ReferenceLayer(input_size, hidden, groups).cuda().to(tensors)
        fp64 = copy.deepcopy(eager).double()
        wrap = (lambda mod: UnderAutocast(mod, dt)) if args.autocast else (lambda mod: mod)
        gen = torch.Generator(device="cuda").manual_seed(1)
        x = torch.randn(m, input_size, device="cuda", generator=gen).to(tensors)
        models = {**{label: wrap(m) for label, m in ours.items()}, "eager": wrap(eager)}
        if args.compile:
            models["torch.compile"] = torch.compile(wrap(copy.deepcopy(eager)))
        with torch.no_grad():
            truth = fp64(x.double())
            outs = {name: model(x) for name, model in models.items()}
        errors = {name: rel_err(out, truth) for name, out in outs.items()}
        g = torch.randn(m, hidden, device="cuda", generator=gen).to(outs["eager"].dtype)
        # the gradients of x and W against fp64 at this size too: the backward kernels on their real-size path
        gx64, gw64 = _grads(fp64, x.double(), g.double())
        grad_errors = {}
        for name, model in models.items():
            gx, gw = _grads(model, x, g)
            grad_errors[name] = max(rel_err(gx, gx64), rel_err(gw, gw64))
        for name, model in models.items():
            f, fb = time_layer(model, x, g, args.reps, inner=args.inner)
            table.append((d, name, f, fb, errors[name], grad_errors[name]))
        for label in ours:
            print(f"\n{d} {label} kernels per forward+backward step ({gpu}, batch {m}, {k} -> {n}):")
            print(f"{'us/step':>9} {'calls':>5} {'TFLOP/s':>8}  kernel")
            xg = x.clone().requires_grad_()  # (x needs its gradient, as in time_layer's forward+backward)
            for key, (t, calls) in sorted(step_kernel_times(models[label], xg, g, args.reps, by_launch=True).items(),
                                          key=lambda kv: -kv[1][0]):
                launches = gemm_launches(key)  # ("name #i": launch i)
                gemm = launches[int(key.rsplit("#", 1)[1]) - 1 if "#" in key else 0] if launches else None
                rate = f"{flops / (t * 1e-6) / 1e12:8.0f}" if gemm else " " * 8
                print(f"{t:9.1f} {calls:5.1f} {rate}  {(gemm + ': ') if gemm else ''}{key[:100]}")
    under = "float32 layer under torch.autocast(dtype)" if args.autocast else "layer in dtype"
    print(f"\n{gpu}, batch {m}, init {input_size},{hidden},{groups}, {under}; medians of {args.reps} x {args.inner} calls")
    print(f"{'dtype':<9} {'layer':<32} {'forward ms':>10} {'fwd+bwd ms':>10} {'out err vs fp64':>16} "
          f"{'grad x, W err':>14}")
    for d, name, f, fb, err, gerr in table:
        print(f"{d:<9} {name:<32} {f:10.3f} {fb:10.3f} {err:16.2e} {gerr:14.2e}")


if __name__ == "__main__":
    main()
