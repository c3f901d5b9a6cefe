"""Command line: `fusegen render --hidden 8192 --groups 512` writes generated/<name>.py.

Every command exits 0 on success and non-zero with a one-line reason on stderr on failure.
"""
import argparse
import dataclasses
import os
import pathlib
import shutil
import sys

from ..codegen import write_module
from ..dtypes import AUTOCAST_TYPES, ELEMENTS, FLOAT32
from ..plan import plan
from ..spec import FP32, PRECISIONS, TF32X3, Spec, SpecError

DTYPE_HELP = ("what the layer's tensors hold: float32 (default), bfloat16 or float16 (input, parameters, output "
              "and gradients; the epilogue computes in fp32 either way)")
AUTOCAST_HELP = ("the float32 layer as it runs under torch.autocast(\"cuda\", dtype=...): bfloat16 or float16 operands "
                 "for the Linear, each later op in the type autocast gives it; the module runs under that autocast "
                 "only (default: without)")
PLANES = {"auto": None, "on": True, "off": False}  # --planes: plan()'s scaled_planes
PLANES_HELP = ("3xtf32's engine: on: two scaled fp16 planes an operand (3xFP16: wgmma_3xf16s on sm_90, "
               "mma_3xf16s on other sm_80+); off: the 3xTF32 engines (TF32 parts); auto (default): on")
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


def _precision(args) -> str:
    """--precision, else the default for the dtype (how fp32 operands multiply: only float32 layers have one)."""
    return args.precision or (default_precision() if args.dtype == FLOAT32.name else TF32X3)


def _arch(text):
    try:
        major, minor = (int(v) for v in text.split("."))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a compute capability like 9.0 or 8.6, got {text!r}")
    return major, minor


def _batches(text):
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated batch sizes like 256,1024, got {text!r}")
    if any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"batch sizes must be >= 0, got {text!r}")
    return values


def _visible_arch():
    try:
        import torch
        return tuple(torch.cuda.get_device_capability()) if torch.cuda.is_available() else None
    except Exception:  # no usable driver: plan for the portable tensor-core engine
        return None


def _visible_gpu():
    try:
        import torch
        return torch.cuda.get_device_name() if torch.cuda.is_available() else None
    except Exception:  # no usable driver: no GPU to tune for
        return None


def _add_layer_args(p, tuning_only=False):
    """The layer and how to plan it: shared by render, explain, tune."""
    p.add_argument("--hidden", type=int, required=True, help="hidden size (Linear out_features, GroupNorm channels)")
    p.add_argument("--groups", type=int, required=True, help="GroupNorm groups; must divide --hidden")
    p.add_argument("--input", type=int, default=None, help="Linear in_features (default: --hidden)")
    p.add_argument("--precision", choices=PRECISIONS, default=None, help=PRECISION_HELP)
    p.add_argument("--dtype", choices=ELEMENTS, default=FLOAT32.name, help=DTYPE_HELP)
    if tuning_only:
        return
    p.add_argument("--autocast", choices=AUTOCAST_TYPES, default="", help=AUTOCAST_HELP)
    p.add_argument("--eps", type=float, default=1e-5, help="GroupNorm eps default baked into the module")
    p.add_argument("--negative-slope", type=float, default=0.01, help="LeakyReLU slope default")
    p.add_argument("--dynamic-sizes", action="store_true",
                   help="pass input/hidden at run time instead of compiling them in (shares builds)")
    p.add_argument("--gpu", default=None,
                   help="take the tile from the tuning table entry of this GPU name (default: the visible GPU; "
                        "with none visible, the one GPU the table holds this layer for, if exactly one)")
    p.add_argument("--arch", default=None, type=_arch,
                   help="compute capability to plan for, e.g. 9.0 (wgmma engine) or 8.0 (mma.sync), when the "
                        "tuning table has no entry for --gpu (default: the visible GPU's; none visible: 8.0)")
    p.add_argument("--planes", choices=sorted(PLANES), default="auto", help=PLANES_HELP)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fusegen", description=__doc__.split("\n")[0].replace("Command line: ", ""))
    sub = parser.add_subparsers(dest="command", required=True)
    render = sub.add_parser("render", help="render a fused module for one layer size",
                            description="Render generated/<name>.py (and its explanation <name>.md) for "
                                        "Linear(input, hidden) -> GroupNorm(groups, hidden) -> LeakyReLU -> x + x.")
    _add_layer_args(render)
    render.add_argument("--out", default="generated", help="output directory (default: generated)")

    explain = sub.add_parser("explain", help="print what the module for one layer size does, and why",
                             description="Print the explanation render writes beside the module: the operators "
                                         "it replaces, how (engine, tiles, precision, GroupNorm strategy), the "
                                         "expected speedup (roofline, and the measured figure where "
                                         "benchmarks/results has one) and its limits.")
    _add_layer_args(explain)

    tune = sub.add_parser("tune", help="time candidate GEMM tiles on this GPU; store the winner for render",
                          description="Benchmark the candidate tile configurations for one layer size on the GPU "
                                      "in hand and store the fastest (forward+backward) in the tuning table "
                                      "(fusegen/plan/tuning.json) that render consults.")
    _add_layer_args(tune, tuning_only=True)
    tune.add_argument("--batch", type=int, default=1024, help="batch size to time (default: 1024)")
    tune.add_argument("--reps", type=int, default=10, help="timed calls per candidate (median)")
    tune.add_argument("--no-save", action="store_true", help="print the ranking, leave the table alone")
    tune.add_argument("--tiles", default=None, type=lambda v: [n for n in v.split(",") if n],
                      help="time only these candidates, by name (e.g. m256n128s4,m128n128s6)")

    check = sub.add_parser("check", help="build the module on this GPU and compare it with PyTorch (fp64 truth)",
                           description="Render and build the module for one layer size on the GPU in hand, run "
                                       "forward and backward on random inputs, and compare the output and all five "
                                       "gradients with fp64 and with the fp32 PyTorch reference; prints a table and "
                                       "exits non-zero on a miss.")
    _add_layer_args(check)
    check.add_argument("--batch", type=_batches, default=(1, 129, 1024),
                       help="comma-separated batch sizes (default 1,129,1024)")
    check.add_argument("--seeds", type=int, default=2, help="random draws per batch size (default 2)")

    bench = sub.add_parser("bench", help="time the module against PyTorch eager and torch.compile",
                           description="Time forward and forward+backward of the module, PyTorch eager and "
                                       "torch.compile (fp32, TF32 off) on the GPU in hand; prints a table, "
                                       "optionally writes JSON and a PNG plot.")
    _add_layer_args(bench)
    bench.add_argument("--batch", type=_batches, default=(1024,), help="comma-separated batch sizes (default 1024)")
    bench.add_argument("--reps", type=int, default=20, help="timed calls per point (median)")
    bench.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    bench.add_argument("--json", default=None, help="write the rows to this JSON file")
    bench.add_argument("--plot", default=None, help="write a PNG plot of time against batch size (needs matplotlib)")

    from_model = sub.add_parser("from-model", help="generate the fused module for a model file's layer",
                                description="Load a benchmark-style model file (Model, get_init_inputs, "
                                            "get_inputs), trace Model with torch.fx, match Linear -> stages, and "
                                            "write the fused module; a model outside the family is refused with "
                                            "the op, file and line.")
    from_model.add_argument("model_file", help="path to the model file")
    from_model.add_argument("--out", default="generated", help="output directory (default: generated)")
    from_model.add_argument("--precision", choices=PRECISIONS, default=None, help=PRECISION_HELP)
    from_model.add_argument("--dtype", choices=ELEMENTS, default=FLOAT32.name, help=DTYPE_HELP)
    from_model.add_argument("--autocast", choices=AUTOCAST_TYPES, default="", help=AUTOCAST_HELP)
    from_model.add_argument("--dynamic-sizes", action="store_true", help="as for render")
    from_model.add_argument("--gpu", default=None, help="as for render")
    from_model.add_argument("--arch", default=None, type=_arch, help="as for render")
    from_model.add_argument("--planes", choices=sorted(PLANES), default="auto", help="as for render")
    from_model.add_argument("--bench", action="store_true",
                            help="then time the module against the file's Model, eager and torch.compile (a table)")
    from_model.add_argument("--batch", type=_batches, default=None,
                            help="batch sizes for --bench (default: the batch of the file's get_inputs())")
    from_model.add_argument("--reps", type=int, default=20, help="timed calls per point for --bench (median)")

    sub.add_parser("show-config", help="print the cache directory, compiler, GPU, target architectures, versions",
                   description="Print where builds are cached, which nvcc and GPU were found, which architectures "
                               "a module would be built for, and the versions involved.")
    sub.add_parser("clear-cache", help="delete fusegen's cached builds",
                   description="Delete the compiled kernels fusegen cached (FUSEGEN_CACHE_DIR, default "
                               "~/.cache/fusegen); the next forward of a module rebuilds them.")
    return parser


def _spec(args, command):
    try:
        extra = dict(eps=args.eps, negative_slope=args.negative_slope) if hasattr(args, "eps") else {}
        return Spec(input_size=args.hidden if args.input is None else args.input, hidden_size=args.hidden,
                    num_groups=args.groups, precision=_precision(args), dtype=args.dtype,
                    autocast=getattr(args, "autocast", ""), **extra)
    except SpecError as e:
        print(f"fusegen {command}: {e}", file=sys.stderr)
        return None


def _plan(args, spec, feeds_layer=False):
    gpu = args.gpu or _visible_gpu()
    if gpu is None:  # rendering for another machine: the table's only tuned GPU for this layer, if one
        from ..plan.tuning import tuned_gpus
        tuned = tuned_gpus(spec)
        gpu = tuned[0] if len(tuned) == 1 else None
    return plan(spec, fixed_sizes=not args.dynamic_sizes, gpu=gpu, arch=args.arch or _visible_arch(),
                feeds_layer=feeds_layer, scaled_planes=PLANES[getattr(args, "planes", "auto")])


def cache_root() -> pathlib.Path:
    """The cache directory the build runtime uses (not created here)."""
    return pathlib.Path(os.environ.get("FUSEGEN_CACHE_DIR") or "~/.cache/fusegen").expanduser().absolute()


def _cache_builds(root):
    """(number of cached builds, bytes) under root: builds sit at root/v<runtime>/<torch tag>/<extension>."""
    builds, size = 0, 0
    for version in root.glob("v*"):
        for ext in version.glob("*/*"):
            if ext.is_dir() and not ext.name.startswith("."):
                builds += 1
        for f in version.rglob("*"):
            if f.is_file():
                size += f.stat().st_size
    return builds, size


def show_config() -> int:
    from .. import __version__
    from ..codegen import TEMPLATE_DIR
    from ..runtime import jit
    import platform
    import torch

    print(f"fusegen {__version__} (templates: {TEMPLATE_DIR})")
    print(f"python {platform.python_version()}, torch {torch.__version__} (built for CUDA {torch.version.cuda})")
    nvcc, looked = jit._find_nvcc()
    print(f"nvcc: {nvcc}" if nvcc else f"nvcc: not found (looked at: {', '.join(looked)})")
    gpu, arch = _visible_gpu(), _visible_arch()
    print(f"GPU: {gpu} (sm_{arch[0]}{arch[1]})" if gpu else "GPU: none visible")
    env = os.environ.get("TORCH_CUDA_ARCH_LIST")
    try:
        flags = jit._cuda_arch_flags(env, arch)
        print(f"target architectures: {' '.join(flags)} (from {'TORCH_CUDA_ARCH_LIST' if env else 'the GPU'}); "
              f"wgmma modules: -gencode=arch=compute_90a,code=sm_90a")
    except jit.BuildError as e:
        print(f"target architectures: none ({e})")
    root = cache_root()
    builds, size = _cache_builds(root) if root.is_dir() else (0, 0)
    origin = "FUSEGEN_CACHE_DIR" if os.environ.get("FUSEGEN_CACHE_DIR") else "default; set FUSEGEN_CACHE_DIR"
    print(f"cache: {root} ({origin}): {builds} builds, {size / 1e6:.1f} MB")
    from ..plan.tuning import TABLE, load_table
    print(f"tuning table: {TABLE} (GPUs: {', '.join(sorted(load_table())) or 'none'})")
    return 0


def clear_cache() -> int:
    root = cache_root()
    if not root.is_dir():
        print(f"fusegen clear-cache: nothing to clear ({root} does not exist)")
        return 0
    builds, size = _cache_builds(root)
    try:
        for version in root.glob("v*"):  # only the runtime's own layout; anything else there is not ours
            shutil.rmtree(version)
    except OSError as e:
        print(f"fusegen clear-cache: cannot delete {e.filename}: {e.strerror}", file=sys.stderr)
        return 1
    print(f"removed {builds} cached builds ({size / 1e6:.1f} MB) from {root}")
    return 0


def _measure(args, spec) -> int:
    from ..runtime.jit import BuildError
    from . import measure
    try:
        p = _plan(args, spec)
        if args.command == "check":
            misses = measure.check(p, batches=args.batch, seeds=tuple(range(args.seeds)))
            if misses:
                print(f"fusegen check: {len(misses)} miss(es); the first: {misses[0]}", file=sys.stderr)
                return 1
            return 0
        if args.plot:  # fail before the timing, not after
            import importlib.util
            if importlib.util.find_spec("matplotlib") is None:
                raise measure.MeasureError("--plot needs matplotlib (pip install matplotlib)")
        rows = measure.bench(p, batches=args.batch, reps=args.reps, with_compile=not args.no_compile)
        print(measure.bench_table(rows))
        if args.json:
            measure.write_json(rows, p, args.json)
        if args.plot:
            measure.write_plot(rows, p, args.plot)
        return 0
    except (measure.MeasureError, BuildError, ValueError) as e:
        print(f"fusegen {args.command}: {str(e).splitlines()[0]}", file=sys.stderr)
        return 1


def from_model(args) -> int:
    from ..codegen import write_layers
    from ..frontend import ModelError, model_specs
    try:
        specs, chains = model_specs(args.model_file, precision=_precision(args))
        plans = tuple(_plan(args, dataclasses.replace(s, dtype=args.dtype, autocast=args.autocast),
                            feeds_layer=k < len(specs) - 1) for k, s in enumerate(specs))
    except (ModelError, SpecError) as e:
        print(f"fusegen from-model: {e}", file=sys.stderr)
        return 2
    path = write_layers(plans, args.out) if len(plans) > 1 else write_module(plans[0], args.out)
    print(path)
    for k, (chain, p) in enumerate(zip(chains, plans)):
        which = f"layer {k}" if len(plans) > 1 else "layer"
        print(f"{which}: {chain.describe()} ({chain.input_size} -> {chain.hidden_size})")
        print(f"plan: {p.summary}")
    if args.bench:
        from ..frontend import load_model_file
        from ..runtime.jit import BuildError
        from . import measure
        model_file = load_model_file(args.model_file)
        batches = args.batch or (model_file.get_inputs()[0].shape[0],)
        try:
            rows = measure.bench(plans, batches=batches, reps=args.reps, reference_cls=model_file.Model,
                                 init=model_file.get_init_inputs())
        except (measure.MeasureError, BuildError, ValueError) as e:
            print(f"fusegen from-model: {str(e).splitlines()[0]}", file=sys.stderr)
            return 1
        print(measure.bench_table(rows))
    return 0


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "show-config":
        return show_config()
    if args.command == "clear-cache":
        return clear_cache()
    if args.command == "from-model":
        return from_model(args)
    spec = _spec(args, args.command)
    if spec is None:
        return 2
    if args.command in ("render", "explain"):
        try:
            p = _plan(args, spec)
        except SpecError as e:  # a spec no plan fits (e.g. a dtype without its engines)
            print(f"fusegen {args.command}: {e}", file=sys.stderr)
            return 2
        if args.command == "render":
            path = write_module(p, args.out)
            print(path)
            print(f"plan: {p.summary}")
        else:
            from ..codegen.explain import explain
            print(explain(p))
    elif args.command in ("check", "bench"):
        return _measure(args, spec)
    elif args.command == "tune":
        from .tune import tune
        try:
            gpu, rows = tune(spec, args.batch, reps=args.reps, names=args.tiles, save=not args.no_save)
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
