"""Time the headline layer: fusegen's modules against PyTorch eager and torch.compile (fp32, TF32 off).

fusegen 3xtf32 is the committed module (generated/); the other precisions are rendered the same way (the
tuning table's tile for this GPU). Forward = one call under no_grad; forward+backward = y = model(x);
y.backward(g). CUDA events, median of --reps timed calls after warm-up; each GEMM call is also profiled alone: its
GEMM kernel's TFLOP/s against its engine's ceiling, and the per-call cost of the operands' planes (x, dz). Writes benchmarks/results/<gpu>.json and <gpu>.md (the table the README shows).

    PYTHONPATH=. python benchmarks/bench.py [--batch 1024] [--reps 50] [--precisions 3xtf32,tf32,fp32]
"""
import argparse
import copy
import dataclasses
import datetime
import json
import pathlib
import re
import sys
import tempfile

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

import fusegen  # noqa: E402
from fusegen.tools.tune import time_layer  # noqa: E402
from helpers import HEADLINE, import_file, reference_namespace, rel_err  # noqa: E402
from kernel_times import kernel_totals  # noqa: E402

GEMM_FLOP = 2 * 1024 * 8192 * 8192  # one headline GEMM
CEILING_TFLOPS = {"3xtf32": 165, "tf32": 495, "fp32": 67}  # h200_baselines.md / the datasheet
FP16_DENSE_TFLOPS = 989  # H100 / H200 SXM datasheet: what the scaled fp16 planes' wgmma engines run at


def ceiling(precision: str, mainloop: str) -> float:
    """TFLOP/s of the fp32 product an engine can reach: its tensor cores' peak over its products a multiply-add."""
    if mainloop.endswith("f16s"):  # fp16 planes: three products (3xfp16) or one (tf32)
        return round(FP16_DENSE_TFLOPS / (3 if "3x" in mainloop else 1))
    return CEILING_TFLOPS[precision]


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
    parser.add_argument("--precisions", default="3xtf32,tf32,fp32", help="fusegen precisions to time")
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results"))
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    spec = HEADLINE
    ns = reference_namespace()
    path = headline_module()
    module = import_file(path, poison=False)  # (timed: no NaN fills)
    init = (spec.input_size, spec.hidden_size, spec.num_groups)
    torch.manual_seed(0)
    ref = ns["Model"](*init).cuda()
    gpu = torch.cuda.get_device_name()
    models, kernels = {}, {}
    for precision in args.precisions.split(","):
        if precision == "3xtf32":
            m = module
        else:  # rendered as `fusegen render --precision P` would on this GPU
            p = fusegen.plan(dataclasses.replace(spec, precision=precision), gpu=gpu,
                             arch=torch.cuda.get_device_capability())
            m = import_file(fusegen.write_module(p, tempfile.mkdtemp()), poison=False)
        torch.manual_seed(0)
        models[f"fusegen {precision}"] = m.ModelNew(*init).cuda()
        kernels[f"fusegen {precision}"] = (m, precision)
    models["pytorch eager"] = ref
    if not args.no_compile:
        models["torch.compile"] = torch.compile(copy.deepcopy(ref))
    ref64 = copy.deepcopy(ref).double()

    x = torch.rand(args.batch, spec.input_size, device="cuda")
    g = torch.randn(args.batch, spec.hidden_size, device="cuda")
    with torch.no_grad():
        truth = ref64(x.double())

    rows = []
    for name, model in models.items():
        with torch.no_grad():
            err = rel_err(model(x), truth)
        f_ms, fb_ms = time_layer(model, x, g, args.reps)
        flop_scale = args.batch / 1024
        rows.append({"impl": name, "forward_ms": round(f_ms, 4), "forward_backward_ms": round(fb_ms, 4),
                     "forward_gemm_tflops": round(GEMM_FLOP * flop_scale / f_ms / 1e9, 1),
                     "forward_backward_gemm_tflops": round(3 * GEMM_FLOP * flop_scale / fb_ms / 1e9, 1),
                     "out_rel_err_vs_fp64": float(f"{err:.3g}")})
        if name in kernels:
            m, precision = kernels[name]
            rows[-1]["gemm_tflops"], rows[-1]["operand_us"], rows[-1]["kernel_us"] = gemm_tflops(
                m, precision, model, x, g, args.reps)
            rows[-1]["engine"], rows[-1]["ceiling_tflops"] = m.MAINLOOP, ceiling(precision, m.MAINLOOP)
        print(f"{name:>18}: forward {f_ms:.3f} ms, forward+backward {fb_ms:.3f} ms, rel. err {err:.2g}"
              + (f", GEMM TFLOP/s {rows[-1]['gemm_tflops']}" if name in kernels else ""), flush=True)

    slug = re.sub(r"[^a-z0-9]+", "-", gpu.lower()).strip("-")
    result = {"gpu": gpu, "torch": torch.__version__, "cuda": torch.version.cuda, "fusegen": fusegen.__version__,
              "module": path.name, "plan": module.__doc__.split("Plan: ")[1].split("\n")[0], "batch": args.batch,
              "input_size": spec.input_size, "hidden_size": spec.hidden_size, "num_groups": spec.num_groups,
              "reps": args.reps, "date": datetime.date.today().isoformat(), "rows": rows}
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{slug}.json").write_text(json.dumps(result, indent=2) + "\n")
    base = {r["impl"]: r for r in rows}["pytorch eager"]
    compiled = {r["impl"]: r for r in rows}.get("torch.compile", base)
    lines = [f"Headline layer (batch {args.batch}, input {spec.input_size}, hidden {spec.hidden_size}, "
             f"{spec.num_groups} groups), fp32, {gpu}, torch {torch.__version__}, median of {args.reps}.", "",
             "| implementation | forward ms | fwd+bwd ms | speedup vs eager fwd / fwd+bwd | vs torch.compile | layer TFLOP/s fwd / fwd+bwd | out rel. err vs fp64 |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['impl']} | {r['forward_ms']:.3f} | {r['forward_backward_ms']:.3f} | "
                     f"{base['forward_ms'] / r['forward_ms']:.2f}x / {base['forward_backward_ms'] / r['forward_backward_ms']:.2f}x | "
                     f"{compiled['forward_ms'] / r['forward_ms']:.2f}x / {compiled['forward_backward_ms'] / r['forward_backward_ms']:.2f}x | "
                     f"{r['forward_gemm_tflops']} / {r['forward_backward_gemm_tflops']} | {r['out_rel_err_vs_fp64']:.2g} |")
    lines += ["", "Each fusegen GEMM kernel's own time (torch.profiler) as TFLOP/s of the fp32 product, against its "
              "engine's ceiling; the other kernels of each call (x's and dz's planes or splits, made per call) in "
              "microseconds:", "",
              "| module | engine | forward GEMM + GroupNorm | grad_input GEMM | grad_weight GEMM | ceiling | per-call "
              "operand kernels us (forward / grad_input / grad_weight) |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        if "gemm_tflops" in r:
            t, prep = r["gemm_tflops"], r["operand_us"]
            lines.append(f"| {r['impl']} | {r['engine']} | {t['forward']} | {t['grad_input']} | {t['grad_weight']} | "
                         f"{r['ceiling_tflops']} | {prep['forward']} / {prep['grad_input']} / {prep['grad_weight']} |")
    (out / f"{slug}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def call_kernels(fn, reps):
    """kernel name -> microseconds a call of fn, by torch.profiler (after a warm-up call)."""
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    return {name: us for name, (us, _) in kernel_totals(prof.key_averages(), reps).items()}


def split_gemm(times):
    """(the GEMM kernel's microseconds: the call's longest kernel, the others' together) of call_kernels' dict."""
    gemm = max(times.values(), default=0.0)
    return gemm, sum(times.values()) - gemm


def gemm_tflops(module, precision, model, x, g, reps):
    """Each of the module's three GEMM calls through its extension (no autograd around it), profiled: ({call:
    TFLOP/s of its GEMM kernel alone}, {call: microseconds of its other kernels, the operands' planes or splits},
    {call: {kernel: microseconds}})."""
    k = module._kernels(x.device)
    stream = torch.cuda.current_stream().cuda_stream
    batch, hidden, inp = x.shape[0], model.fc.weight.shape[0], x.shape[1]
    out, z = torch.empty(batch, hidden, device="cuda"), torch.empty(batch, hidden, device="cuda")
    stats = [torch.empty(batch, model.gn.num_groups, device="cuda", dtype=torch.float64)
             for _ in range(2)]
    partials = torch.empty(batch * model.gn.num_groups * max(1, module.PARTIAL_SLOTS) * 2, device="cuda",
                           dtype=torch.float64) if module.PARTIAL_SLOTS else x.new_empty(0)
    dx, dw, none = torch.empty_like(x), torch.empty_like(model.fc.weight), x.new_empty(0)
    w = model.fc.weight.detach()
    calls = {
        "forward": lambda: k.forward(x, w, model.fc.bias.detach(), model.gn.weight.detach(), model.gn.bias.detach(),
                                     [], [0.01], out, z, stats[0], stats[1], partials, 1e-5, stream),
        "grad_input": lambda: k.grad_input(g, none, w, dx, stream),
        "grad_weight": lambda: k.grad_weight(g, none, x, dw, stream),
    }
    flop = 2 * batch * hidden * inp
    tflops, operand_us, kernel_us = {}, {}, {}
    for name, fn in calls.items():
        times = call_kernels(fn, reps)
        gemm_us, other_us = split_gemm(times)
        tflops[name], operand_us[name] = round(flop / gemm_us / 1e6, 1), round(other_us, 1)
        kernel_us[name] = {kernel[:120]: round(us, 2) for kernel, us in sorted(times.items(), key=lambda kv: -kv[1])}
    return tflops, operand_us, kernel_us


if __name__ == "__main__":
    main()
