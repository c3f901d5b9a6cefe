"""The row-sum rewrite on the CPU (plan/row_sum.py; the GPU checks are tests/test_gpu_row_sum.py): where it fires
and where it must not, that the plan, the module and its explanation say so, and that its kernels and binding
compile (nvcc, sm_80 and sm_90, no spills; g++ against the CPU torch headers)."""
import dataclasses
import shutil
import subprocess
import sysconfig

import pytest

from helpers import REPO, import_file
from test_chains import TORCH_NVCC_FLAGS
from test_compile import NVCC
from test_from_model import _model_file

import fusegen
from fusegen.codegen import render_binding, render_cuda
from fusegen.frontend import model_spec
from fusegen.plan import ROWS, Plan, RowSumPlan

MODELS = REPO / "tests" / "models"
ROW_SUM_FILES = sorted(p.name for p in MODELS.glob("rowsum_*.py")) + ["row_mean_flat_tanh.py",
                                                                      "row_sum_keepdim_relu.py"]

P = ["self.p = nn.Parameter(torch.rand(48) + 0.5)"]
Q = P + ["self.q = nn.Parameter(torch.randn(1, 48))"]
FIRES = [
    ([], ["x = self.fc(x)", "x = x.sum(dim=1)"]),
    ([], ["x = self.fc(x)", "x = torch.mean(x, dim=1, keepdim=True)", "x = torch.relu(x)"]),
    ([], ["x = self.fc(x) / 2", "x = torch.sum(x, 1, keepdim=True)", "x = x * 1.5"]),
    ([], ["x = self.fc(x) + 1.0", "x = 3.0 - x", "x = -x", "x = x + x", "x = x.sum(1)", "x = torch.tanh(x)"]),
    (Q, ["x = self.fc(x) * self.p", "x = x - self.q", "x = x.mean(1)", "x = F.gelu(x)"]),
    (P, ["x = self.fc(x) / self.p", "x = x.sum(1, keepdim=True)", "x = x.amax(dim=1, keepdim=True)",
         "x = torch.logsumexp(x, dim=1, keepdim=True)"]),
    (["self.s = nn.Parameter(torch.tensor(2.0))"], ["x = self.fc(x) * self.s", "x = x.sum(1)"]),  # a scalar one
]
DOES_NOT_FIRE = [
    ([], ["x = torch.relu(self.fc(x))", "x = x.sum(1)"]),  # not affine before the sum
    ([], ["x = self.fc(x)", "x = x.amax(dim=1)"]),  # not a sum
    ([], ["x = self.fc(x)", "x = torch.logsumexp(x, dim=1)"]),
    ([], ["x = self.fc(x)", "x = torch.softmax(x, dim=1)", "x = x.sum(1)"]),
    (P, ["x = self.fc(x) * self.p", "x = x / self.p", "x = x.sum(1)"]),  # one parameter twice
    (P, ["x = torch.maximum(self.fc(x), self.p)", "x = x.sum(1)"]),  # not affine
    ([], ["x = self.fc(x)", "y = x.sum(1, keepdim=True)", "x = x - y"]),  # the sum goes back onto the tensor
]


def _plan_of(tmp_path, init, body, **kw):
    path = _model_file(tmp_path, init, body + ["return " + body[-1].split(" = ")[0]])
    return fusegen.plan(model_spec(path)[0], **kw)


@pytest.mark.parametrize("init, body", FIRES, ids=[" ; ".join(b) for _, b in FIRES])
def test_the_rewrite_fires_where_the_algebra_holds(tmp_path, init, body):
    p = _plan_of(tmp_path, init, body)
    assert isinstance(p, RowSumPlan), p.summary
    assert "GEMV" in p.summary and p.rewrites
    # off on request, or when the caller asks for a GEMM engine: the row kernels' plan
    off = _plan_of(tmp_path, init, body, rewrite=False)
    assert isinstance(off, Plan) and off.group_strategy == ROWS


@pytest.mark.parametrize("init, body", DOES_NOT_FIRE, ids=[" ; ".join(b) for _, b in DOES_NOT_FIRE])
def test_the_rewrite_stays_off_where_it_does_not_hold(tmp_path, init, body):
    assert isinstance(_plan_of(tmp_path, init, body), Plan)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_the_rewrite_serves_every_element_type(dtype, tmp_path):
    """Any element type (the sums are double; x, W, the output and the gradients in the layer's type); under
    autocast a row reduction is not modelled at all (the Spec refuses it)."""
    spec = dataclasses.replace(model_spec(MODELS / "rowsum_channel_affine_mean.py")[0], dtype=dtype)
    p = fusegen.plan(spec)
    assert isinstance(p, RowSumPlan) and p.element.name == dtype
    module = import_file(fusegen.write_module(p, tmp_path))
    assert str(module.DTYPE) == f"torch.{dtype}"
    assert (p.element.short in p.module_name) and (p.element.short in p.kernel_uri)


@pytest.mark.parametrize("name", ROW_SUM_FILES)
def test_the_module_and_its_explanation_say_which_rewrite_fired(name, tmp_path):
    spec = model_spec(MODELS / name)[0]
    p = fusegen.plan(spec)
    path = fusegen.write_module(p, tmp_path)
    explanation = path.with_suffix(".md").read_text()
    assert "## Rewrites that fired" in explanation and "GEMV" in explanation
    module = import_file(path)
    assert module.REWRITE == p.rewrites[0] and module.MAINLOOP == "row_sum_gemv"
    if p.scalar_chan_slots:  # its gradient has its one value (the fake shapes torch.compile traces with too)
        assert "weight.new_empty(1)" in path.read_text()
    assert "Plan: rewrite: row" in module.__doc__
    # no torch compute in the module: its kernels only (the rule every generated module keeps)
    source = path.read_text()
    for banned in ("torch.matmul", "F.linear", ".sum(", ".mean(", "torch.mm(", "@ "):
        assert banned not in source.split("# Sources")[0], banned


@pytest.mark.skipif(NVCC is None, reason="nvcc not found")
@pytest.mark.parametrize("name", ROW_SUM_FILES + ["rowsum_channel_affine_mean.py bfloat16",
                                                  "rowsum_matmul_div_sum_scale.py float16"])
def test_row_sum_kernels_compile_without_spills(name, tmp_path):
    name, *element = name.split()
    spec = model_spec(MODELS / name)[0]
    p = fusegen.plan(dataclasses.replace(spec, dtype=element[0]) if element else spec)
    cu = tmp_path / "kernels.cu"
    cu.write_text(render_cuda(p))
    for arch in ("-arch=sm_80", "-arch=sm_90"):  # (under torch's flags: no implicit half conversions)
        r = subprocess.run([NVCC, arch, "-O3", "-c", str(cu), "-o", str(tmp_path / "k.o"), "-Xptxas", "-v",
                            *TORCH_NVCC_FLAGS],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        assert r.returncode == 0, r.stdout[-4000:]
        assert "warning" not in r.stdout, r.stdout[-4000:]
        assert " 0 bytes spill stores" in r.stdout and "bytes spill stores" in r.stdout
        spills = [ln for ln in r.stdout.splitlines() if "spill" in ln and not ln.strip().startswith("0 bytes")
                  and " 0 bytes spill stores, 0 bytes spill loads" not in ln]
        assert not spills, "\n".join(spills)


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")
@pytest.mark.parametrize("name", ["rowsum_channel_affine_mean.py", "rowsum_scalar_params.py"])
def test_row_sum_binding_compiles_against_cpu_torch_headers(name, tmp_path):
    from torch.utils import cpp_extension

    cpp = tmp_path / "binding.cpp"
    cpp.write_text(render_binding(fusegen.plan(model_spec(MODELS / name)[0])))
    includes = list(cpp_extension.include_paths()) + [sysconfig.get_paths()["include"]]
    cmd = ["g++", "-std=c++20", "-fsyntax-only", "-DTORCH_EXTENSION_NAME=fusegen_binding_check"]
    r = subprocess.run(cmd + [f"-I{d}" for d in includes] + [str(cpp)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    assert r.returncode == 0, r.stderr[-6000:]
