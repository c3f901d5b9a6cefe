"""Generated chains on the GPU: every model file of tests/models through `fusegen from-model`, forward and every
gradient (input, weight, bias, each stage's parameters) against an fp64 run of the file's own Model
(fusegen.tools.accuracy.compare_models: normwise and element-wise, kinks judged per computation), at the file's own
small size (compensated FFMA GEMMs) and scaled up to where the tensor-core engines run, on each engine a GPU of
this architecture can get (on a Hopper: wgmma and mma.sync), inputs drawn from every distribution in turn."""
import os
import pathlib

import pytest
import torch

from helpers import (REPO, engine_ran, gpu_available, import_file, log_accuracy, prebuild, scaled_copy,
                     selected_params, shard)

import fusegen
from fusegen.frontend import load_model_file, model_spec
from fusegen.tools.accuracy import DISTRIBUTIONS, compare_models

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="needs a CUDA GPU and nvcc")]

MODELS = REPO / "tests" / "models"
# the files of one Linear and its chain (layers_*.py hold several: tests/test_gpu_layers.py)
# (files that drop in training draw fusegen's own masks, not torch's: tests/test_gpu_dropout.py checks them against
# the reference with our masks fixed in it); FUSEGEN_SHARD="i/n" runs a slice of them (helpers.shard)
MODEL_FILES = shard(sorted(p.name for p in MODELS.glob("*.py") if not p.name.startswith(("refuse_", "layers_")) and
                           "dropout(" not in p.read_text().lower()))
VISIBLE_ARCH = tuple(torch.cuda.get_device_capability()) if gpu_available() else None
# the engines a GPU of the visible architecture can get: on a Hopper wgmma, and mma.sync that sm_80/89 GPUs get
ARCHS = [VISIBLE_ARCH] + ([(8, 0)] if VISIBLE_ARCH == fusegen.WGMMA_ARCH else []) if VISIBLE_ARCH else []
ARCH_IDS = [f"sm{a[0]}{a[1]}" for a in ARCHS]
@pytest.fixture(scope="module")
def built(tmp_path_factory, request):
    """Every selected model file's module at its own and at the scaled size, for each engine: run-time sizes, so
    that the two sizes share one build per (file, engine); all built in parallel."""
    out = tmp_path_factory.mktemp("models")
    (out / "big").mkdir()
    paths = {}
    for name, arch in sorted(selected_params(request, ("name", "arch"))):
        for size, f in (("small", MODELS / name), ("big", out / "big" / name)):
            if size == "big" and not f.exists():
                scaled_copy(MODELS / name, out / "big")
            plan = fusegen.plan(model_spec(f)[0], arch=arch, fixed_sizes=False)
            paths[name, size, arch] = (f, fusegen.write_module(plan, out / f"sm{arch[0]}{arch[1]}"))
    prebuild(sorted({p for _, p in paths.values()}))
    return paths


def check_model_file(model_file, module, batch, seed, dist, label):
    """compare_models on one model file's module; prints and logs what ran (engine, group strategy)."""
    assert module.POISON_OUTPUTS, "GPU tests run with NaN-poisoned outputs"
    shape = tuple(model_file.get_inputs()[0].shape)
    report, problems = compare_models(module.ModelNew, model_file.Model, model_file.get_init_inputs(),
                                      (batch,) + shape[1:], seed, dist=dist)
    engine = engine_ran(module, batch, shape[-1])
    strategy = getattr(module, "GROUP_STRATEGY", "rewrite")  # (the row-sum rewrite's module has none)
    print(f"\n{label} [{engine}, {strategy}, batch {batch}, {dist}]: " + ", ".join(
        f"{k} {v[0]:.2g}/{v[1]:.2g}" for k, v in report.items() if isinstance(v, tuple) and k != "kink_flips")
        + f"; kink flips {report.get('kink_flips')} of {report.get('kink_candidates')}")
    log_accuracy(report, chain=label, engine=engine, strategy=strategy, batch=batch, seed=seed, dist=dist,
                 precision=getattr(module, "PRECISION", "fp64"))
    return problems


@pytest.mark.parametrize("arch", ARCHS, ids=ARCH_IDS)
@pytest.mark.parametrize("name", MODEL_FILES)
def test_model_file_forward_and_gradients_match_fp64(name, arch, built):
    problems = []
    k = MODEL_FILES.index(name) + ARCHS.index(arch)
    for size in ("small", "big"):
        f, path = built[name, size, arch]
        model_file, module = load_model_file(f), import_file(path)
        batch = model_file.get_inputs()[0].shape[0]
        cases = ((0, batch), (1, 2 * batch + 1)) if size == "small" else ((2, batch),)
        for seed, b in cases:
            dist = DISTRIBUTIONS[(k + seed) % len(DISTRIBUTIONS)]
            problems += check_model_file(model_file, module, b, seed, dist, f"{name} {size}")
    assert not problems, f"{name}: " + "\n".join(problems)


# --------------------------------------------------------------------------------------------------------------
# Random chains of every stage, random constants and shapes (half of them big enough for the tensor-core
# engines: more than 2^28 multiply-adds), written as model files and checked the same way, on each engine and
# input distribution in turn. One hypothesis example holds FUSEGEN_GPU_CHAINS chains so that their builds run in
# parallel.
# --------------------------------------------------------------------------------------------------------------
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

CHAINS = int(os.environ.get("FUSEGEN_GPU_CHAINS", "12"))
ROW_KINDS = ("softmax", "log_softmax", "row_combine")


def _row_value(draw, v, keepdim):
    """A reduction of v over the features, in one of its spellings."""
    keep = ", keepdim=True" if keepdim else ""
    how = draw(st.sampled_from(["sum", "mean", "amax", "amin", "logsumexp", "max", "min"]), label="reduction")
    if how in ("max", "min"):
        return f"torch.{how}({v}, dim=1{keep})[0]"
    return f"{v}.{how}(dim=1{keep})"
ELEMENTWISE = ("leaky_relu", "relu", "gelu", "silu", "sigmoid", "tanh", "mish", "hardtanh", "clamp", "add_self",
               "scalar", "channel", "residual")
_const = st.floats(0.5, 3.0).map(lambda v: round(v, 3))
# x against a per-channel parameter: arithmetic, and element-wise min / max / clamp in torch's spellings
CHANNEL_SPELLINGS = ("{v} * {p}", "{v} / {p}", "{v} + {p}", "{v} - {p}", "torch.maximum({v}, {p})",
                     "torch.min({p}, {v})", "torch.fmax({p}, {v})", "{v}.fmin({p})", "torch.clamp({v}, min={p})",
                     "{v}.clamp_max({p})")


@st.composite
def model_source(draw):
    """(source, batch, input, hidden) of a model file with a random Linear -> chain."""
    big = draw(st.booleans())
    gw = draw(st.sampled_from([1, 2, 3, 4, 8, 16, 32, 48, 160]))
    # big: 1024 x 500 x 624 multiply-adds at least, over 2^28 (the wide tiles)
    groups = draw(st.integers(-(-624 // gw), 1280 // gw) if big else st.integers(1, max(1, 160 // gw)))
    hidden, inp = gw * groups, draw(st.integers(500, 800) if big else st.integers(1, 130))
    batch = draw(st.integers(1024, 1100) if big else st.integers(1, 70))
    if gw == 1 and batch == 1:
        batch = 2  # GroupNorm refuses one value a group
    n = draw(st.integers(1, 6))
    # row reductions (softmax, a row value against the tensor, a reduction to one value a row at the end), a
    # GroupNorm, both, or a BatchNorm (not generated beside another reduction yet)
    reduction = draw(st.sampled_from(["group_norm", "rows", "rows_group_norm", "batch_norm"]), label="reduction")
    rows = reduction.startswith("rows")
    gn_at = draw(st.integers(-1, n - 1)) if "group_norm" in reduction else -1  # -1: no GroupNorm
    bn_at = draw(st.integers(0, n - 1)) if reduction == "batch_norm" else -1
    if bn_at >= 0:
        batch = max(batch, 2)  # a BatchNorm in training refuses one row
    # a pool over the features right after the Linear, k times the chain's width: a max pool (the row kernels read
    # its windows), an average one (float32: the pooled weight; 16 bits: the row kernels)
    pool = draw(st.sampled_from([None, None, "max", "avg"]), label="pool")
    pool = None if pool == "max" and bn_at >= 0 else pool  # (a BatchNorm after a max pool: not generated yet)
    k = draw(st.sampled_from([2, 3])) if pool else 1
    init = [f"self.fc = nn.Linear(input_size, hidden_size{' * %d' % k if pool else ''}, bias={draw(st.booleans())})"]
    body, side = ["v0 = self.fc(x)"], []  # side[v]: which side of the GroupNorm value v is on
    if pool:
        body.append(f"v0 = F.{pool}_pool1d(v0.unsqueeze(1), {k}).squeeze(1)")
    side.append(0)
    for i in range(n):
        v = f"v{i}"
        if i == gn_at:
            init.append(f"self.gn = nn.GroupNorm({groups}, hidden_size, affine={draw(st.booleans())})")
            expr = f"self.gn({v})"
        elif i == bn_at:
            init.append(f"self.bn = nn.BatchNorm1d(hidden_size, momentum={draw(st.sampled_from([0.1, None, 0.5]))}, "
                        f"affine={draw(st.booleans())}, track_running_stats={draw(st.booleans())})")
            expr = f"self.bn({v})"
        else:
            kind = draw(st.sampled_from(ELEMENTWISE + (ROW_KINDS if rows else ())), label=f"stage {i}")
            expr = {"leaky_relu": f"F.leaky_relu({v}, {draw(st.sampled_from([0.01, 0.2, -0.3]))})",
                    "relu": f"torch.relu({v})", "silu": f"F.silu({v})", "sigmoid": f"torch.sigmoid({v})",
                    "tanh": f"torch.tanh({v})", "mish": f"F.mish({v})", "add_self": f"{v} + {v}",
                    "gelu": f"F.gelu({v}, approximate={draw(st.sampled_from(['none', 'tanh']))!r})",
                    "hardtanh": f"F.hardtanh({v}, -{draw(_const)}, {draw(_const)})",
                    "clamp": f"torch.clamp({v}, min=-{draw(_const)}, max={draw(_const)})",
                    "scalar": f"{v} {draw(st.sampled_from(['*', '/', '+', '-']))} {draw(_const)}",
                    "channel": draw(st.sampled_from(CHANNEL_SPELLINGS)).format(v=v, p=f"self.p{i}"),
                    "residual": None, "softmax": f"F.softmax({v}, dim=1)",
                    "log_softmax": f"torch.log_softmax({v}, dim=-1)",
                    "row_combine": f"{v} {draw(st.sampled_from(['-', '+']))} {_row_value(draw, v, True)}"}[kind]
            if kind == "channel":  # per channel, or a scalar of one of the shapes that broadcast as one
                shape = draw(st.sampled_from(["hidden_size", "hidden_size", "()", "1", "1, 1"]), label="parameter")
                init.append(f"self.p{i} = nn.Parameter(torch.rand({shape}) + 0.5)")
            if kind == "residual":
                same_side = [u for u in range(i + 1) if side[u] == side[i]]
                # the added value as it is, or detached (its gradient stops there)
                added = draw(st.sampled_from(["v{}", "v{}.detach()", "v{}.clone().detach()"]), label="residual")
                expr = f"{v} + " + added.format(draw(st.sampled_from(same_side)))
        body.append(f"v{i + 1} = {expr}")
        side.append(side[i] + (1 if i == gn_at else 0))
    if rows and draw(st.booleans(), label="ends in a row value"):  # one value a row, a stage on it
        tail = draw(st.sampled_from(["{}", "torch.tanh({})", "{} * 0.5", "F.leaky_relu({}, 0.2)"]))
        body.append(f"v{n + 1} = " + tail.format(_row_value(draw, f"v{n}", draw(st.booleans()))))
        n += 1
    src = "\n".join(
        ["import torch", "import torch.nn as nn", "import torch.nn.functional as F", "", "",
         "class Model(nn.Module):", "    def __init__(self, input_size, hidden_size):",
         "        super().__init__()"] + [f"        {ln}" for ln in init] +
        ["", "    def forward(self, x):"] + [f"        {ln}" for ln in body] + [f"        return v{n}", "", "",
         f"def get_inputs():\n    return [torch.rand({batch}, {inp})]", "", "",
         f"def get_init_inputs():\n    return [{inp}, {hidden}]", ""])
    return src, batch, inp, hidden


def test_random_chains_forward_and_gradients_match_fp64(tmp_path):
    # hypothesis draws the chains (its first example is the smallest: a 1 x 1 layer, an awkward case too); they
    # are built together, in parallel, then each is checked
    models = []

    @settings(max_examples=CHAINS, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(model_source())
    def draw(model):
        models.append(model)

    draw()
    files, paths = [], []
    for k, (src, *_) in enumerate(models):  # the engines in turn
        f = tmp_path / f"chain_{k}.py"
        f.write_text(src)
        files.append(f)
        plan = fusegen.plan(model_spec(f)[0], arch=ARCHS[k % len(ARCHS)])
        paths.append(fusegen.write_module(plan, tmp_path / "generated"))
    prebuild(sorted(set(paths)))
    failures, engines = [], set()
    for k, (f, path, (src, batch, inp, hidden)) in enumerate(zip(files, paths, models)):
        model_file, module = load_model_file(f), import_file(path)
        problems = check_model_file(model_file, module, batch, batch, DISTRIBUTIONS[k % len(DISTRIBUTIONS)],
                                    f"random {f.name}")
        engines.add(engine_ran(module, batch, inp))
        if problems:
            failures.append(f"{f.name}:\n{src}\n" + "\n".join(problems))
            keep = os.environ.get("FUSEGEN_FAILED_CHAINS")  # a directory: failing chains kept for a rerun
            if keep:
                pathlib.Path(keep).mkdir(parents=True, exist_ok=True)
                (pathlib.Path(keep) / f.name).write_text(src)
    assert not failures, "\n\n".join(failures)
    assert len(engines) > 1 or CHAINS < 6, f"every chain ran on {engines}: the tensor-core engines went untested"
