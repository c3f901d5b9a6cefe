"""`fusegen check` and `fusegen bench`: build a plan's module on the GPU in hand and hold it against PyTorch."""
import json
import os
import pathlib
import sys
import tempfile
import time

from ..codegen import write_layers
from ..codegen.render import _atomic_write, write_module
from .accuracy import NAMES, ReferenceLayer, compare
from .tune import _import, _progress, host_layer, time_layer


class MeasureError(RuntimeError):
    """What check or bench needs is not there (a GPU, matplotlib for --plot)."""


def _require_gpu():
    import torch
    if not torch.cuda.is_available():
        raise MeasureError("needs a CUDA GPU, and none is visible")


def load_module(plan, out_dir=None, log=sys.stderr):
    """Render the plan's module (a tuple of several plans: the layers' composite module) into out_dir (default: a
    temporary directory), import it, build its kernels."""
    import torch
    out_dir = out_dir or tempfile.mkdtemp(prefix="fusegen-")
    several = isinstance(plan, (tuple, list)) and len(plan) > 1
    path = write_layers(plan, out_dir) if several else write_module(_one(plan), out_dir)
    module = _import(path)
    start = time.time()
    module._kernels(torch.device("cuda", torch.cuda.current_device()))
    log.write(f"module {path.stem} ready in {time.time() - start:.1f} s\n")
    return module


def _one(plan):
    return plan[0] if isinstance(plan, (tuple, list)) else plan


def check(plan, batches=(1, 129, 1024), seeds=(0,), log=sys.stderr, out=sys.stdout):
    """Forward and all five gradients against fp64 (and the fp32 reference) for each batch and seed; prints a
    table; returns the list of misses (empty: all passed)."""
    _require_gpu()
    module = load_module(plan, log=log)
    spec = plan.spec
    misses, rows = [], []
    for batch in batches:
        for seed in seeds:
            if batch * spec.group_width == 1:
                continue  # GroupNorm refuses one value a group (the reference too)
            report, problems = compare(module.ModelNew, ReferenceLayer, spec, batch, seed)
            rows.append((batch, seed, report, problems))
            misses += problems
    out.write(f"fusegen check: {plan.module_name} ({plan.summary})\n")
    out.write(f"{'batch':>6} {'seed':>5} " + " ".join(f"{n:>15}" for n in NAMES) + "  result\n")
    for batch, seed, report, problems in rows:
        cells = " ".join(f"{report[n][0]:>7.1e}/{report[n][1]:<7.1e}" for n in NAMES)
        out.write(f"{batch:>6} {seed:>5} {cells}  {'MISS' if problems else 'ok'}\n")
    out.write("cells: our rel. error vs fp64 / the fp32 PyTorch reference's; bar: 4x the reference's "
              f"({'TF32: its documented tolerance' if plan.precision == 'tf32' else 'and output allclose 1e-4'})\n")
    for problem in misses:
        out.write(f"MISS: {problem}\n")
    return misses


def bench(plan, batches=(1024,), reps=20, with_compile=True, log=sys.stderr, reference_cls=ReferenceLayer, init=None):
    """Median forward and forward+backward times of the module, PyTorch eager and torch.compile (fp32, TF32 off)
    at each batch size; returns the rows. reference_cls and init: a model file's Model and its constructor
    arguments (default: the headline layer of plan's sizes). plan may be a tuple: a model file's layers."""
    import torch
    _require_gpu()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    module = load_module(plan, log=log)
    plans = tuple(plan) if isinstance(plan, (tuple, list)) else (plan,)
    plan, s = plans[0], plans[0].spec
    macs = sum(p.spec.input_size * p.spec.hidden_size for p in plans)  # a row's multiply-adds, every GEMM
    init = tuple(init) if init is not None else (s.input_size, s.hidden_size, s.num_groups)
    torch.manual_seed(0)
    ref = reference_cls(*init).cuda()
    torch.manual_seed(0)
    models = {"fusegen " + plan.precision: module.ModelNew(*init).cuda(), "pytorch eager": ref}
    if with_compile:
        models["torch.compile"] = torch.compile(reference_cls(*init).cuda())
    rows, total, done = [], len(batches) * len(models), 0
    for batch in batches:
        x = torch.rand(batch, s.input_size, device="cuda")
        with torch.no_grad():
            g = torch.randn(ref(x).shape, device="cuda")  # (batch, hidden), or one value a row
        for name, model in models.items():
            _progress(done, total, f"batch {batch}: {name}", log)
            f_ms, fb_ms = time_layer(model, x, g, reps)
            f_us, fb_us = host_layer(model, x, g)
            rows.append({"impl": name, "batch": batch, "forward_ms": round(f_ms, 4),
                         "forward_backward_ms": round(fb_ms, 4), "host_forward_us": round(f_us, 1),
                         "host_forward_backward_us": round(fb_us, 1),
                         "forward_tflops": round(2 * batch * macs / f_ms / 1e9, 1)})
            done += 1
    _progress(done, total, "done", log)
    return rows


def bench_table(rows):
    eager = {r["batch"]: r for r in rows if r["impl"] == "pytorch eager"}
    lines = [f"{'batch':>6} {'implementation':<18} {'forward ms':>10} {'fwd+bwd ms':>10} {'vs eager':>14} "
             f"{'host us/call fwd, fwd+bwd':>26}"]
    for r in rows:
        e = eager[r["batch"]]
        speed = f"{e['forward_ms'] / r['forward_ms']:>6.2f}x/{e['forward_backward_ms'] / r['forward_backward_ms']:.2f}x"
        lines.append(f"{r['batch']:>6} {r['impl']:<18} {r['forward_ms']:>10.3f} {r['forward_backward_ms']:>10.3f} "
                     f"{speed} {r['host_forward_us']:>13.1f}, {r['host_forward_backward_us']:.1f}")
    lines.append("host us/call: CPU time to issue one call (Python, checks, dispatch, allocation, launches), the "
                 "GPU running behind")
    return "\n".join(lines)


def write_json(rows, plan, path):
    import torch
    data = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "module": plan.module_name,
            "plan": plan.summary, "rows": rows}
    _atomic_write(pathlib.Path(path), json.dumps(data, indent=1) + "\n")


def write_plot(rows, plan, path):
    """Forward and forward+backward time against batch size, one line per implementation (needs matplotlib)."""
    try:
        import matplotlib
    except ImportError:
        raise MeasureError("--plot needs matplotlib (pip install matplotlib); the table and --json need nothing")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, key, title in ((axes[0], "forward_ms", "forward"), (axes[1], "forward_backward_ms", "forward+backward")):
        for impl in dict.fromkeys(r["impl"] for r in rows):
            pts = [(r["batch"], r[key]) for r in rows if r["impl"] == impl]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=impl)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("batch")
        ax.set_ylabel("ms")
        ax.set_title(title)
        ax.legend()
    fig.suptitle(plan.module_name)
    fig.tight_layout()
    path = pathlib.Path(path)
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=120)
    os.replace(tmp, path)  # a reader never sees half a picture
