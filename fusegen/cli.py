"""Command line: `fusegen render --hidden 8192 --groups 512` writes generated/<name>.py."""
import argparse
import sys

from .plan import plan
from .render import write_module
from .spec import FP32, PRECISIONS, TF32X3, Spec, SpecError

PRECISION_HELP = ("how the GEMMs multiply. 3xtf32 (default on sm_80+): tensor cores with each fp32 operand split "
                  "into two TF32 parts, fp32-accurate (passes allclose 1e-4 against the fp32 reference). tf32: "
                  "tensor cores on TF32-rounded operands, ~3x faster still but ~3e-4 relative error: FAILS "
                  "allclose(atol=1e-4, rtol=1e-4). fp32: plain FFMA, the portable path (default below sm_80, "
                  "when a GPU is visible)")


def default_precision() -> str:
    """3xtf32, unless the visible GPU predates tensor-core TF32 (sm_80)."""
    try:
        import torch
        if torch.cuda.is_available() and torch.cuda.get_device_capability() < (8, 0):
            return FP32
    except Exception:  # no usable torch/driver here: the module is rendered for sm_80+ targets
        pass
    return TF32X3


def _arch(text):
    try:
        major, minor = (int(v) for v in text.split("."))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a compute capability like 9.0 or 8.6, got {text!r}")
    return major, minor


def _visible_arch():
    try:
        import torch
        return tuple(torch.cuda.get_device_capability()) if torch.cuda.is_available() else None
    except Exception:  # no usable driver: plan for the portable tensor-core engine
        return None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fusegen", description=__doc__.split("\n")[0].replace("Command line: ", ""))
    sub = parser.add_subparsers(dest="command", required=True)
    render = sub.add_parser("render", help="render a fused module for one layer size",
                            description="Render generated/<name>.py for Linear(input, hidden) -> "
                                        "GroupNorm(groups, hidden) -> LeakyReLU -> x + x.")
    render.add_argument("--hidden", type=int, required=True, help="hidden size (Linear out_features, GroupNorm channels)")
    render.add_argument("--groups", type=int, required=True, help="GroupNorm groups; must divide --hidden")
    render.add_argument("--input", type=int, default=None, help="Linear in_features (default: --hidden)")
    render.add_argument("--eps", type=float, default=1e-5, help="GroupNorm eps default baked into the module")
    render.add_argument("--negative-slope", type=float, default=0.01, help="LeakyReLU slope default")
    render.add_argument("--precision", choices=PRECISIONS, default=None, help=PRECISION_HELP)
    render.add_argument("--out", default="generated", help="output directory (default: generated)")
    render.add_argument("--dynamic-sizes", action="store_true",
                        help="pass input/hidden at run time instead of compiling them in (shares builds)")
    render.add_argument("--gpu", default=None,
                        help="take the tile from the tuning table entry of this GPU name (default: the visible GPU; "
                             "with none visible, the one GPU the table holds this layer for, if exactly one)")
    render.add_argument("--arch", default=None, type=_arch,
                        help="compute capability to plan for, e.g. 9.0 (wgmma engine) or 8.0 (mma.sync), when the "
                             "tuning table has no entry for --gpu (default: the visible GPU's; none visible: 8.0)")

    tune = sub.add_parser("tune", help="time candidate GEMM tiles on this GPU; store the winner for render",
                          description="Benchmark the candidate tile configurations for one layer size on the GPU "
                                      "in hand and store the fastest (forward+backward) in the tuning table "
                                      "(fusegen/tuning.json) that render consults.")
    tune.add_argument("--hidden", type=int, required=True, help="hidden size")
    tune.add_argument("--groups", type=int, required=True, help="GroupNorm groups; must divide --hidden")
    tune.add_argument("--input", type=int, default=None, help="Linear in_features (default: --hidden)")
    tune.add_argument("--batch", type=int, default=1024, help="batch size to time (default: 1024)")
    tune.add_argument("--precision", choices=PRECISIONS, default=None, help="precision to tune (default as render)")
    tune.add_argument("--reps", type=int, default=10, help="timed calls per candidate (median)")
    tune.add_argument("--no-save", action="store_true", help="print the ranking, leave the table alone")
    return parser


def _spec(args, command):
    try:
        return Spec(input_size=args.hidden if args.input is None else args.input, hidden_size=args.hidden,
                    num_groups=args.groups, precision=args.precision or default_precision(),
                    **({} if command == "tune" else dict(eps=args.eps, negative_slope=args.negative_slope)))
    except SpecError as e:
        print(f"fusegen {command}: {e}", file=sys.stderr)
        return None


def _visible_gpu():
    try:
        import torch
        return torch.cuda.get_device_name() if torch.cuda.is_available() else None
    except Exception:  # no usable driver: no GPU to tune for
        return None


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    spec = _spec(args, args.command)
    if spec is None:
        return 2
    if args.command == "render":
        gpu = args.gpu or _visible_gpu()
        if gpu is None:  # rendering for another machine: the table's only tuned GPU for this layer, if one
            from .tune import tuned_gpus
            tuned = tuned_gpus(spec)
            gpu = tuned[0] if len(tuned) == 1 else None
        p = plan(spec, fixed_sizes=not args.dynamic_sizes, gpu=gpu, arch=args.arch or _visible_arch())
        path = write_module(p, args.out)
        print(path)
        print(f"plan: {p.summary}")
    elif args.command == "tune":
        from .tune import tune
        try:
            gpu, rows = tune(spec, args.batch, reps=args.reps, save=not args.no_save)
        except RuntimeError as e:
            print(f"fusegen tune: {e}", file=sys.stderr)
            return 1
        print(f"{'tile':<24} {'forward ms':>11} {'fwd+bwd ms':>11}")
        for r in rows:
            print(f"{r['name']:<24} {r['forward_ms']:>11.3f} {r['forward_backward_ms']:>11.3f}")
        print(f"winner on {gpu}: {rows[0]['name']}" + ("" if args.no_save else " (stored in the tuning table)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
