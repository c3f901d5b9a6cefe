"""Random chains of one reduction kind on the GPU, as the random-chain property test draws them (its
`model_source`), with a fixed hypothesis seed so that a run can be repeated; prints each chain's verdict and the
source of every one that misses the accuracy bar, and keeps the sources under --out. Distinct chains only (seeds
--seed, --seed + 1, ... until --count are drawn); each is checked on the engines in turn as the property test
does, or on --arch's, with the input distribution the test would give it, or with each of --dists.

    device: PYTHONPATH=. python3 benchmarks/probe_chains.py --reduction batch_norm --big --count 24 \
            --dists exponential,normal --out $OUT
"""
import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402

import test_gpu_chains as chains  # noqa: E402
from helpers import import_file, prebuild  # noqa: E402

import fusegen  # noqa: E402
from fusegen.frontend import load_model_file, model_spec  # noqa: E402
from fusegen.tools.accuracy import DISTRIBUTIONS  # noqa: E402

# what a chain's source holds for each kind (all of them)
MARKS = {"batch_norm": ("nn.BatchNorm1d",), "group_norm": ("nn.GroupNorm",), "rows": ("dim=",),
         "rows_group_norm": ("nn.GroupNorm", "dim=")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reduction", choices=sorted(MARKS), required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=12)
    ap.add_argument("--big", action="store_true", help="only chains big enough for the tensor-core engines")
    ap.add_argument("--arch", choices=["sm80", "sm90"], help="plan every chain for this arch (default: in turn)")
    ap.add_argument("--dists", help="comma-separated input distributions, each chain checked with each")
    ap.add_argument("--out", default="/tmp/fusegen-probe")
    ap.add_argument("--list", action="store_true", help="write the chains' sources and stop (no GPU needed)")
    args = ap.parse_args()
    drawn, seen = [], set()

    def draw_from(s):
        @seed(s)
        @settings(max_examples=40 * args.count, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(chains.model_source())
        def draw(model):
            wanted = all(m in model[0] for m in MARKS[args.reduction]) and (model[1] >= 1024 or not args.big)
            if wanted and model[0] not in seen:
                seen.add(model[0])
                drawn.append(model)
        draw()

    for s in range(args.seed, args.seed + 50):
        if len(drawn) >= args.count:
            break
        draw_from(s)
    drawn = drawn[:args.count]
    archs = {"sm80": [(8, 0)], "sm90": [(9, 0)], None: chains.ARCHS}[args.arch]
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    files, paths = [], []
    for k, (src, *_) in enumerate(drawn):  # the engines in turn, as the property test
        f = out / f"probe_{args.reduction}_{args.seed}_{k}.py"
        f.write_text(src)
        files.append(f)
        plan = fusegen.plan(model_spec(f)[0], arch=archs[k % len(archs)])
        paths.append(fusegen.write_module(plan, out / "generated"))
    if args.list:
        print("\n".join(f"{f}: batch {b}, {i} -> {h}" for f, (_, b, i, h) in zip(files, drawn)))
        return 0
    prebuild(sorted(set(paths)))
    missed = 0
    for k, (f, path, (src, batch, inp, hidden)) in enumerate(zip(files, paths, drawn)):
        problems = []
        for dist in args.dists.split(",") if args.dists else [DISTRIBUTIONS[k % len(DISTRIBUTIONS)]]:
            problems += chains.check_model_file(load_model_file(f), import_file(path), batch, batch, dist,
                                                f"{f.name} {dist}")
        print(f"{'MISSED' if problems else 'ok'} {f.name}: batch {batch}, {inp} -> {hidden}")
        if problems:
            missed += 1
            print(src + "\n".join(problems))
    print(f"{missed} of {len(drawn)} missed the bar")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
