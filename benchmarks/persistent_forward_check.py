"""The persistent wgmma forward on each forward epilogue it takes (no GroupNorm, the row and column strategies,
GroupNorm on the fragments), at a size where the forward runs unsplit (the chains suite's scaled size runs split-K
there, one tile a block): model files of tests/models with their sizes set to --batch x --input -> --hidden (rounded
to a whole multiple of the file's own, so the group width stays), forward and every gradient against fp64 (compare_models), two input distributions each.

    device: PYTHONPATH=. python3 benchmarks/persistent_forward_check.py [--files relu_scale.py,bn_relu.py,...]

Session 38 ran it (with the rule then a candidate) before the planner took it; a case the planner leaves one tile a
block counts as failed.
"""
import argparse
import pathlib
import sys
import tempfile

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

import fusegen  # noqa: E402
from fusegen.frontend import load_model_file, model_spec  # noqa: E402
from fusegen.tools.accuracy import compare_models  # noqa: E402
from fusegen.tools.tune import _build_all, _import  # noqa: E402
from helpers import engine_ran, resized_copy  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", default="relu_scale.py,bn_relu.py,row_amax_tuple_dim.py")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--input", type=int, default=2048)
    ap.add_argument("--hidden", type=int, default=4096)
    args = ap.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="fusegen-persistent-"))
    files = [resized_copy(REPO / "tests" / "models" / n, work, args.batch, args.input, args.hidden)
             for n in args.files.split(",")]
    arch = torch.cuda.get_device_capability()
    plans = {f: fusegen.plan(model_spec(f)[0], arch=arch, fixed_sizes=False) for f in files}
    paths = {f: fusegen.write_module(p, work / "out") for f, p in plans.items()}
    failed = _build_all(list(paths.values()), len(paths))
    if failed:
        raise SystemExit("builds failed:\n" + "\n".join(f"{k}: {v}" for k, v in failed.items()))
    bad = 0
    for f, path in paths.items():
        model_file, module = load_model_file(f), _import(path)
        shape = tuple(model_file.get_inputs()[0].shape)
        engine = engine_ran(module, shape[0], shape[-1])
        if not plans[f].persistent_forward:
            engine += " (not persistent: one tile a block)"
        for seed, dist in ((0, "normal"), (1, "laplace")):
            report, problems = compare_models(module.ModelNew, model_file.Model, model_file.get_init_inputs(), shape,
                                              seed, dist=dist)
            bad += bool(problems) or "split" in engine or "not persistent" in engine
            print(f"{f.name} [{engine}, {module.GROUP_STRATEGY}, {shape}, {dist}] "
                  f"{'PROBLEMS ' + '; '.join(problems) if problems else 'ok'}: " + ", ".join(
                      f"{k} {v[0]:.2g}/{v[1]:.2g}" for k, v in report.items() if isinstance(v, tuple)
                      and k != "kink_flips"), flush=True)
    print(f"{bad} of {2 * len(paths)} cases failed (a problem, or a forward that did not run persistent)")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
