"""Probe of a random-chain miss (H200, session 22): Linear(530 -> 915, no bias) -> Mish -> GroupNorm(305 groups of 3,
no affine) in bfloat16, batch 1031 (tests/models/dtype_mish_narrow_groups.py). Counts the outputs past
allclose(1e-2) to the bf16 reference, and the relative error against fp64, of: ours, torch.compile of the reference,
the reference computed fused in fp32 (nothing rounded between stages), the reference with its GEMM reordered.
    device: PYTHONPATH=. python3 benchmarks/probe_narrow_groups_bf16.py"""
import copy
import dataclasses
import sys
import tempfile

import torch

sys.path.insert(0, "tests")
from helpers import import_file, prebuild  # noqa: E402

import fusegen  # noqa: E402
from fusegen.frontend import load_model_file, model_spec  # noqa: E402
from fusegen.tools.accuracy import draw_input  # noqa: E402

FILE = "tests/models/dtype_mish_narrow_groups.py"


def main():
    dt = torch.bfloat16
    plan = fusegen.plan(dataclasses.replace(model_spec(FILE)[0], dtype="bfloat16"), fixed_sizes=False,
                        arch=torch.cuda.get_device_capability())
    path = fusegen.write_module(plan, tempfile.mkdtemp())
    prebuild([path])
    mf, module = load_model_file(FILE), import_file(path, poison=True)
    init = mf.get_init_inputs()
    torch.manual_seed(0)
    ref = mf.Model(*init).cuda().to(dt)
    torch.manual_seed(0)
    new = module.ModelNew(*init).cuda().to(dt)
    ref64, ref32 = copy.deepcopy(ref).double(), copy.deepcopy(ref).float()
    compiled = torch.compile(copy.deepcopy(ref))
    perm = torch.randperm(init[0], generator=torch.Generator().manual_seed(1)).cuda()
    twin = copy.deepcopy(ref)
    with torch.no_grad():
        twin.fc.weight.copy_(ref.fc.weight[:, perm])
    gen = torch.Generator().manual_seed(7)
    print(f"{torch.cuda.get_device_name()}: {plan.summary}")
    print(f"{'draw':<8} {'computation':<22} {'past allclose':>14} {'max x tol':>10} {'rel err vs fp64':>16}")
    for dist in ("uniform", "normal"):
        x = draw_input(tuple(mf.get_inputs()[0].shape), dist, gen).to(dt).cuda()
        with torch.no_grad():
            r = ref(x).double()
            truth = ref64(x.double())
            rows = {"ours": new(x), "torch.compile": compiled(x), "fused fp32": ref32(x.float()).to(dt),
                    "reference reordered": twin(x[:, perm])}
        tol = 1e-2 + 1e-2 * r.abs()
        print(f"{dist:<8} {'reference':<22} {'':>14} {'':>10} "
              f"{((r - truth).norm() / truth.norm()).item():16.3e}")
        for name, out in rows.items():
            d = (out.double() - r).abs()
            print(f"{dist:<8} {name:<22} {int((d > tol).sum()):>14} {(d / tol).max().item():10.2f} "
                  f"{((out.double() - truth).norm() / truth.norm()).item():16.3e}")


if __name__ == "__main__":
    main()
