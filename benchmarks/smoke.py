"""Quick GPU check of every precision: a handful of awkward shapes against fp64, then headline timings.

    PYTHONPATH=. python benchmarks/smoke.py [--precisions 3xtf32,tf32,fp32] [--arch 8.0]

--arch plans for another compute capability than the visible GPU's (8.0: the mma.sync engine on an H200).
"""
import argparse
import pathlib
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

import torch  # noqa: E402

import fusegen  # noqa: E402
from fusegen.tools.tune import _build_all, time_layer  # noqa: E402
from helpers import HEADLINE, compare_with_reference, import_file  # noqa: E402

# (group width, groups, input, batch): small ones run the compensated SIMT engine, large ones the main engine
# (16-byte and 4-byte copies, fragment / tile-local / two-stage GroupNorm).
SHAPES = [(16, 4, 300, 257), (200, 2, 96, 130), (16, 64, 2048, 1024), (200, 8, 4097, 1000), (3, 100, 3001, 1001),
          (1, 512, 1023, 777), (128, 4, 4096, 999)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--precisions", default="3xtf32,tf32,fp32")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--arch", default=None, help="compute capability to plan for (default: the visible GPU's)")
    args = ap.parse_args()
    arch = tuple(int(v) for v in args.arch.split(".")) if args.arch else torch.cuda.get_device_capability()
    out = pathlib.Path(tempfile.mkdtemp())
    precisions = args.precisions.split(",")
    paths = {}
    for precision in precisions:
        for gw, groups, inp, batch in SHAPES:  # run-time sizes: one build per (precision, group width)
            spec = fusegen.Spec(inp, gw * groups, groups, precision=precision)
            paths[spec] = fusegen.write_module(fusegen.plan(spec, fixed_sizes=False, arch=arch), out)
        spec = fusegen.Spec(8192, 8192, 512, precision=precision)
        paths[spec] = fusegen.write_module(fusegen.plan(spec, arch=arch), out)
    failed = _build_all(sorted(set(paths.values())), jobs=16)
    assert not failed, failed
    for precision in precisions:
        for gw, groups, inp, batch in SHAPES:
            spec = fusegen.Spec(inp, gw * groups, groups, precision=precision)
            m = import_file(paths[spec])
            try:
                r = compare_with_reference(m.ModelNew, spec, batch, seed=7)
            except AssertionError as e:
                print(f"MISS {precision} gw{gw} g{groups} i{inp} b{batch}: {str(e)[:300]}", flush=True)
                continue
            print(f"{precision} gw{gw} g{groups} i{inp} b{batch}: " +
                  ", ".join(f"{k} {v[0]:.2g}/{v[1]:.2g}" for k, v in r.items() if isinstance(v, tuple) and k != "kink_flips"),
                  flush=True)
        spec = fusegen.Spec(8192, 8192, 512, precision=precision)
        m = import_file(paths[spec])
        r = compare_with_reference(m.ModelNew, spec, 1024, seed=1234, strict_allclose=precision != "tf32")
        torch.manual_seed(0)
        model = m.ModelNew(8192, 8192, 512).cuda()
        x = torch.rand(1024, 8192, device="cuda")
        g = torch.randn(1024, 8192, device="cuda")
        f, fb = time_layer(model, x, g, args.reps)
        print(f"HEADLINE {precision} ({m.MAINLOOP}): out err {r['out'][0]:.2g} (ref {r['out'][1]:.2g}), max diff {r['max_out_diff']:.2g}; "
              f"forward {f:.3f} ms, fwd+bwd {fb:.3f} ms", flush=True)


if __name__ == "__main__":
    main()
