"""MaxPool1d over the features on the CPU (ops/pool.py MAX_POOL, templates/ops/pool_max_pool.cuh.j2; the GPU checks
are the pool_max_*.py files in tests/test_gpu_chains.py and tests/test_gpu_max_pool.py): the front end reads
nn.MaxPool1d / F.max_pool1d on x.unsqueeze(1) ... .squeeze(1) with torch's arguments, the windows and the element
each window's gradient goes to are torch's, the plan runs it in the row kernels at two widths, the module has the
pooled output, and what is not generated is refused by name."""
import itertools
import shutil
import subprocess
import sysconfig

import pytest
import torch
import torch.nn.functional as F

from helpers import REPO
from test_compile import NVCC, compiles_without_spills
from test_from_model import _model_file

import fusegen
from fusegen.codegen import render_binding, render_cuda
from fusegen.frontend import ModelError, model_spec
from fusegen.ops.pool import max_window, pooled_width
from fusegen.spec import SpecError, Stage

MODELS = REPO / "tests" / "models"
FILES = sorted(p.name for p in MODELS.glob("pool_max_*.py"))


def _torch_arg(x, w, n, k, s, p, d):
    """The element torch's kernel takes in window w of row x: the first maximum, a NaN over anything (the last)."""
    best, at = None, None
    for j in max_window(w, n, k, s, p, d):
        v = x[j].item()
        if at is None or v > best or v != v:
            best, at = v, j
    return best, at


def test_the_windows_and_their_elements_are_torchs():
    """pooled_width (with dilation) and max_window's arg rule against F.max_pool1d(return_indices=True), over
    widths, kernels, strides, paddings, dilations and ceil_mode, on rows with ties, -inf and NaN."""
    for n, k, s, p, d, ceil in itertools.product([1, 2, 5, 16, 17], [1, 2, 3, 4], [1, 2, 3], [0, 1, 2], [1, 2, 3],
                                                 [False, True]):
        if p > k // 2 or pooled_width(n, k, s, p, ceil, d) < 1:
            continue
        x = torch.randint(-2, 3, (n,), dtype=torch.float64)  # many ties
        if n > 3:
            x[1], x[3] = float("-inf"), float("nan")
        ref, idx = F.max_pool1d(x.view(1, 1, n), k, s, p, d, ceil, return_indices=True)
        assert pooled_width(n, k, s, p, ceil, d) == ref.shape[-1], (n, k, s, p, d, ceil)
        for w in range(ref.shape[-1]):
            if not max_window(w, n, k, s, p, d):
                continue  # only padding: refused by the front end (torch's index lies outside the row)
            best, at = _torch_arg(x, w, n, k, s, p, d)
            assert at == idx[0, 0, w].item(), (n, k, s, p, d, ceil, w, x.tolist())
            assert (best != best and ref[0, 0, w] != ref[0, 0, w]) or best == ref[0, 0, w].item()


@pytest.mark.parametrize("name", FILES)
def test_the_plan_runs_the_pool_in_the_row_kernels(name, tmp_path):
    spec = model_spec(MODELS / name)[0]
    p = fusegen.plan(spec)
    assert spec.chain[0].kind == "max_pool" and spec.feature_pool and spec.features != spec.hidden_size
    assert p.group_strategy == "rows" and p.row_pool is not None and p.row_pool.role == "pool"
    assert p.weight_pool is None and p.spec.hidden_size == spec.hidden_size and "mpool" in p.module_name
    source = fusegen.write_module(p, tmp_path).read_text()
    assert f"FEATURES = {spec.features}" in source and f"HIDDEN_SIZE = {spec.hidden_size}" in source
    assert source.startswith('"""Fused Linear -> MaxPool1d('), source.splitlines()[0]
    cuda = render_cuda(p)
    assert "struct P0" in cuda and "chain_width(NZ)" in cuda and "pairs[col] = make_float2(g0" in cuda


def test_the_pooled_width_is_what_later_stages_see():
    spec = model_spec(MODELS / "pool_max_overlap_gn_gelu.py")[0]
    assert (spec.hidden_size, spec.features, spec.group_width) == (96, 48, 8)
    assert dict(spec.stages[0].params) == {"kernel_size": 4, "stride": 2, "padding": 1, "dilation": 1,
                                           "ceil_mode": False}
    assert model_spec(MODELS / "pool_max_wider_relu_residual.py")[0].features == 34  # one window more


@pytest.mark.parametrize("spelling", [
    "x = self.pool(x.unsqueeze(1)).squeeze(1)",
    "x = F.max_pool1d(x.unsqueeze(1), 4).squeeze(dim=1)",
    "x = torch.squeeze(F.max_pool1d(torch.unsqueeze(x, 1), kernel_size=4, stride=4), 1)",
    "x = F.max_pool1d(x.unsqueeze(-2), (4,), stride=(4,), padding=0, dilation=1).squeeze(-2)",
])
def test_every_spelling_reads_as_one_max_pool(spelling, tmp_path):
    path = _model_file(tmp_path, ["self.pool = nn.MaxPool1d(4)"], ["x = self.fc(x)", spelling, "return torch.relu(x)"])
    spec = model_spec(path)[0]
    assert [s.kind for s in spec.stages] == ["max_pool", "relu"] and spec.features == 12
    assert dict(spec.stages[0].params) == {"kernel_size": 4, "stride": 4, "padding": 0, "dilation": 1,
                                           "ceil_mode": False}


@pytest.mark.parametrize("init, body, words", [
    (["self.pool = nn.MaxPool1d(2, return_indices=True)"], ["x, i = self.pool(self.fc(x).unsqueeze(1))",
                                                            "x = x.squeeze(1)"], "return_indices"),
    ([], ["x = F.max_pool1d(self.fc(x).unsqueeze(1), 2, return_indices=True)[0].squeeze(1)"], "return_indices"),
    (["self.pool = nn.MaxPool1d(2)"], ["x = torch.relu(self.fc(x))", "x = self.pool(x.unsqueeze(1)).squeeze(1)"],
     "after other stages"),
    (["self.pool = nn.MaxPool1d(3, padding=2)"], ["x = self.pool(self.fc(x).unsqueeze(1)).squeeze(1)"],
     "over half its kernel_size"),
    (["self.pool = nn.MaxPool1d(64)"], ["x = self.pool(self.fc(x).unsqueeze(1)).squeeze(1)"], "makes no window"),
    (["self.pool = nn.MaxPool1d(2, stride=1, padding=1, dilation=49)"],
     ["x = self.pool(self.fc(x).unsqueeze(1)).squeeze(1)"], "window 0 holds only padding"),
    (["self.pool = nn.MaxPool1d(2)"], ["h = self.fc(x)", "x = self.pool(h.unsqueeze(1)).squeeze(1)",
                                       "x = x + h[:, :24]"], ""),
])
def test_what_is_not_generated_is_refused_by_name(init, body, words, tmp_path):
    path = _model_file(tmp_path, init, body + ["return x"])
    with pytest.raises(ModelError) as e:
        model_spec(path)
    assert words in str(e.value) and f"{path.name}:" in str(e.value), str(e.value)


def test_a_residual_across_the_pool_and_a_batchnorm_after_it_are_refused():
    base = model_spec(MODELS / "pool_max_wider_relu_residual.py")[0]
    with pytest.raises(SpecError, match="before the MaxPool1d"):
        fusegen.Spec(base.input_size, base.hidden_size, 1, stages=base.stages + (Stage("residual", (("src", 0),)),))
    bn = next(s for s in model_spec(MODELS / "bn_relu.py")[0].stages if s.kind == "batch_norm")
    with pytest.raises(SpecError, match="BatchNorm after a MaxPool1d"):
        fusegen.plan(fusegen.Spec(base.input_size, base.hidden_size, 1, stages=(base.stages[0], bn)))


@pytest.mark.skipif(NVCC is None, reason="nvcc not found")
@pytest.mark.parametrize("name, fixed", [(f, False) for f in FILES] + [("pool_max_sum_scale.py", True)])
def test_max_pool_kernels_compile_without_spills(name, fixed, tmp_path):
    # (the run-time sizes the GPU tests build; once with the sizes compiled in, as from-model writes them)
    compiles_without_spills(model_spec(MODELS / name)[0], tmp_path, fixed_sizes=fixed)


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")
def test_max_pool_binding_compiles_against_cpu_torch_headers(tmp_path):
    from torch.utils import cpp_extension

    cpp = tmp_path / "binding.cpp"
    cpp.write_text(render_binding(fusegen.plan(model_spec(MODELS / "pool_max_dilated_softmax_scale.py")[0])))
    includes = list(cpp_extension.include_paths()) + [sysconfig.get_paths()["include"]]
    cmd = ["g++", "-std=c++20", "-fsyntax-only", "-DTORCH_EXTENSION_NAME=fusegen_binding_check"]
    r = subprocess.run(cmd + [f"-I{d}" for d in includes] + [str(cpp)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    assert r.returncode == 0, r.stderr[-6000:]
    assert "fg::pooled_features(" in cpp.read_text()
