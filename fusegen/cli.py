"""Command line: `fusegen render --hidden 8192 --groups 512` writes generated/<name>.py."""
import argparse
import sys

from .plan import plan
from .render import write_module
from .spec import Spec, SpecError


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
    render.add_argument("--out", default="generated", help="output directory (default: generated)")
    render.add_argument("--dynamic-sizes", action="store_true",
                        help="pass input/hidden at run time instead of compiling them in (shares builds)")
    return parser


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "render":
        try:
            spec = Spec(input_size=args.hidden if args.input is None else args.input, hidden_size=args.hidden,
                        num_groups=args.groups, eps=args.eps, negative_slope=args.negative_slope)
        except SpecError as e:
            print(f"fusegen render: {e}", file=sys.stderr)
            return 2
        p = plan(spec, fixed_sizes=not args.dynamic_sizes)
        path = write_module(p, args.out)
        print(path)
        print(f"plan: {p.summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
