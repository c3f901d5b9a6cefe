"""Probe of a random-chain miss (H100, session 21): Linear(1 -> 2, no bias) -> GroupNorm(1 group of 2, no affine)
under autocast bfloat16, batch 1: the weight's gradient was farther from fp64 than the reference's. Prints, draw by
draw, z, dz (as the GEMM input's gradient shows it) and dW of ours, the reference and fp64.
    device: PYTHONPATH=. python3 benchmarks/probe_tiny_gn_autocast.py"""
import dataclasses
import pathlib
import sys
import tempfile

import torch

sys.path.insert(0, "tests")
from helpers import import_file, prebuild  # noqa: E402

import fusegen  # noqa: E402
from fusegen.frontend import load_model_file, model_spec  # noqa: E402
from fusegen.tools.accuracy import draw_input  # noqa: E402

SRC = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size, bias=False)
        self.gn = nn.GroupNorm(1, hidden_size, affine=False)

    def forward(self, x):
        return self.gn(self.fc(x))


def get_inputs():
    return [torch.rand(1, 1)]


def get_init_inputs():
    return [1, 2]
'''

tmp = pathlib.Path(tempfile.mkdtemp())
f = tmp / "tiny_gn.py"
f.write_text(SRC)
spec = dataclasses.replace(model_spec(f)[0], dtype="float32", autocast="bfloat16")
plan = fusegen.plan(spec, fixed_sizes=False, arch=torch.cuda.get_device_capability())
print(plan.mainloop, plan.tile, "statistics", plan.statistics.name)
path = fusegen.write_module(plan, tmp / "generated")
prebuild([path])
model_file, module = load_model_file(f), import_file(path)
torch.manual_seed(2)
ref = model_file.Model(1, 2).cuda()
torch.manual_seed(2)
new = module.ModelNew(1, 2).cuda()
ref64 = model_file.Model(1, 2).cuda().double()
ref64.load_state_dict(ref.state_dict())
print("weight", ref.fc.weight.flatten().tolist())
gen = torch.Generator().manual_seed(1 * 7 + 1)
sq = {"new": 0.0, "ref": 0.0}
norm = 0.0
for d in range(16):
    x = draw_input((1, 1), "uniform", gen).cuda()
    g = None
    rows = {}
    for name, model, xin, cast in (("ref", ref, x, True), ("new", new, x, True), ("fp64", ref64, x.double(), False)):
        xr = xin.clone().requires_grad_()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=cast):
            out = model(xr)
        if g is None:
            g = draw_input(tuple(out.shape), "normal", gen).to(out.dtype).cuda()
        out.backward(g.to(out.dtype))
        rows[name] = (out.detach().double().flatten().tolist(), model.fc.weight.grad.double().flatten().tolist())
        model.zero_grad(set_to_none=True)
    t = torch.tensor(rows["fp64"][1])
    norm += t.square().sum().item()
    for k in ("new", "ref"):
        sq[k] += (torch.tensor(rows[k][1]) - t).square().sum().item()
    print(f"draw {d}: x {x.item():+.6g} g {g.flatten().tolist()}")
    for k, (o, gw) in rows.items():
        print(f"  {k:5s} out {o[0]:+.8g} {o[1]:+.8g}  dW {gw[0]:+.8g} {gw[1]:+.8g}")
print({k: (v / norm) ** 0.5 for k, v in sq.items()})
