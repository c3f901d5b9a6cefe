"""Time the headline layer: fusegen's module against PyTorch eager and torch.compile (fp32, TF32 off).

Forward = one call under no_grad; forward+backward = y = model(x); y.backward(g). CUDA events, median of
--reps timed calls after warm-up. Writes benchmarks/results/<gpu>.json and <gpu>.md (the table the README shows).

    PYTHONPATH=. python benchmarks/bench.py [--batch 1024] [--reps 50]
"""
import argparse
import copy
import datetime
import json
import pathlib
import re
import statistics
import sys

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

import fusegen  # noqa: E402
from helpers import HEADLINE, import_file, reference_namespace, rel_err  # noqa: E402

GEMM_FLOP = 2 * 1024 * 8192 * 8192  # one headline GEMM


def time_ms(fn, reps, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def headline_module():
    files = sorted((REPO / "generated").glob(f"lin_gn_lrelu2_i{HEADLINE.input_size}_h{HEADLINE.hidden_size}"
                                             f"_g{HEADLINE.num_groups}_*.py"))
    if len(files) != 1:
        raise SystemExit(f"expected one committed headline module in generated/, found {files}")
    return files[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results"))
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    spec = HEADLINE
    ns = reference_namespace()
    path = headline_module()
    module = import_file(path)
    init = (spec.input_size, spec.hidden_size, spec.num_groups)
    torch.manual_seed(0)
    ref = ns["Model"](*init).cuda()
    torch.manual_seed(0)
    ours = module.ModelNew(*init).cuda()
    models = {"fusegen": ours, "pytorch eager": ref}
    if not args.no_compile:
        models["torch.compile"] = torch.compile(copy.deepcopy(ref))
    ref64 = copy.deepcopy(ref).double()

    x = torch.rand(args.batch, spec.input_size, device="cuda")
    g = torch.randn(args.batch, spec.hidden_size, device="cuda")
    with torch.no_grad():
        truth = ref64(x.double())

    rows = []
    for name, model in models.items():
        xg = x.clone().requires_grad_()

        def fwd():
            with torch.no_grad():
                model(x)

        def fwd_bwd():
            model(xg).backward(g)

        with torch.no_grad():
            err = rel_err(model(x), truth)
        f_ms, fb_ms = time_ms(fwd, args.reps), time_ms(fwd_bwd, args.reps)
        flop_scale = args.batch / 1024
        rows.append({"impl": name, "forward_ms": round(f_ms, 4), "forward_backward_ms": round(fb_ms, 4),
                     "forward_gemm_tflops": round(GEMM_FLOP * flop_scale / f_ms / 1e9, 1),
                     "forward_backward_gemm_tflops": round(3 * GEMM_FLOP * flop_scale / fb_ms / 1e9, 1),
                     "out_rel_err_vs_fp64": float(f"{err:.3g}")})
        print(f"{name:>14}: forward {f_ms:.3f} ms, forward+backward {fb_ms:.3f} ms, rel. err {err:.2g}", flush=True)

    gpu = torch.cuda.get_device_name()
    slug = re.sub(r"[^a-z0-9]+", "-", gpu.lower()).strip("-")
    result = {"gpu": gpu, "torch": torch.__version__, "cuda": torch.version.cuda, "fusegen": fusegen.__version__,
              "module": path.name, "plan": fusegen.plan(spec).summary, "batch": args.batch,
              "input_size": spec.input_size, "hidden_size": spec.hidden_size, "num_groups": spec.num_groups,
              "reps": args.reps, "date": datetime.date.today().isoformat(), "rows": rows}
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{slug}.json").write_text(json.dumps(result, indent=2) + "\n")
    base = {r["impl"]: r for r in rows}["pytorch eager"]
    lines = [f"Headline layer (batch {args.batch}, input {spec.input_size}, hidden {spec.hidden_size}, "
             f"{spec.num_groups} groups), fp32, {gpu}, torch {torch.__version__}, median of {args.reps}.", "",
             "| implementation | forward ms | fwd+bwd ms | speedup fwd / fwd+bwd vs eager | GEMM TFLOP/s fwd / fwd+bwd | out rel. err vs fp64 |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['impl']} | {r['forward_ms']:.3f} | {r['forward_backward_ms']:.3f} | "
                     f"{base['forward_ms'] / r['forward_ms']:.2f}x / {base['forward_backward_ms'] / r['forward_backward_ms']:.2f}x | "
                     f"{r['forward_gemm_tflops']} / {r['forward_backward_gemm_tflops']} | {r['out_rel_err_vs_fp64']:.2g} |")
    (out / f"{slug}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
