"""Why a model file misses the fp64 bar on one engine: its check (compare_models) over every input distribution and
several seeds on each engine side by side, then, for a file whose output is relu(y) + y (bn_detached_residual.py),
where our y lands on the other side of ReLU's kink than fp64's and how far that is from the fp32 reference's own
error there.

    PYTHONPATH=. python benchmarks/kink_probe.py [tests/models/bn_detached_residual.py] [--seeds 3]
"""
import argparse
import pathlib
import sys
import tempfile

import torch

import fusegen
from fusegen.frontend import load_model_file, model_spec
from fusegen.tools.accuracy import DISTRIBUTIONS, compare_models, draw_input, perturb_parameter

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
from helpers import import_file, prebuild, scaled_copy  # noqa: E402

# (label, arch, plan()'s scaled_planes)
ENGINES = [("sm80-planes", (8, 0), True), ("sm80-3xtf32", (8, 0), False), ("sm90", (9, 0), None)]


def y_of(out):
    """relu(y) + y -> y (2y above 0, y below)."""
    return torch.where(out > 0, out / 2, out)


def kink_report(model_file, module, batch, seed, dist):
    """Where our y and the fp32 reference's take the other side of 0 than fp64's, as compare_models draws them."""
    init = model_file.get_init_inputs()
    torch.manual_seed(seed)
    ref = model_file.Model(*init).cuda()
    torch.manual_seed(seed)
    new = module.ModelNew(*init).cuda()
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for (_, p), (_, q) in zip(ref.named_parameters(), new.named_parameters()):
            perturb_parameter(p, q, gen)
    shape = (batch,) + tuple(model_file.get_inputs()[0].shape[1:])
    x = draw_input(shape, dist, gen).cuda()
    ref64 = model_file.Model(*init)
    ref64.load_state_dict(ref.state_dict())
    ref64 = ref64.cuda().double()
    with torch.no_grad():
        y64, y32, ours = y_of(ref64(x.double())), y_of(ref(x)).double(), y_of(new(x)).double()
    e32, e = (y32 - y64).abs(), (ours - y64).abs()
    rms32 = torch.maximum(e32.pow(2).mean(0, keepdim=True), e32.pow(2).mean(1, keepdim=True)).sqrt()
    lines = [f"  y error rms: ours {e.pow(2).mean().sqrt():.3g}, fp32 {e32.pow(2).mean().sqrt():.3g}; "
             f"max ours/fp32-local-rms {(e / rms32).max():.3g}"]
    for name, v in (("ours", ours), ("fp32", y32)):
        flips = ((v > 0) != (y64 > 0)).nonzero().tolist()
        lines.append(f"  {name} sides against fp64: {len(flips)} flips")
        for r, c in flips[:8]:
            lines.append(f"    [{r}, {c}] y64 {y64[r, c]:.3g} ours {ours[r, c]:.3g} fp32 {y32[r, c]:.3g}; "
                         f"|y64| / (8 x fp32 local rms) {abs(y64[r, c]) / (8 * rms32[r, c]):.3g}")
    worst = e.flatten().topk(5).indices
    for i in worst.tolist():
        r, c = divmod(i, e.shape[1])
        lines.append(f"    worst [{r}, {c}]: ours err {e[r, c]:.3g}, fp32 err {e32[r, c]:.3g}, y64 {y64[r, c]:.3g}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", nargs="?", default="tests/models/bn_detached_residual.py")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    out = pathlib.Path(tempfile.mkdtemp())
    big = scaled_copy(pathlib.Path(args.model), out)
    spec = model_spec(big)[0]
    paths = {label: fusegen.write_module(fusegen.plan(spec, arch=arch, fixed_sizes=False, scaled_planes=planes),
                                         out / label) for label, arch, planes in ENGINES}
    prebuild(sorted(paths.values()))
    model_file = load_model_file(big)
    batch = model_file.get_inputs()[0].shape[0]
    detached_relu = "x = x + h" in big.read_text()
    print(f"{torch.cuda.get_device_name()}: {big.name} batch {batch}, {spec.input_size} -> {spec.hidden_size}")
    for label, _, _ in ENGINES:
        module = import_file(paths[label])
        print(f"== {label}: {module.MAINLOOP}")
        for dist in DISTRIBUTIONS:
            for seed in range(args.seeds):
                report, problems = compare_models(module.ModelNew, model_file.Model, model_file.get_init_inputs(),
                                                  (batch,) + tuple(model_file.get_inputs()[0].shape[1:]), seed,
                                                  dist=dist)
                flips = report.get("kink_flips")
                print(f"{dist:12s} seed {seed}: {'MISS' if problems else 'ok  '} flips ours/ref {flips} of "
                      f"{report.get('kink_candidates')}; out {report['out'][0]:.2g}/{report['out'][1]:.2g}, grad_x "
                      f"{report['grad_x'][0]:.2g}/{report['grad_x'][1]:.2g}")
                if problems and detached_relu:
                    print(kink_report(model_file, module, batch, seed, dist))


if __name__ == "__main__":
    main()
