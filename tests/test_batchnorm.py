"""BatchNorm1d on the CPU: what the front end reads from the module (its constants and the names of its parameters and
buffers), the planner's column strategy, what the generated module reads at each call (train or eval, momentum), and
the chains and forms that stay refused. On the GPU: test_gpu_chains (training, every gradient against fp64) and
test_gpu_batchnorm (running statistics after training steps, eval)."""
import pytest
import torch
import torch.nn as nn

from helpers import REPO, import_file

import fusegen
from fusegen.codegen.render import layer
from fusegen.frontend import ModelError, model_spec, trace_model
from fusegen.plan import COLS
from fusegen.spec import Spec, SpecError, Stage

MODELS = REPO / "tests" / "models"


def _bn(name="bn", eps=1e-5, momentum=0.1, affine=True, track=True):
    return (("module", name), ("eps", eps), ("momentum", momentum), ("affine", affine),
            ("track_running_stats", track), ("weight", f"{name}.weight" if affine else None),
            ("bias", f"{name}.bias" if affine else None),
            ("running_mean", f"{name}.running_mean" if track else None),
            ("running_var", f"{name}.running_var" if track else None),
            ("num_batches_tracked", f"{name}.num_batches_tracked" if track else None))


@pytest.mark.parametrize("name,kinds,params", [
    ("bn_relu.py", ("batch_norm", "relu"), _bn()),
    ("bn_momentum_none_residual.py", ("batch_norm", "gelu", "residual", "scalar"), _bn("norm", 1e-3, None)),
    ("bn_no_affine_params.py", ("leaky_relu", "channel", "batch_norm", "tanh"), _bn(momentum=0.3, affine=False)),
    ("bn_no_running_stats.py", ("batch_norm", "sigmoid", "channel"), _bn(track=False)),
])
def test_the_front_end_reads_the_batchnorm_module(name, kinds, params):
    spec, chain = model_spec(MODELS / name)
    assert tuple(s.kind for s in chain.stages) == kinds
    assert spec.chain[spec.column_norm].params == params
    p = fusegen.plan(spec)
    assert p.group_strategy == COLS and p.needs_z
    assert [s.role for s in p.stages][spec.column_norm] == "cnorm"


def test_the_module_reads_mode_and_momentum_at_each_call_and_names_its_buffers():
    spec, _ = model_spec(MODELS / "bn_momentum_none_residual.py")
    lay = layer(fusegen.plan(spec))
    assert lay.scalar_exprs == ["float(self.norm.training or self.norm.running_mean is None)", "0.5"]
    assert lay.momentum_expr == "(-1.0 if self.norm.momentum is None else float(self.norm.momentum))"
    assert [b["expr"] for b in lay.buffers] == ["self.norm.running_mean", "self.norm.running_var",
                                                 "self.norm.num_batches_tracked"]
    assert lay.eps_expr == "0.001" and [t["name"] for t in lay.tensors] == ["weight", "bias", "gamma", "beta"]
    spec, _ = model_spec(MODELS / "bn_no_running_stats.py")
    assert [b["expr"] for b in layer(fusegen.plan(spec)).buffers] == ["x.new_empty(0)"] * 3


def test_the_generated_module_switches_with_train_and_eval(tmp_path):
    """On the CPU the kernels cannot run; what ModelNew decides before them can: batch 1 in training is refused
    with torch's message (before the device check), in eval it reaches the device check."""
    spec, _ = model_spec(MODELS / "bn_relu.py")
    module = import_file(fusegen.write_module(fusegen.plan(spec, arch=(9, 0)), tmp_path))
    new = module.ModelNew(33, 40)
    assert [n for n, _ in new.named_buffers()] == ["bn.running_mean", "bn.running_var", "bn.num_batches_tracked"]
    with pytest.raises(ValueError, match="runs on CUDA only"):
        new(torch.rand(1, 33))  # the input check comes first
    source = (tmp_path / f"{fusegen.plan(spec, arch=(9, 0)).module_name}.py").read_text()
    assert 'mutates_args=("running_mean", "running_var",' in source
    assert "if self.bn.training and self.bn.running_mean is not None:" in source


def test_batchnorm_beside_another_reduction_and_other_forms_are_refused():
    bn = Stage("batch_norm", _bn())
    with pytest.raises(SpecError, match="at most one BatchNorm"):
        Spec(8, 8, 1, stages=(bn, bn))
    gn = Stage("group_norm", (("num_groups", 2), ("eps", 1e-5), ("affine", False), ("weight", None), ("bias", None)))
    with pytest.raises(SpecError, match="a BatchNorm with a GroupNorm or a row reduction"):
        fusegen.plan(Spec(8, 8, 2, stages=(gn, bn)))
    with pytest.raises(SpecError, match="a BatchNorm with a GroupNorm or a row reduction"):
        fusegen.plan(Spec(8, 8, 1, stages=(bn, Stage("softmax"))))

    class Wrong(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 6)
            self.bn = nn.BatchNorm1d(5)

        def forward(self, x):
            return self.bn(self.fc(x)[:, :5])

    with pytest.raises(ModelError):
        trace_model(Wrong())

    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 6)
            self.a, self.b = nn.BatchNorm1d(6), nn.BatchNorm1d(6)

        def forward(self, x):
            return self.b(self.a(self.fc(x)))

    with pytest.raises(ModelError, match="a second BatchNorm"):
        trace_model(Two())
