"""Generated chains on the GPU: every model file of tests/models through `fusegen from-model`, forward and every
gradient (input, weight, bias, each stage's parameters) against an fp64 run of the file's own Model
(fusegen.accuracy.compare_models: the foundation issue's bar)."""
import os

import pytest
import torch

from helpers import REPO, gpu_available, import_file, prebuild

import fusegen
from fusegen.accuracy import compare_models
from fusegen.frontend import load_model_file
from fusegen.interface import model_spec

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="needs a CUDA GPU and nvcc")]

MODELS = REPO / "tests" / "models"
MODEL_FILES = sorted(p.name for p in MODELS.glob("*.py") if not p.name.startswith("refuse_"))


def _arch():
    return tuple(torch.cuda.get_device_capability()) if torch.cuda.is_available() else None


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Every model file's module, on the engine the visible GPU gets, built in parallel."""
    out = tmp_path_factory.mktemp("models")
    paths = {name: fusegen.write_module(fusegen.plan(model_spec(MODELS / name)[0], arch=_arch()), out)
             for name in MODEL_FILES}
    prebuild(list(paths.values()))
    return paths


@pytest.mark.parametrize("name", MODEL_FILES)
def test_model_file_forward_and_gradients_match_fp64(name, built):
    model_file = load_model_file(MODELS / name)
    module = import_file(built[name])
    shape = tuple(model_file.get_inputs()[0].shape)
    for seed, batch in ((0, shape[0]), (1, 2 * shape[0] + 1)):
        report, problems = compare_models(module.ModelNew, model_file.Model, model_file.get_init_inputs(),
                                          (batch,) + shape[1:], seed)
        print(f"\n{name} batch {batch}: " + ", ".join(  # ours / the fp32 reference, rel. error vs fp64
            f"{k} {v[0]:.2g}/{v[1]:.2g}" for k, v in report.items() if isinstance(v, tuple)))
        assert not problems, f"{name}: " + "\n".join(problems)


# --------------------------------------------------------------------------------------------------------------
# Random chains of every stage, random constants and shapes (half of them big enough for the tensor-core
# engines: more than 2^28 multiply-adds), written as model files and checked the same way. One hypothesis
# example holds FUSEGEN_GPU_CHAINS chains so that their builds run in parallel.
# --------------------------------------------------------------------------------------------------------------
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

CHAINS = int(os.environ.get("FUSEGEN_GPU_CHAINS", "12"))
ELEMENTWISE = ("leaky_relu", "relu", "gelu", "silu", "sigmoid", "tanh", "mish", "hardtanh", "clamp", "add_self",
               "scalar", "channel", "residual")
_const = st.floats(0.5, 3.0).map(lambda v: round(v, 3))


@st.composite
def model_source(draw):
    """(source, batch, input, hidden) of a model file with a random Linear -> chain."""
    big = draw(st.booleans())
    gw = draw(st.sampled_from([1, 2, 3, 4, 8, 16, 32, 48, 160]))
    # big: 1024 x 500 x 624 multiply-adds at least, over EXACT_MAX_MACS (2^28)
    groups = draw(st.integers(-(-624 // gw), 1280 // gw) if big else st.integers(1, max(1, 160 // gw)))
    hidden, inp = gw * groups, draw(st.integers(500, 800) if big else st.integers(1, 130))
    batch = draw(st.integers(1024, 1100) if big else st.integers(1, 70))
    if gw == 1 and batch == 1:
        batch = 2  # GroupNorm refuses one value a group
    n = draw(st.integers(1, 6))
    gn_at = draw(st.integers(-1, n - 1))  # -1: no GroupNorm
    init = [f"self.fc = nn.Linear(input_size, hidden_size, bias={draw(st.booleans())})"]
    body, side = ["v0 = self.fc(x)"], []  # side[v]: which side of the GroupNorm value v is on
    side.append(0)
    for i in range(n):
        v = f"v{i}"
        if i == gn_at:
            init.append(f"self.gn = nn.GroupNorm({groups}, hidden_size, affine={draw(st.booleans())})")
            expr = f"self.gn({v})"
        else:
            kind = draw(st.sampled_from(ELEMENTWISE), label=f"stage {i}")
            expr = {"leaky_relu": f"F.leaky_relu({v}, {draw(st.sampled_from([0.01, 0.2, -0.3]))})",
                    "relu": f"torch.relu({v})", "silu": f"F.silu({v})", "sigmoid": f"torch.sigmoid({v})",
                    "tanh": f"torch.tanh({v})", "mish": f"F.mish({v})", "add_self": f"{v} + {v}",
                    "gelu": f"F.gelu({v}, approximate={draw(st.sampled_from(['none', 'tanh']))!r})",
                    "hardtanh": f"F.hardtanh({v}, -{draw(_const)}, {draw(_const)})",
                    "clamp": f"torch.clamp({v}, min=-{draw(_const)}, max={draw(_const)})",
                    "scalar": f"{v} {draw(st.sampled_from(['*', '/', '+', '-']))} {draw(_const)}",
                    "channel": f"{v} {draw(st.sampled_from(['*', '/', '+', '-']))} self.p{i}",
                    "residual": None}[kind]
            if kind == "channel":
                init.append(f"self.p{i} = nn.Parameter(torch.rand(hidden_size) + 0.5)")
            if kind == "residual":
                same_side = [u for u in range(i + 1) if side[u] == side[i]]
                expr = f"{v} + v{draw(st.sampled_from(same_side))}"
        body.append(f"v{i + 1} = {expr}")
        side.append(side[i] + (1 if i == gn_at else 0))
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
    for k, (src, *_) in enumerate(models):
        f = tmp_path / f"chain_{k}.py"
        f.write_text(src)
        files.append(f)
        paths.append(fusegen.write_module(fusegen.plan(model_spec(f)[0], arch=_arch()), tmp_path / "generated"))
    prebuild(sorted(set(paths)))
    failures, engines = [], set()
    for f, path, (src, batch, inp, hidden) in zip(files, paths, models):
        model_file, module = load_model_file(f), import_file(path)
        report, problems = compare_models(module.ModelNew, model_file.Model, model_file.get_init_inputs(),
                                          (batch, inp), seed=batch)
        engine = module.MAINLOOP if batch * hidden * inp > module.EXACT_MAX_MACS else "exact"
        engines.add(engine)
        print(f"\n{path.name} [{engine}, batch {batch}] "
              + ", ".join(f"{k} {v[0]:.2g}/{v[1]:.2g}" for k, v in report.items() if isinstance(v, tuple)))
        if problems:
            failures.append(f"{f.name}:\n{src}\n" + "\n".join(problems))
    assert not failures, "\n\n".join(failures)
    assert len(engines) > 1 or CHAINS < 6, f"every chain ran on {engines}: the tensor-core engines went untested"
