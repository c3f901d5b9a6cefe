"""Where a small layer's forward+backward spends the host's time, by torch.profiler (CPU ops, autograd nodes and
the CUDA runtime calls; the profiler's own cost inflates every row alike): fusegen's module and PyTorch eager on
the sweep's chain, --calls steps each, the top rows by self CPU time. Plus host microseconds per call of the
forward with its graph recorded and of the backward alone (retain_graph), without the profiler.

    PYTHONPATH=. python benchmarks/host_profile.py [--size 1024] [--batch 16] [--calls 300] [--rows 25]
"""
import argparse
import pathlib
import sys

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fusegen.tools.accuracy import ReferenceLayer  # noqa: E402
from sweep import build_modules  # noqa: E402  (beside this script)
from fusegen.tools.tune import host_us  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--rows", type=int, default=25)
    args = ap.parse_args(argv)
    size, batch = args.size, args.batch
    m = build_modules([size], sys.stderr)[size]
    models = {"fusegen": m.ModelNew(size, size, size // 32).cuda(),
              "eager": ReferenceLayer(size, size, size // 32).cuda()}
    xg = torch.randn(batch, size, device="cuda").requires_grad_()
    g = torch.randn(batch, size, device="cuda")
    print(f"host microseconds per call, {torch.cuda.get_device_name()}, size {size}, batch {batch}")
    for name, model in models.items():
        kept = model(xg)
        rows = [("forward, graph recorded", lambda: model(xg)),
                ("backward alone (retain_graph)", lambda: kept.backward(g, retain_graph=True)),
                ("forward+backward", lambda: model(xg).backward(g))]
        for what, fn in rows:
            print(f"{name:<8} {what:<34} {host_us(fn, 2000, warmup=20):8.1f}")
    for name, model in models.items():
        for _ in range(20):
            model(xg).backward(g)
        torch.cuda.synchronize()
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=acts) as prof:
            for _ in range(args.calls):
                model(xg).backward(g)
            torch.cuda.synchronize()
        print(f"\n== {name}: {args.calls} forward+backward steps under torch.profiler")
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.rows, max_name_column_width=70))


if __name__ == "__main__":
    main()
