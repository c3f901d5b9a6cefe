"""Pools over the features on the CPU (ops/pool.py, plan/weight_pool.py; the GPU checks are tests/test_gpu_pool.py):
the front end reads AvgPool1d / F.avg_pool1d on x.unsqueeze(1) ... .squeeze(1) with torch's arguments, the windows
are torch's, the pooled Linear is the algebra's (in fp64), the plan and the module say so, the kernels and the
binding compile, and what is not generated is refused by name."""
import dataclasses
import itertools
import shutil
import subprocess
import sysconfig

import pytest
import torch
import torch.nn.functional as F

from helpers import REPO
from test_chains import TORCH_NVCC_FLAGS
from test_compile import NVCC, compiles_without_spills
from test_from_model import _model_file

import fusegen
from fusegen.codegen import render_binding, render_cuda
from fusegen.frontend import ModelError, model_spec
from fusegen.ops.pool import pooled_width, window
from fusegen.plan.weight_pool import split_weight_pool

MODELS = REPO / "tests" / "models"
POOL_FILES = sorted(p.name for p in MODELS.glob("pool_avg_*.py"))


def test_the_windows_are_torchs():
    """pooled_width and window against F.avg_pool1d in fp64, over widths, kernels, strides, paddings, ceil_mode and
    count_include_pad (the last window of ceil_mode clipped at the padding, as torch's)."""
    for n, k, s, p, ceil, count in itertools.product([1, 2, 5, 16, 17, 33], [1, 2, 3, 4, 5, 16], [1, 2, 3, 16],
                                                     [0, 1, 2], [False, True], [True, False]):
        if p > k // 2 or k > n + 2 * p:
            continue
        x = torch.randn(3, 1, n, dtype=torch.float64)
        ref = F.avg_pool1d(x, k, s, p, ceil, count)[:, 0]
        assert pooled_width(n, k, s, p, ceil) == ref.shape[1], (n, k, s, p, ceil)
        ours = torch.stack([x[:, 0, a:b].sum(1) / d for a, b, d in
                            (window(w, n, k, s, p, count) for w in range(ref.shape[1]))], 1)
        assert torch.allclose(ours, ref, rtol=1e-12, atol=1e-15), (n, k, s, p, ceil, count)


@pytest.mark.parametrize("name", POOL_FILES)
def test_the_pooled_linear_is_the_pool_of_the_linear(name):
    """x . W'^T + b' (W' the weight's rows averaged over the plan's windows, in fp64) equals the reference's pool of
    its Linear, in fp64: the rewrite's algebra on every file's arguments."""
    spec = model_spec(MODELS / name)[0]
    pool, inner = split_weight_pool(spec)
    assert pool is not None and inner.hidden_size == spec.features == pool.hidden_out
    torch.manual_seed(0)
    x = torch.randn(5, spec.input_size, dtype=torch.float64)
    w = torch.randn(spec.hidden_size, spec.input_size, dtype=torch.float64)
    b = torch.randn(spec.hidden_size, dtype=torch.float64)
    p = dict(spec.stages[0].params)
    ref = F.avg_pool1d((x @ w.T + b).unsqueeze(1), p["kernel_size"], p["stride"], p["padding"], p["ceil_mode"],
                       p["count_include_pad"]).squeeze(1)
    wp = torch.stack([w[a:e].sum(0) / d for a, e, d in pool.windows()])
    bp = torch.stack([b[a:e].sum() / d for a, e, d in pool.windows()])
    assert torch.allclose(x @ wp.T + bp, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", POOL_FILES)
def test_the_plan_and_the_module_say_the_pool_runs_on_the_weight(name, tmp_path):
    spec = model_spec(MODELS / name)[0]
    p = fusegen.plan(spec)
    assert p.weight_pool is not None and p.spec.hidden_size == spec.features
    assert p.spec.chain[0].kind != "avg_pool" and "apool" in p.module_name
    assert any("AvgPool1d" in r and "pooled alike" in r for r in p.rewrites), p.rewrites
    source = fusegen.write_module(p, tmp_path).read_text()
    assert "class _PoolWeight" in source and f"POOL_IN = {spec.hidden_size}" in source
    assert source.startswith('"""Fused Linear -> AvgPool1d('), source.splitlines()[0]
    assert f"a Linear ({spec.input_size} -> {spec.hidden_size}" in " ".join(source.split())
    assert "## Rewrites that fired" in source and "AvgPool1d" in source.split("## Rewrites that fired")[1]


@pytest.mark.parametrize("spelling", [
    "x = self.pool(x.unsqueeze(1)).squeeze(1)",
    "x = F.avg_pool1d(x.unsqueeze(1), 4).squeeze(dim=1)",
    "x = torch.squeeze(F.avg_pool1d(torch.unsqueeze(x, 1), kernel_size=4, stride=4), 1)",
    "x = F.avg_pool1d(x.unsqueeze(-2), (4,), stride=(4,), padding=0).squeeze(-2)",
])
def test_every_spelling_reads_as_one_pool(spelling, tmp_path):
    path = _model_file(tmp_path, ["self.pool = nn.AvgPool1d(4)"], ["x = self.fc(x)", spelling, "return torch.relu(x)"])
    spec = model_spec(path)[0]
    assert [s.kind for s in spec.stages] == ["avg_pool", "relu"] and spec.features == 12
    assert dict(spec.stages[0].params) == {"kernel_size": 4, "stride": 4, "padding": 0, "ceil_mode": False,
                                           "count_include_pad": True}


@pytest.mark.parametrize("init, body, words", [
    (["self.pool = nn.AdaptiveMaxPool1d(4)"], ["x = self.pool(self.fc(x).unsqueeze(1)).squeeze(1)"],
     "AdaptiveMaxPool1d on x.unsqueeze(1)"),
    ([], ["x = F.lp_pool1d(self.fc(x).unsqueeze(1), 2.0, 2).squeeze(1)"], "F.lp_pool1d"),
    (["self.pool = nn.AvgPool1d(2)"], ["x = torch.relu(self.fc(x))", "x = self.pool(x.unsqueeze(1)).squeeze(1)"],
     "after other stages"),
    (["self.pool = nn.AvgPool1d(2)"], ["x = self.pool(self.fc(x).unsqueeze(1))"], "(batch, 1, features) view"),
    ([], ["x = self.fc(x).unsqueeze(1).squeeze(1)"], "unsqueeze"),
    (["self.pool = nn.AvgPool1d(2)"], ["x = self.pool(self.fc(x).unsqueeze(1)) * 2.0", "x = x.squeeze(1)"],
     "an op on x.unsqueeze(1)"),
    (["self.pool = nn.AvgPool1d(2, padding=2)"], ["x = self.pool(self.fc(x).unsqueeze(1)).squeeze(1)"],
     "over half its kernel_size"),
    (["self.pool = nn.AvgPool1d(2)"], ["x = self.pool(self.fc(x).unsqueeze(0)).squeeze(0)"], "unsqueeze(dim=0)"),
])
def test_what_is_not_generated_is_refused_by_name(init, body, words, tmp_path):
    path = _model_file(tmp_path, init, body + ["return x"])
    with pytest.raises(ModelError) as e:
        model_spec(path)
    assert words in str(e.value) and f"{path.name}:" in str(e.value), str(e.value)


@pytest.mark.parametrize("change", [dict(dtype="bfloat16"), dict(dtype="float16"), dict(autocast="bfloat16")])
def test_a_16_bit_average_pool_runs_in_the_row_kernels(change):
    """In 16 bits the reference averages z rounded to 16 bits: the row kernels read z's windows as it holds them
    (templates/ops/pool_avg_pool.cuh.j2) instead of the pooled weight."""
    spec = dataclasses.replace(model_spec(MODELS / "pool_avg_padded_gn.py")[0], **change)
    p = fusegen.plan(spec)
    assert p.weight_pool is None and p.group_strategy == "rows" and p.row_pool.kind == "avg_pool"
    assert (p.spec.hidden_size, p.spec.features) == (spec.hidden_size, spec.features)
    assert "struct P0" in render_cuda(p) and "__fdiv_rn(sum, divisor(w, nz))" in render_cuda(p)


@pytest.mark.skipif(NVCC is None, reason="nvcc not found")
@pytest.mark.parametrize("name", POOL_FILES)
def test_16_bit_pool_kernels_compile_without_spills(name, tmp_path):
    spec = dataclasses.replace(model_spec(MODELS / name)[0], dtype="bfloat16")
    compiles_without_spills(spec, tmp_path, fixed_sizes=False)  # (the row kernels' pool: the GPU tests' build)


@pytest.mark.skipif(NVCC is None, reason="nvcc not found")
@pytest.mark.parametrize("name", POOL_FILES)
def test_pool_kernels_compile_without_spills(name, tmp_path):
    cu = tmp_path / "kernels.cu"
    for plan_arch, arch in (((8, 0), "-arch=sm_80"), ((9, 0), "-arch=sm_90a")):  # mma.sync, wgmma
        cu.write_text(render_cuda(fusegen.plan(model_spec(MODELS / name)[0], arch=plan_arch)))
        r = subprocess.run([NVCC, arch, "-O3", "-c", str(cu), "-o", str(tmp_path / "k.o"), "-Xptxas", "-v",
                            *TORCH_NVCC_FLAGS], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        assert r.returncode == 0, r.stdout[-4000:]
        pool_warnings = [ln for ln in r.stdout.splitlines() if "warning" in ln and "pool" in ln.split("warning", 1)[1].lower()]
        assert not pool_warnings, "\n".join(pool_warnings)
        assert "pool_weight_grad_kernel" in r.stdout and "pool_weight_kernel" in r.stdout
        spills, kernel = [], ""
        for ln in r.stdout.splitlines():  # the pool's kernels (the GEMM engines' have tests of their own)
            kernel = ln.split("'")[1] if "Compiling entry function" in ln else kernel
            if "pool_weight" in kernel and "spill" in ln and " 0 bytes spill stores, 0 bytes spill loads" not in ln:
                spills.append(f"{kernel}: {ln.strip()}")
        assert not spills, "\n".join(spills)


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")
def test_pool_binding_compiles_against_cpu_torch_headers(tmp_path):
    from torch.utils import cpp_extension

    cpp = tmp_path / "binding.cpp"
    cpp.write_text(render_binding(fusegen.plan(model_spec(MODELS / "pool_avg_padded_gn.py")[0])))
    includes = list(cpp_extension.include_paths()) + [sysconfig.get_paths()["include"]]
    cmd = ["g++", "-std=c++20", "-fsyntax-only", "-DTORCH_EXTENSION_NAME=fusegen_binding_check"]
    r = subprocess.run(cmd + [f"-I{d}" for d in includes] + [str(cpp)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    assert r.returncode == 0, r.stderr[-6000:]
    assert "pool_weight_grad_call" in cpp.read_text()
