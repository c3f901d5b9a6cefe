"""The headline chain (Linear -> GroupNorm -> LeakyReLU -> x + x) over a grid of layer sizes, fusegen against
PyTorch eager (and torch.compile with --compile): where fusegen wins, where it loses, and by how much.

Sizes: batch in --batches x (input = hidden) in --sizes, groups = hidden / 32. One module per size (fixed
sizes, the tuning table's tile for this GPU), all built in parallel first. Each point: the forward under no_grad
and forward+backward (y = model(x); y.backward(g)), CUDA events around --inner calls back to back (as a training
loop runs them: host overhead counts where the host is the bound, and the GPU does not idle and clock down between
calls), median of --reps such samples; plus host microseconds per call (the CPU time to issue one).
torch.compile runs as a user gets it: default mode, recompiling once a new batch makes it dynamic.

Writes <out>/sweep-<gpu>.json, .md (the table and the summary against the targets) and .png (heat maps of the
speedups).

    PYTHONPATH=. python benchmarks/sweep.py --out benchmarks/results [--compile] [--reps 20]
"""
import argparse
import json
import pathlib
import statistics
import sys
import tempfile
import time

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import fusegen  # noqa: E402
from fusegen.codegen import write_module  # noqa: E402
from fusegen.tools.accuracy import ReferenceLayer  # noqa: E402
from fusegen.tools.tune import _build_all, _import, host_layer, time_layer  # noqa: E402

BATCHES = (1, 16, 64, 256, 1024, 4096)
SIZES = (512, 1024, 2048, 4096, 8192)


def _ints(text):
    return tuple(int(v) for v in text.split(","))


def sweep_plan(size):
    """The plan of a sweep point on the visible GPU: the headline chain at input = hidden = size, groups = size /
    32, the tuning table's tile for this GPU (else the heuristic for its architecture)."""
    return fusegen.plan(fusegen.Spec(size, size, size // 32), gpu=torch.cuda.get_device_name(),
                        arch=torch.cuda.get_device_capability())


def build_modules(sizes, log):
    """size -> imported module of sweep_plan(size)."""
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="fusegen-sweep-"))
    paths = {}
    for size in sizes:
        plan = sweep_plan(size)
        paths[size] = write_module(plan, workdir)
        log.write(f"size {size}: {plan.module_name}: {plan.summary}\n")
    start = time.time()
    failed = _build_all(list(paths.values()), len(paths))
    if failed:
        raise SystemExit("builds failed:\n" + "\n".join(f"{p}: {err}" for p, err in failed.items()))
    log.write(f"built {len(paths)} modules in {time.time() - start:.0f} s\n")
    return {size: _import(path) for size, path in paths.items()}


def measure(modules, batches, reps, inner, with_compile, log):
    rows = []
    for size, module in modules.items():
        groups = size // 32
        torch.manual_seed(0)
        models = {"fusegen": module.ModelNew(size, size, groups).cuda()}
        torch.manual_seed(0)
        models["eager"] = ReferenceLayer(size, size, groups).cuda()
        if with_compile:
            torch.manual_seed(0)
            models["torch.compile"] = torch.compile(ReferenceLayer(size, size, groups).cuda())
        for batch in batches:
            torch.manual_seed(batch)
            x = torch.randn(batch, size, device="cuda")
            g = torch.randn(batch, size, device="cuda")
            for name, model in models.items():
                f_ms, fb_ms = time_layer(model, x, g, reps, inner)
                f_us, fb_us = host_layer(model, x, g)
                rows.append({"impl": name, "batch": batch, "size": size, "forward_ms": round(f_ms, 4),
                             "forward_backward_ms": round(fb_ms, 4), "host_forward_us": round(f_us, 1),
                             "host_forward_backward_us": round(fb_us, 1)})
                log.write(f"batch {batch:>5} size {size:>5} {name:<14} {f_ms:8.4f} / {fb_ms:8.4f} ms, host "
                          f"{f_us:6.1f} / {fb_us:6.1f} us\n")
    return rows


def speedups(rows, versus):
    """{(batch, size): (forward speedup, forward+backward speedup)} of fusegen over `versus`."""
    by = {(r["impl"], r["batch"], r["size"]): r for r in rows}
    out = {}
    for (impl, batch, size), r in by.items():
        other = by.get((versus, batch, size))
        if impl == "fusegen" and other:
            out[(batch, size)] = (other["forward_ms"] / r["forward_ms"],
                                  other["forward_backward_ms"] / r["forward_backward_ms"])
    return out


def summary(rows):
    """Lines judging the sweep against issue 14's targets (vs eager)."""
    sp = speedups(rows, "eager")
    fwd = [v[0] for v in sp.values()]
    both = [v[1] for v in sp.values()]
    small = [v for (b, s), v in sp.items() if b <= 256 and s <= 2048]
    worst = min(sp.items(), key=lambda kv: min(kv[1]))
    med = statistics.median
    lines = [
        f"- points: {len(sp)}; fusegen at least as fast as eager at {sum(min(v) >= 1 for v in sp.values())} of them "
        f"(forward and forward+backward); the slowest point: batch {worst[0][0]}, size {worst[0][1]}: "
        f"{worst[1][0]:.2f}x / {worst[1][1]:.2f}x",
        f"- median speedup over eager: forward {med(fwd):.2f}x (target >= 1.5x), forward+backward {med(both):.2f}x",
    ]
    if small:
        lines.append(f"- batch <= 256 and size <= 2048 ({len(small)} points): median forward "
                     f"{med([v[0] for v in small]):.2f}x, min {min(v[0] for v in small):.2f}x; forward+backward "
                     f"median {med([v[1] for v in small]):.2f}x, min {min(v[1] for v in small):.2f}x (target >= 2x)")
    if any(r["impl"] == "torch.compile" for r in rows):
        spc = speedups(rows, "torch.compile")
        lines.append(f"- median speedup over torch.compile: forward {med(v[0] for v in spc.values()):.2f}x, "
                     f"forward+backward {med(v[1] for v in spc.values()):.2f}x")
    host = [r for r in rows if r["impl"] == "fusegen"]
    eager = [r for r in rows if r["impl"] == "eager"]
    lines.append(f"- fusegen host time per call: forward median {med(r['host_forward_us'] for r in host):.1f} us, "
                 f"forward+backward median {med(r['host_forward_backward_us'] for r in host):.1f} us "
                 f"(eager: {med(r['host_forward_us'] for r in eager):.1f} / "
                 f"{med(r['host_forward_backward_us'] for r in eager):.1f} us)")
    return lines


def table(rows):
    impls = list(dict.fromkeys(r["impl"] for r in rows))
    by = {(r["impl"], r["batch"], r["size"]): r for r in rows}
    head = "| batch | size | " + " | ".join(f"{i} fwd / fwd+bwd ms" for i in impls) + \
        " | vs eager | host us fwd / fwd+bwd (fusegen) |"
    lines = [head, "|" + "---|" * (len(impls) + 4)]
    sp = speedups(rows, "eager")
    for batch, size in sorted({(r["batch"], r["size"]) for r in rows}):
        cells = [f"{by[(i, batch, size)]['forward_ms']:.4f} / {by[(i, batch, size)]['forward_backward_ms']:.4f}"
                 for i in impls]
        f = by[("fusegen", batch, size)]
        lines.append(f"| {batch} | {size} | " + " | ".join(cells) +
                     f" | {sp[(batch, size)][0]:.2f}x / {sp[(batch, size)][1]:.2f}x | "
                     f"{f['host_forward_us']:.0f} / {f['host_forward_backward_us']:.0f} |")
    return lines


def heat_map(rows, path, gpu):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    versus = [v for v in ("eager", "torch.compile") if any(r["impl"] == v for r in rows)]
    batches = sorted({r["batch"] for r in rows})
    sizes = sorted({r["size"] for r in rows})
    fig, axes = plt.subplots(len(versus), 2, figsize=(10, 4 * len(versus)), squeeze=False)
    for row, v in enumerate(versus):
        sp = speedups(rows, v)
        for col, title in enumerate(("forward", "forward+backward")):
            ax = axes[row][col]
            grid = [[sp[(b, s)][col] for s in sizes] for b in batches]
            im = ax.imshow(grid, cmap="RdYlGn", vmin=0, vmax=3, origin="lower")
            for i in range(len(batches)):
                for j in range(len(sizes)):
                    ax.text(j, i, f"{grid[i][j]:.2f}", ha="center", va="center", fontsize=8)
            ax.set_xticks(range(len(sizes)), [str(s) for s in sizes])
            ax.set_yticks(range(len(batches)), [str(b) for b in batches])
            ax.set_xlabel("input = hidden")
            ax.set_ylabel("batch")
            ax.set_title(f"{title}: speedup over {v}")
            fig.colorbar(im, ax=ax)
    fig.suptitle(f"fusegen, Linear -> GroupNorm(hidden/32) -> LeakyReLU -> x + x, {gpu}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="directory for the json, md and png")
    ap.add_argument("--batches", type=_ints, default=BATCHES)
    ap.add_argument("--sizes", type=_ints, default=SIZES)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--inner", type=int, default=10, help="calls back to back per timed sample")
    ap.add_argument("--compile", action="store_true", help="also time torch.compile (default mode)")
    args = ap.parse_args(argv)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    gpu = torch.cuda.get_device_name()
    modules = build_modules(args.sizes, sys.stderr)
    rows = measure(modules, args.batches, args.reps, args.inner, args.compile, sys.stderr)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = "sweep-" + gpu.lower().replace(" ", "-")
    (out / f"{stem}.json").write_text(json.dumps({"gpu": gpu, "torch": torch.__version__, "rows": rows}, indent=1))
    md = [f"# Sweep on {gpu} (torch {torch.__version__}), benchmarks/sweep.py --reps {args.reps} --inner {args.inner}"
          f"{' --compile' if args.compile else ''}", "", *summary(rows), "",
          *table(rows), ""]
    (out / f"{stem}.md").write_text("\n".join(md))
    heat_map(rows, out / f"{stem}.png", gpu)
    print("\n".join(md))


if __name__ == "__main__":
    main()
