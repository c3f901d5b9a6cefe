"""Shared test helpers: the reference layer, generated modules, and the accuracy bar."""
import importlib.util
import itertools
import json
import math
import os
import pathlib
import re
import shutil
import sys

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import fusegen  # noqa: E402

# The user's reference file, kept in-tree so that the device machine (which gets only the repo) has it too;
# test_render checks that it matches ../shared/reference when that is present.
REFERENCE_FILE = REPO / "tests" / "reference_model.py"
HEADLINE = fusegen.Spec(input_size=8192, hidden_size=8192, num_groups=512)

_counter = itertools.count()


def reference_namespace() -> dict:
    ns = {"__name__": "reference_model"}
    exec(compile(REFERENCE_FILE.read_text(), str(REFERENCE_FILE), "exec"), ns)
    return ns


def import_file(path, poison=True):
    """Import a generated module as `import` would (registered in sys.modules: torch.compile looks functions'
    modules up there), under a fresh name. poison: the module fills every buffer its kernels must write with NaN
    first (FUSEGEN_POISON, read at import), so an output element a kernel leaves unwritten fails the test."""
    name = f"fusegen_test_module_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    before = os.environ.get("FUSEGEN_POISON")
    os.environ["FUSEGEN_POISON"] = "1" if poison else "0"
    try:
        spec.loader.exec_module(module)
    finally:
        if before is None:
            del os.environ["FUSEGEN_POISON"]
        else:
            os.environ["FUSEGEN_POISON"] = before
    return module


def load_script(name):
    """A script of benchmarks/ (name without .py) as a module, for the CPU tests of its helpers."""
    spec = importlib.util.spec_from_file_location(f"fusegen_{name}", REPO / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def gpu_available() -> bool:
    """A CUDA GPU and a CUDA compiler: what the GPU tests need."""
    nvcc = shutil.which("nvcc") or pathlib.Path("/usr/local/cuda/bin/nvcc").exists()
    return torch.cuda.is_available() and bool(nvcc)


from fusegen.tools.accuracy import (NAMES, TF32_REL_ERR, TF32_ROUNDOFF_RATIO, compare,  # noqa: E402,F401
                                    kink_tolerance, layer_fp64, rel_err, run_layer, truth_for)


def engine_ran(module, batch, input_size) -> str:
    """The engine (and split-K slices) a generated module's forward GEMM runs a (batch, input_size) call on, as
    its launchers choose it (schedule(), by the sizes and the GPU's SM count; wgmma's copies need 16-byte rows of
    the weight: input a multiple of 4). A rewritten layer's module names its own engine (no GEMM to schedule)."""
    if not hasattr(module, "GROUP_STRATEGY"):
        return module.MAINLOOP
    kernels = module._kernels(torch.device("cuda", torch.cuda.current_device()))
    engine, split, _ = kernels.schedule(batch, module.HIDDEN_SIZE, input_size, input_size % 4 == 0, "forward")
    return engine + (f" split-K {split}" if split > 1 else "")


def log_accuracy(report, **case):
    """Append one comparison to FUSEGEN_ACCURACY_LOG (one JSON line, summarized by benchmarks/accuracy_summary.py)
    when that is set."""
    log = os.environ.get("FUSEGEN_ACCURACY_LOG")
    if log:
        with open(log, "a") as f:
            f.write(json.dumps({**case, **report}) + "\n")


def compare_with_reference(model_new_cls, spec, batch, seed, device="cuda", strict_allclose=False, dist="rand"):
    """fusegen.tools.accuracy.compare against the user's reference Model, asserting that nothing missed the bar;
    returns its report (and logs it with the engine and group strategy that ran)."""
    module = sys.modules[model_new_cls.__module__]
    assert module.POISON_OUTPUTS, "GPU tests run with NaN-poisoned outputs"
    report, problems = compare(model_new_cls, reference_namespace()["Model"], spec, batch, seed, device,
                               strict_allclose, dist)
    log_accuracy(report, spec=[spec.input_size, spec.hidden_size, spec.num_groups], precision=spec.precision,
                 batch=batch, seed=seed, dist=dist, engine=engine_ran(module, batch, spec.input_size),
                 strategy=module.GROUP_STRATEGY)
    assert not problems, "\n".join(problems)
    return report


# ---- dropout: the masks a generated module draws, recomputed here (templates/common.cuh.j2's philox_first) ----
def _mulhilo(a: int, b: torch.Tensor):
    """(hi, lo) 32-bit words of the 64-bit product a * b (a < 2^32, b an int64 tensor of values < 2^32), in int64
    arithmetic that never overflows: b in 16-bit halves."""
    ph, pl = a * (b >> 16), a * (b & 0xFFFF)  # each < 2^48
    return (ph + (pl >> 16)) >> 16, (((ph & 0xFFFF) << 16) + pl) & 0xFFFFFFFF


def philox_first(c0, c1, c2, c3, k0: int, k1: int) -> torch.Tensor:
    """Philox4x32-10's first word for counters c0..c3 (int64 tensors or ints, broadcast) and key (k0, k1)."""
    device = next((v.device for v in (c0, c1, c2, c3) if isinstance(v, torch.Tensor)), "cpu")
    c = [torch.as_tensor(v, dtype=torch.int64, device=device) for v in (c0, c1, c2, c3)]
    c = list(torch.broadcast_tensors(*c))
    for _ in range(10):
        hi0, lo0 = _mulhilo(0xD2511F53, c[0])
        hi1, lo1 = _mulhilo(0xCD9E8D57, c[2])
        c = [hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0]
        k0, k1 = (k0 + 0x9E3779B9) & 0xFFFFFFFF, (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return c[0]


def dropout_factor(seed, stage, p, rows, cols, device="cpu") -> torch.Tensor:
    """(rows, cols) float64: 1 / (1 - p) where the module's dropout at chain index `stage` keeps an element, 0
    where it drops it, for the call that drew `seed` (its _draw_seed: two 24-bit words)."""
    r = torch.arange(rows, dtype=torch.int64, device=device).view(-1, 1)
    c = torch.arange(cols, dtype=torch.int64, device=device).view(1, -1)
    bits = philox_first(c, r, stage, 0, int(seed[0]), int(seed[1]))
    p32 = float(torch.tensor(p, dtype=torch.float32))  # the kernels compare in float32, exactly
    kept = (bits >> 8).double() / 2.0 ** 24 >= p32
    return kept.double() / (1.0 - p)


def record_seeds(module):
    """The seeds the generated module draws from here on, in a list (its _draw_seed wrapped)."""
    seeds, draw = [], module._draw_seed

    def recording():
        seeds.append(draw())
        return seeds[-1]

    module._draw_seed = recording
    return seeds


def fixed_masks(model_file, seeds, shape, training=True):
    """For compare_models(fixed=...): {traced node: factor} of every dropout of the model file's (one) chain that
    is on (in eval only those that always drop), for the last seed drawn (ModelNew ran once), the chain's values of
    `shape`."""
    from fusegen.frontend import model_spec, trace_chain

    chain, spec = trace_chain(model_file), model_spec(model_file)[0]
    assert [s.kind for s in spec.chain] == [s.kind for s in chain.stages], "a fold moved the stages: indices differ"

    def factors():
        return {chain.value_nodes[i + 1]: dropout_factor(seeds[-1], i, s.param("p"), *shape, device="cuda")
                for i, s in enumerate(spec.chain) if s.kind == "dropout" and (training or s.param("module") is None)}
    return factors


def build_file_sizes(files, models, out, plan_of):
    """(name, "small" / "big") -> (model file, module path): each of `files` (in `models`) at its own size and
    scaled to real use (scaled_copy), planned by plan_of(model file), written under `out` and built in parallel.
    What check_file_sizes_fp64 reads."""
    (out / "big").mkdir(parents=True)
    paths = {}
    for name in files:
        for size in ("small", "big"):
            f = models / name if size == "small" else scaled_copy(models / name, out / "big")
            paths[name, size] = (f, fusegen.write_module(plan_of(f), out / size))
    prebuild(sorted({p for _, p in paths.values()}))
    return paths


def check_file_sizes_fp64(built, name, files, label):
    """The fp64 bar (compare_models) for model file `name` of `files` at its own size (its batch, batch 1 and twice
    plus one) and at the scaled size (built[name, "small" / "big"]: (model file, module path)); asserts that
    nothing missed it, printing and logging each comparison (`label` names the path in the log)."""
    from fusegen.frontend import load_model_file, model_spec
    from fusegen.tools.accuracy import DISTRIBUTIONS, compare_models

    problems = []
    for size in ("small", "big"):
        f, path = built[name, size]
        model_file, module = load_model_file(f), import_file(path)
        assert module.POISON_OUTPUTS, "GPU tests run with NaN-poisoned outputs"
        shape = tuple(model_file.get_inputs()[0].shape)
        # (a BatchNorm in training refuses batch 1, as torch's: its smallest batch is 2)
        smallest = 2 if model_spec(f)[0].column_norm >= 0 else 1
        cases = ((0, shape[0]), (1, smallest), (2, 2 * shape[0] + 1)) if size == "small" else ((3, shape[0]),)
        for seed, batch in cases:
            dist = DISTRIBUTIONS[(files.index(name) + seed) % len(DISTRIBUTIONS)]
            fixed = None
            if hasattr(module, "_draw_seed"):  # dropout: the references drop what ours dropped
                hidden = model_file.get_init_inputs()[1]
                fixed = fixed_masks(f, record_seeds(module), (batch, hidden))
            report, found = compare_models(module.ModelNew, model_file.Model, model_file.get_init_inputs(),
                                           (batch,) + shape[1:], seed, dist=dist, fixed=fixed)
            print(f"\n{name} {size} [{module.MAINLOOP}, batch {batch}, {dist}]: " + ", ".join(
                f"{k} {v[0]:.2g}/{v[1]:.2g}" for k, v in report.items() if isinstance(v, tuple) and k != "kink_flips"))
            log_accuracy(report, chain=f"{name} {size} ({label})", engine=module.MAINLOOP, batch=batch, seed=seed,
                         dist=dist)
            problems += [f"{size}, batch {batch}: {p}" for p in found]
    assert not problems, f"{name}: " + "\n".join(problems)


def shard(items):
    """items, or the slice FUSEGEN_SHARD="i/n" names (every n-th from the i-th, 0-based): a suite whose builds do not
    fit one device call runs in n calls."""
    spec = os.environ.get("FUSEGEN_SHARD")
    if not spec:
        return list(items)
    i, n = (int(v) for v in spec.split("/"))
    if not 0 <= i < n:
        raise ValueError(f"FUSEGEN_SHARD must be i/n with 0 <= i < n, got {spec!r}")
    return list(items)[i::n]


def selected_params(request, keys):
    """The values of the parameters `keys` among the tests this session runs (`-k` included), so that a fixture
    builds only the modules those tests use."""
    return {tuple(item.callspec.params[k] for k in keys) for item in request.session.items
            if hasattr(item, "callspec") and all(k in item.callspec.params for k in keys)}


def prebuild(paths, jobs=None):
    """Build generated modules' kernels in parallel processes (fusegen tune's builder): each fills the shared
    build cache, so importing the modules afterwards only loads. Raises with the compiler's output on a failure."""
    from fusegen.tools.tune import _build_all
    failed = _build_all(list(paths), jobs or max(1, min(len(paths), os.cpu_count() or 1)))
    assert not failed, "\n\n".join(f"{p}:\n{err}" for p, err in failed.items())


# the scaled size: batch x input x hidden >= 1000 x 1020 x 1000 multiply-adds, ~4x 2^28 (the wide tiles); the
# input a multiple of 4 (the wgmma engine's copies need 16-byte rows), not of the tiles
BIG_BATCH, BIG_INPUT, BIG_HIDDEN = 1000, 1020, 1000


def scaled_copy(path, out_dir):
    """The model file with its module-level sizes raised to the scaled size (resized_copy)."""
    return resized_copy(path, out_dir, BIG_BATCH, BIG_INPUT, BIG_HIDDEN)


def resized_copy(path, out_dir, batch, input_size, hidden):
    """The model file with its module-level sizes set: batch and input, and hidden (with num_groups) raised by a
    whole factor to at least `hidden`, so that the group width, and with it the plan's kernels, stay the same."""
    text = path.read_text()
    sizes = {k: int(v) for k, v in re.findall(r"^(batch_size|input_size|hidden_size|num_groups) = (\d+)$", text, re.M)}
    assert {"batch_size", "input_size", "hidden_size"} <= set(sizes), f"{path.name}: no module-level sizes"
    factor = math.ceil(hidden / sizes["hidden_size"])
    new = {"batch_size": batch, "input_size": input_size, "hidden_size": sizes["hidden_size"] * factor}
    if sizes["input_size"] == sizes["hidden_size"]:  # (a residual of the layer's input needs them equal)
        new["input_size"] = new["hidden_size"]
    if "num_groups" in sizes:
        new["num_groups"] = sizes["num_groups"] * factor
    for k, v in new.items():
        text = re.sub(rf"^{k} = \d+$", f"{k} = {v}", text, flags=re.M)
    out = out_dir / path.name
    out.write_text(text)
    return out


def assert_compiled_matches_eager(model, x):
    """torch.compile(model, fullgraph=True) gives bitwise the output and the gradients (input and every
    parameter) of the eager call: the custom operators traced, no graph break."""
    compiled = torch.compile(model, fullgraph=True)
    results = []
    for run in (model, compiled):
        model.zero_grad(set_to_none=True)
        xin = x.clone().requires_grad_()
        out = run(xin)
        out.backward(torch.ones_like(out))
        results.append([out.detach(), xin.grad] + [p.grad for p in model.parameters()])
    for a, b in zip(*results):
        assert torch.equal(a, b)
