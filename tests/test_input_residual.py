"""A residual of the layer's own input on the CPU (ops/elementwise.py's input_residual,
templates/ops/stage_input_residual.cuh.j2; the GPU checks are tests/test_gpu_input_residual.py): the front end reads
each spelling (detached too), refuses what torch would broadcast otherwise and what is not generated, the plan keeps
x for the kernels and its gradient for dx, and the kernels and binding compile on both engines without spills."""
import re

import pytest

from helpers import REPO
from test_compile import NVCC, compiles_without_spills
from test_from_model import _model_file

import fusegen
from fusegen.codegen import render_binding, render_cuda
from fusegen.frontend import ModelError, model_spec, trace_chain
from fusegen.spec import SpecError

MODELS = REPO / "tests" / "models"
FILES = ["stage_input_residual.py", "input_residual_gn.py", "input_residual_rows.py"]


@pytest.mark.parametrize("expr,detached", [
    ("h + x", False), ("x + h", False), ("torch.add(h, x)", False), ("x.add(h)", False), ("h + x.detach()", True),
    ("h + x.clone().detach()", True), ("torch.add(x.detach(), h)", True)])
def test_spellings(tmp_path, expr, detached):
    path = _model_file(tmp_path, [], ["h = torch.relu(self.fc(x))", f"return {expr}"], hidden=32)
    stages = trace_chain(path).stages
    assert [(s.kind, s.params) for s in stages] == [("relu", ()), ("input_residual", (("detached", True),) if detached
                                                                   else ())], expr


@pytest.mark.parametrize("body,hidden,why", [
    (["return torch.relu(self.fc(x)) + x"], 48, "x has 32 features, the value 48"),
    (["return torch.relu(self.fc(x)) - x"], 32, "a sub of the layer's input: its residual add"),
    (["return self.fc(x).sum(dim=1, keepdim=True) + x"], 32, "added to a \\(batch, 1\\) row value"),
])
def test_refusals_name_what_is_generated(tmp_path, body, hidden, why):
    with pytest.raises(ModelError, match=why):
        trace_chain(_model_file(tmp_path, [], body, hidden=hidden))


def test_a_residual_of_the_input_before_the_groupnorm_is_refused_by_the_planner(tmp_path):
    path = _model_file(tmp_path, ["self.gn = nn.GroupNorm(4, 32)"], ["return self.gn(torch.relu(self.fc(x)) + x)"],
                       hidden=32)
    with pytest.raises(SpecError, match="before the GroupNorm"):
        fusegen.plan(model_spec(path)[0])


def test_the_second_layers_input_is_not_the_models(tmp_path):
    """In an MLP, x is the first layer's input: the second layer adding it is a residual across layers (refused)."""
    path = _model_file(tmp_path, ["self.fc2 = nn.Linear(32, 32)"],
                       ["return self.fc2(torch.relu(self.fc(x))) + x"], hidden=32)
    from fusegen.frontend import model_specs
    with pytest.raises(ModelError, match="the model's input reaches a layer after the first GEMM"):
        model_specs(path)


def test_the_plan_reads_x_and_keeps_its_gradient_unless_detached(tmp_path):
    p = fusegen.plan(model_spec(MODELS / "stage_input_residual.py")[0])
    assert p.input_residual and p.input_grad
    binding = render_binding(p)
    assert "add_input_grad" in binding and "torch::Tensor dres = need_x ?" in binding
    path = _model_file(tmp_path, [], ["return torch.relu(self.fc(x)) + x.detach()"], hidden=32)
    q = fusegen.plan(model_spec(path)[0])
    assert q.input_residual and not q.input_grad and "add_input_grad" not in render_binding(q)
    plain = fusegen.plan(model_spec(MODELS / "stage_relu_scale_tanh.py")[0])
    dres = re.compile(r"\bdres\b")  # (a word: "addresses" occurs in the engines' comments)
    assert dres.search(render_cuda(p)) and not plain.input_residual and not dres.search(render_cuda(plain))


def _rows_backward_write(function, stores, loads):
    """sm_90a's ptxas spills 8 bytes of the row kernels' backward when it writes the residual's gradient (every pass
    that walks the chain back writes it; the same chain detached has none). That kernel streams z and the gradient
    once a pass: 8 bytes a thread in local memory cost nothing there."""
    return "rows_backward_kernel" in function and stores <= 8 and loads <= 8


@pytest.mark.skipif(NVCC is None, reason="nvcc not found")
@pytest.mark.parametrize("name", FILES)
def test_kernels_compile_without_spills(name, tmp_path):
    """(The binding's compile against the CPU torch headers: test_compile.py's BINDING_MODELS has input_residual_gn.)"""
    for _, ptxas in compiles_without_spills(model_spec(MODELS / name)[0], tmp_path, _rows_backward_write):
        assert "add_input_grad_kernel" in ptxas


@pytest.mark.skipif(NVCC is None, reason="nvcc not found")
def test_under_autocast_the_residual_promotes_to_float32(tmp_path):
    """Autocast casts only the Linear's operands: x stays float32, so v + x of a 16-bit v is float32 from there on
    (the stages after it hold float32 values, the output is float32); the kernels compile on both engines."""
    import dataclasses

    spec = dataclasses.replace(model_spec(MODELS / "stage_input_residual.py")[0], autocast="bfloat16")
    p = fusegen.plan(spec, arch=(9, 0))
    kinds = [s.kind for s in spec.chain]
    first = kinds.index("input_residual")
    assert [s.rounds for s in p.stages] == ["as_op"] * first + ["as_elem"] * (len(kinds) - first), p.stages
    assert p.converts and p.output.name == "float32" and p.input_grad
    compiles_without_spills(spec, tmp_path, _rows_backward_write)
