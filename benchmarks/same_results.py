"""Two generated module files for the same layer, on the same inputs: are the output and every gradient the same,
bit for bit? For changes that must not change the arithmetic (how operands reach the tensor cores, how tiles are
scheduled): a difference of a single bit says the change did more than it claims.

    PYTHONPATH=. python benchmarks/same_results.py OLD.py NEW.py --init 8192,8192,512 --batch 1024 [--dtype bfloat16]
"""
import argparse
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from fusegen.tools.accuracy import draw_input  # noqa: E402
from fusegen.tools.tune import _import  # noqa: E402

DISTRIBUTIONS = ("normal", "uniform", "lognormal", "row_scales")  # (row_scales: rows 2^20 apart)


def poison():
    """The caching allocator's free memory NaN: a buffer a module fails to write then shows, instead of holding
    what the other module's run left there."""
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    free = torch.cuda.mem_get_info()[0]
    block = torch.full((max(1, free // 2 // 4),), float("nan"), device="cuda")
    del block


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", type=pathlib.Path)
    ap.add_argument("b", type=pathlib.Path)
    ap.add_argument("--init", required=True, help="ModelNew's constructor arguments, comma-separated integers")
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"],
                    help="the modules' element type (the layer, its input and gradient cast to it)")
    args = ap.parse_args(argv)
    init = [int(v) for v in args.init.split(",")]
    dtype = getattr(torch, args.dtype)
    models = []
    for path in (args.a, args.b):
        torch.manual_seed(0)
        models.append(_import(path).ModelNew(*init).cuda().to(dtype))
    gen = torch.Generator().manual_seed(35)
    differ = 0
    for name in DISTRIBUTIONS:
        x = draw_input((args.batch, init[0]), name, gen)
        results = []
        for model in models:
            model.zero_grad(set_to_none=True)
            poison()
            with torch.no_grad():  # (the forward that keeps nothing for backward)
                inference = model(x.cuda().to(dtype))
            poison()
            xg = x.cuda().to(dtype).requires_grad_()
            out = model(xg)
            g = torch.randn(out.shape, generator=torch.Generator().manual_seed(7)).cuda().to(dtype)
            out.backward(g)
            torch.cuda.synchronize()
            results.append({"out": out.detach(), "out no_grad": inference, "x.grad": xg.grad,
                            **{f"{n}.grad": p.grad for n, p in model.named_parameters()}})
        for key, a in results[0].items():
            b = results[1][key]
            same = torch.equal(a, b)
            differ += not same
            worst = 0.0 if same else (a.double() - b.double()).abs().max().item()
            print(f"{name:<16} {key:<14} {'same' if same else 'DIFFERENT':<9} max |A - B| {worst:.3e}")
    print(f"{'all the same' if not differ else f'{differ} results differ'}: {args.a.name} / {args.b.name}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
