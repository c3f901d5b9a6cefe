"""Autotuning: time candidate GEMM tiles for one spec on the GPU in hand and keep the winner in the tuning table
(fusegen/plan/tuning.py reads it for the planner; without an entry the planner's heuristic decides)."""
import dataclasses
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from ..plan import ENGINES, WGMMA_ARCH, GemmTile, MmaTile, WgmmaTile, plan
from ..plan.planner import THREE_FP16
from ..plan.tuning import TABLE, load_table, shape_key
from ..spec import FP32, PRECISIONS, TF32, Spec

SMEM_LIMIT = 227 * 1024  # opt-in shared memory per block on sm_90 (sm_80: 163 KB; the build reports a miss)


def candidates(precision: str, arch=None):
    """Tiles worth timing for a precision on a GPU of compute capability `arch` (valid, within shared memory)."""
    if precision == FP32:
        return [GemmTile(), GemmTile(block_m=64, block_n=128), GemmTile(block_m=128, block_n=64)]
    if precision not in PRECISIONS:  # bf16 / fp16: the m16n8k16 engine (k tiles of whole k16 steps, n8 tiles in pairs)
        # (warps_n x 32 >= block_n: the narrow tile's threads, 32 a warp column, cover an m/n-fast row in scalar
        # copies)
        shapes = [(128, 128, 2, 4), (64, 128, 2, 4), (128, 64, 4, 2)]
        tiles = [MmaTile(block_m=bm, block_n=bn, block_k=bk, warps_m=wm, warps_n=wn, stages=st)
                 for bm, bn, wm, wn in shapes for bk, st in ((32, 3), (32, 4), (64, 3), (64, 4))]
        tiles = [t for t in tiles if t.warp_n % 16 == 0 and t.half_smem_bytes() <= SMEM_LIMIT]
        if arch is not None and tuple(arch) == WGMMA_ARCH:  # (a 16-bit stage is the fp32 one's size in bytes)
            tiles += [WgmmaTile(block_m=bm, block_n=bn, stages=st) for bm, bn in ((256, 128), (128, 128), (64, 128), (128, 64))
                      for st in (3, 4, 5, 6) if WgmmaTile(block_m=bm, block_n=bn, stages=st).smem_bytes(False)
                      <= WgmmaTile.SMEM_LIMIT]
        return tiles
    if arch is not None and tuple(arch) == WGMMA_ARCH:
        sizes = [(128, 128), (64, 128), (128, 64)] + ([(256, 64)] if precision == TF32 else [])
        tiles = [WgmmaTile(block_m=bm, block_n=bn, stages=st) for bm, bn in sizes for st in (3, 4, 5, 6, 8)]
        # the engine the planner runs: scaled fp16 planes (one for tf32, two for 3xtf32 where THREE_FP16), else
        # 3xTF32's split planes beside the raw weight
        planes = 1 if precision == TF32 else 2 if THREE_FP16 else 0
        return [t for t in tiles if (t.plane_smem_bytes(planes) if planes else t.smem_bytes(True))
                <= WgmmaTile.SMEM_LIMIT]
    shapes = [(128, 128, 2, 4), (128, 128, 4, 4), (128, 128, 4, 2), (64, 128, 2, 4), (128, 64, 4, 2)]
    if precision == TF32:  # no promotion totals: 64x64 warp tiles fit the registers
        shapes += [(128, 128, 2, 2)]
    out = []
    for bm, bn, wm, wn in shapes:
        for bk, stages in ((32, 3), (32, 4), (16, 4), (16, 6)):
            try:
                t = MmaTile(block_m=bm, block_n=bn, block_k=bk, warps_m=wm, warps_n=wn, stages=stages)
            except ValueError:
                continue
            if t.smem_bytes <= SMEM_LIMIT:
                out.append(t)
    return out


def _progress(done, total, label, stream=sys.stderr):
    width = 30
    filled = int(width * done / max(total, 1))
    stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {label[:60]:<60}")
    stream.flush()
    if done == total:
        stream.write("\n")


def _import(path):
    """Import a generated module file as `import` would (registered in sys.modules, where torch.compile looks
    a function's module up); the module name is the file's, unique per plan."""
    spec = importlib.util.spec_from_file_location(f"fusegen_generated_{path.stem}", str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


BUILD_CODE = ("import importlib.util, sys, torch; s = importlib.util.spec_from_file_location('m', sys.argv[1]); "
              "m = importlib.util.module_from_spec(s); s.loader.exec_module(m); m._kernels(torch.device('cuda', 0))")


def _build_all(paths, jobs):
    """Compile every candidate's extension, `jobs` processes at a time (nvcc is single-threaded)."""
    env = dict(os.environ, FUSEGEN_QUIET="1")
    pending, running, failed, done = list(paths), [], {}, 0
    while pending or running:
        while pending and len(running) < jobs:
            p = pending.pop(0)
            running.append((p, subprocess.Popen([sys.executable, "-c", BUILD_CODE, str(p)], env=env, text=True,
                                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)))
        time.sleep(0.2)
        for item in list(running):
            p, proc = item
            if proc.poll() is not None:
                running.remove(item)
                done += 1
                if proc.returncode:
                    failed[p] = proc.stdout.read()[-2000:]
                _progress(done, len(paths), f"built {p.stem}")
    return failed


def time_ms(fn, reps, warmup=3, inner=1):
    """Median ms per call of fn over reps samples, each `inner` calls back to back between two CUDA events
    (inner > 1: the GPU stays busy, as in a training loop, instead of idling, and clocking down, between calls
    while the host issues the next one)."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / inner)
    times.sort()
    return times[len(times) // 2]


def host_us(fn, calls=50, warmup=3):
    """Host (CPU) microseconds per call of fn: the time to enqueue `calls` calls back to back, the GPU left
    to run behind (Python, argument checks, dispatch, allocation, launches); the queue is drained after."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    elapsed = time.perf_counter() - start
    torch.cuda.synchronize()
    return elapsed / calls * 1e6


def _layer_calls(model, x, g):
    """(forward under no_grad, forward+backward from grad g) of model on x, as zero-argument calls."""
    import torch

    xg = x.clone().requires_grad_()

    def fwd():
        with torch.no_grad():
            model(x)

    return fwd, lambda: model(xg).backward(g)


def capture_step(model, x, g):
    """model(x).backward(g) captured in a CUDA graph: (graph, out). Warmed up off the default stream, as capture
    asks; the gradients are set to None first, so capture allocates them in the graph's pool and each replay
    writes them (and out) in place."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            model(x).backward(g)
    torch.cuda.current_stream().wait_stream(side)
    model.zero_grad(set_to_none=True)
    x.grad = None
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = model(x)
        out.backward(g)
    return graph, out


def host_layer(model, x, g, calls=50):
    """(forward us, forward+backward us) of host time per call (see host_us)."""
    fwd, fwd_bwd = _layer_calls(model, x, g)
    return host_us(fwd, calls), host_us(fwd_bwd, calls)


def time_layer(model, x, g, reps, inner=1):
    """(forward ms, forward+backward ms) medians of model on x, the backward from grad g (see time_ms)."""
    fwd, fwd_bwd = _layer_calls(model, x, g)
    return time_ms(fwd, reps, inner=inner), time_ms(fwd_bwd, reps, inner=inner)


def tune(spec: Spec, batch: int, *, reps=10, jobs=None, tiles=None, names=None, save=True, table=TABLE,
         log=sys.stderr):
    """Time every candidate tile (forward and forward+backward), or those of `tiles` or of the candidates named in
    `names`, return the rows sorted by forward+backward time and, with save, store the winner in the tuning
    table."""
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("fusegen tune needs a CUDA GPU (none is visible)")
    from ..codegen import write_module

    gpu = torch.cuda.get_device_name()
    tiles = list(tiles or candidates(spec.arithmetic, torch.cuda.get_device_capability()))
    if names:
        known = {t.name: t for t in tiles}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise RuntimeError(f"no candidate tile named {', '.join(unknown)} for {spec.arithmetic} on this GPU; "
                               f"the candidates: {', '.join(known)}")
        tiles = [known[n] for n in names]
    workdir = pathlib.Path(tempfile.mkdtemp(prefix="fusegen-tune-"))
    paths = {t: write_module(plan(spec, tile=t), workdir) for t in tiles}
    log.write(f"tuning {spec} at batch {batch} on {gpu}: {len(tiles)} candidate tiles\n")
    failed = _build_all(list(paths.values()), jobs or max(1, min(len(tiles), os.cpu_count() or 1)))
    for t, p in paths.items():
        if p in failed:
            log.write(f"  {t.name}: build failed (skipped)\n{failed[p]}\n")
    torch.manual_seed(0)
    dtype = getattr(torch, spec.dtype)  # the layer in the module's element type, as a harness casts it
    x = torch.rand(batch, spec.input_size, device="cuda", dtype=dtype)
    g = torch.randn(batch, spec.hidden_size, device="cuda", dtype=dtype)
    rows = []
    timed = [t for t in tiles if paths[t] not in failed]
    for i, t in enumerate(timed):
        module = _import(paths[t])
        model = module.ModelNew(spec.input_size, spec.hidden_size, spec.num_groups).cuda().to(dtype)
        f_ms, fb_ms = time_layer(model, x, g, reps)
        rows.append({"tile": dataclasses.asdict(t), "engine": ENGINES[type(t)], "mainloop": module.MAINLOOP,
                     "name": t.name,
                     "forward_ms": round(f_ms, 4),
                     "forward_backward_ms": round(fb_ms, 4)})
        _progress(i + 1, len(timed), f"{t.name}: fwd {f_ms:.3f} ms, fwd+bwd {fb_ms:.3f} ms")
        del model
    if not rows:
        raise RuntimeError("no candidate tile built; see the build errors above")
    rows.sort(key=lambda r: r["forward_backward_ms"])
    if save:
        entry = dict(rows[0], date=time.strftime("%Y-%m-%d"), reps=reps, candidates=len(rows))
        data = load_table(table)
        data.setdefault(gpu, {}).setdefault(spec.arithmetic, {})[shape_key(spec, batch)] = entry
        _atomic_write_json(pathlib.Path(table), data)
    return gpu, rows


def _atomic_write_json(path, data):
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)
