"""The benchmark harness's rule in a 16-bit dtype, allclose(out, eager, atol=1e-2, rtol=1e-2), for fusegen and for
torch.compile against eager at a few layer sizes: how many outputs miss it and by how much, and each output's
error against fp64 (how far apart two correct bf16 implementations land).

    device: PYTHONPATH=. python3 benchmarks/harness_allclose.py [--dtype bfloat16] [--seeds 3]
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
from fusegen.tools.tune import _build_all, _import  # noqa: E402

LAYERS = ((512, 4096, 4096, 128), (1024, 8192, 8192, 512))  # batch, input, hidden, groups


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    dt = getattr(torch, args.dtype)
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="fusegen-harness-"))
    paths = {layer: write_module(fusegen.plan(fusegen.Spec(*layer[1:], dtype=args.dtype)), workdir)
             for layer in LAYERS}
    failed = _build_all(list(paths.values()), len(paths))
    assert not failed, failed
    print(f"{torch.cuda.get_device_name()}, {args.dtype}: allclose(out, eager, 1e-2, 1e-2) per seed")
    print(f"{'layer':<22} {'seed':>4} {'who':<14} {'misses':>7} {'max |out - eager|':>18} {'err vs fp64':>12}")
    for layer in LAYERS:
        batch, i, h, g = layer
        torch.manual_seed(0)
        eager = ReferenceLayer(i, h, g).cuda().to(dt)
        torch.manual_seed(0)
        ours = _import(paths[layer]).ModelNew(i, h, g).cuda().to(dt)
        fp64 = copy.deepcopy(eager).double()
        compiled = torch.compile(copy.deepcopy(eager))
        for seed in range(args.seeds):
            gen = torch.Generator(device="cuda").manual_seed(seed)
            x = (torch.rand(batch, i, device="cuda", generator=gen) * 2 - 1).to(dt)
            with torch.no_grad():
                ref, truth = eager(x), fp64(x.double())
                for who, model in (("fusegen", ours), ("torch.compile", compiled)):
                    out = model(x)
                    close = torch.isclose(out, ref, atol=1e-2, rtol=1e-2)
                    print(f"{'x'.join(map(str, layer)):<22} {seed:>4} {who:<14} {int((~close).sum()):>7} "
                          f"{(out.float() - ref.float()).abs().max().item():>18.4g} {rel_err(out, truth):>12.3e}")
                print(f"{'':<22} {seed:>4} {'eager':<14} {'':>7} {'':>18} {rel_err(ref, truth):>12.3e}")


if __name__ == "__main__":
    main()
