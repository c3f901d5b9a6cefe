"""Why a model file misses the fp64 bar on one engine and one input distribution (session 26: bn_relu.py and
stage_channel_clamp_params.py scaled to 1000 x 1020 on mma.sync, exponential / row_scales inputs; the small
stage_hardtanh_wide_group.py at batch 8, row_scales): each file on each engine over seeds and every distribution
(normwise error of ours / the fp32 reference's, per tensor), then, where ours misses, the elements whose side of
a kink ours took against fp64's, with how far each lies from the kink and the tolerance that forgives a flip.

    device: PYTHONPATH=. python3 benchmarks/probe_kink_flips.py --out $OUT [--seeds 3]
"""
import argparse
import pathlib
import sys

import torch

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from helpers import import_file, prebuild, scaled_copy  # noqa: E402

import fusegen  # noqa: E402
from fusegen.frontend import load_model_file, model_spec, trace_layers  # noqa: E402
from fusegen.tools import accuracy  # noqa: E402

DEVICE = "cuda"
CASES = [("bn_relu.py", "big"), ("stage_channel_clamp_params.py", "big"), ("stage_hardtanh_wide_group.py", "small")]


class _Record(torch.fx.Interpreter):
    """Runs a traced model and keeps every node's value."""

    def __init__(self, module, graph):
        super().__init__(torch.fx.GraphModule(module, graph))
        self.values = {}

    def run_node(self, n):
        v = super().run_node(n)
        self.values[n.name] = v
        return v


def flips(module, model_file, batch, seed, dist):
    """Where the last op is a kinked max (ReLU, or torch.max against a parameter): the elements where ours' output
    shows the other side than fp64's input to it, with the distance to the kink, the fp32 reference's error there
    and the tolerance compare_models forgives a flip within (kinks of constant position only)."""
    init = model_file.get_init_inputs()
    torch.manual_seed(seed)
    ref = model_file.Model(*init).to(DEVICE)
    torch.manual_seed(seed)
    new = module.ModelNew(*init).to(DEVICE)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():  # the same perturbation as compare_models
        for (_, p), (_, q) in zip(ref.named_parameters(), new.named_parameters()):
            accuracy.perturb_parameter(p, q, gen)
    shape = (batch,) + tuple(model_file.get_inputs()[0].shape[1:])
    x = accuracy.draw_input(shape, dist, gen).to(DEVICE)
    ref64 = model_file.Model(*init)
    ref64.load_state_dict(ref.state_dict())
    ref64 = ref64.to(DEVICE).double().train(ref.training)
    _, graph = trace_layers(ref64)
    with torch.no_grad():
        out = new(x).double()
        r32, r64 = _Record(ref, graph), _Record(ref64, graph)
        r32.run(x)
        r64.run(x.double())
    last = [n for n in graph.nodes if n.op == "output"][0].args[0]
    acts = [a for a in last.args if isinstance(a, torch.fx.Node) and a.op != "get_attr"]
    params = [a for a in last.args if isinstance(a, torch.fx.Node) and a.op == "get_attr"]
    lines = [f"  last op {last.op} {last.target}; activation {[a.name for a in acts]}, bound {[a.name for a in params]}"]
    if len(acts) != 1:
        return lines
    a64, a32 = r64.values[acts[0].name].double(), r32.values[acts[0].name].double()
    bound = r64.values[params[0].name].double().expand_as(a64) if params else torch.zeros_like(a64)
    flip = (out > bound) != (a64 > bound)
    rms = (a32 - a64).pow(2).mean(-1, keepdim=True).sqrt().expand_as(a64)
    tol = 8 * (rms + 8 * accuracy.U * a64.pow(2).mean(-1, keepdim=True).sqrt().expand_as(a64))
    for r, c in flip.nonzero().tolist()[:12]:
        lines.append(f"  [{r},{c}] fp64 {a64[r, c].item():.9g} bound {bound[r, c].item():.9g} ours out "
                     f"{out[r, c].item():.9g} |fp64-bound| {abs(a64[r, c] - bound[r, c]).item():.3g} fp32 err "
                     f"{abs(a32[r, c] - a64[r, c]).item():.3g} tol {tol[r, c].item():.3g} row rms fp32 err "
                     f"{rms[r, c].item():.3g} row scale {a64[r].abs().max().item():.3g}")
    lines.append(f"  {int(flip.sum())} flips in ours' output; the fp32 reference's: {int(((a32 > bound) != (a64 > bound)).sum())}")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/probe")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    (out / "big").mkdir(parents=True, exist_ok=True)
    models = ROOT / "tests" / "models"
    paths = {}
    for name, size in CASES:
        f = models / name if size == "small" else scaled_copy(models / name, out / "big")
        for arch in ((8, 0), (9, 0)):
            plan = fusegen.plan(model_spec(f)[0], arch=arch, fixed_sizes=False)
            paths[name, arch] = (f, fusegen.write_module(plan, out / f"sm{arch[0]}{arch[1]}"))
    prebuild(sorted({p for _, p in paths.values()}))
    table = []
    for (name, arch), (f, path) in paths.items():
        model_file, module = load_model_file(f), import_file(path)
        batch = model_file.get_inputs()[0].shape[0]
        for dist in accuracy.DISTRIBUTIONS:
            for seed in range(args.seeds):
                report, problems = accuracy.compare_models(
                    module.ModelNew, model_file.Model, model_file.get_init_inputs(),
                    (batch,) + tuple(model_file.get_inputs()[0].shape[1:]), seed, dist=dist)
                worst = max(((k, v[0] / max(v[1], 1e-30)) for k, v in report.items()
                             if isinstance(v, tuple) and k.startswith(("out", "grad")) and v[1] < 1),
                            key=lambda kv: kv[1])
                line = (f"{name:34s} sm{arch[0]}{arch[1]} {dist:12s} seed {seed}: "
                        f"{'MISS' if problems else 'ok  '} worst ours/ref {worst[0]} {worst[1]:.3g}; "
                        f"flips {report.get('kink_flips')} of {report.get('kink_candidates')}")
                print(line, flush=True)
                table.append(line)
                if problems:
                    for p in problems[:4]:
                        print("   ", p[:300])
                    for ln in flips(module, model_file, batch, seed, dist):
                        print(ln, flush=True)
    (out / "probe_table.txt").write_text("\n".join(table) + "\n")
    print("\n".join(ln for ln in table if "MISS" in ln) or "no misses")


if __name__ == "__main__":
    main()
