"""Several GEMMs in one model (Linear -> chain -> Linear -> chain ...), on the CPU: the front end reads one layer a
GEMM, the composite module keeps the model file's constructor and embeds each layer's module exactly, and the
accuracy bar reads every layer's kinks and GEMM roundings (tests/test_gpu_layers.py runs them)."""
import dataclasses
import pathlib

import pytest
import torch

from helpers import REPO, import_file

import fusegen
from fusegen.codegen import render, render_layers, write_layers
from fusegen.frontend import ModelError, load_model_file, model_specs, trace_file_layers
from fusegen.tools.accuracy import compare_models
from fusegen.tools.cli import main

MODELS = REPO / "tests" / "models"

# file -> each layer's (input, hidden, weight, bias, weight stored (in, out), stage kinds)
LAYERS = {
    "layers_mlp_relu.py": [(32, 48, "fc.weight", "fc.bias", False, ["relu"]),
                           (48, 48, "fc2.weight", "fc2.bias", False, ["identity"])],
    "layers_mlp_gn.py": [(40, 192, "up.0.weight", "up.0.bias", False, ["gelu"]),
                         (192, 96, "down.weight", "down.bias", False, ["group_norm", "leaky_relu", "scalar"])],
    "layers_mlp_rowsum.py": [(20, 28, "fc1.weight", "fc1.bias", False, ["relu"]),
                             (28, 28, "fc2.weight", "fc2.bias", False, ["scalar", "row_reduce"])],
    "layers_three_gemms.py": [(24, 36, "w1", None, True, ["tanh"]), (36, 36, "w2", "b2", False, ["sigmoid", "channel"]),
                              (36, 36, "w3", None, False, ["softmax"])],
    "layers_mlp_maxpool.py": [(64, 128, "fc1.weight", "fc1.bias", False, ["max_pool", "relu"]),
                              (64, 32, "fc2.weight", "fc2.bias", False, ["identity"])],
}


def test_every_layers_file_is_in_the_table():
    assert sorted(p.name for p in MODELS.glob("layers_*.py")) == sorted(LAYERS)


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layers_files_trace_to_one_chain_a_gemm(name):
    chains = trace_file_layers(MODELS / name)
    assert [(c.input_size, c.hidden_size, c.weight, c.bias_name, c.weight_in_out, [s.kind for s in c.stages])
            for c in chains] == LAYERS[name]
    specs, _ = model_specs(MODELS / name)
    assert all(s.interface.weight == c.weight for s, c in zip(specs, chains))


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_the_composite_keeps_the_constructor_and_embeds_each_layer_exactly(name, tmp_path):
    specs, _ = model_specs(MODELS / name)
    plans = [fusegen.plan(s, arch=(9, 0)) for s in specs]
    module, model_file = import_file(write_layers(plans, tmp_path)), load_model_file(MODELS / name)
    # each layer is the module from-model writes for it, byte for byte, behind the escaping
    assert [layer.__doc__ for layer in module._LAYERS] == [import_file(fusegen.write_module(p, tmp_path)).__doc__
                                                           for p in plans]
    assert list(module._LAYER_SOURCES) == [render(p) for p in plans]
    assert module.KERNEL_URIS == tuple(p.kernel_uri for p in plans)
    init = model_file.get_init_inputs()
    torch.manual_seed(4)
    ref = model_file.Model(*init)
    torch.manual_seed(4)
    new = module.ModelNew(*init)
    assert list(ref.state_dict()) == list(new.state_dict())
    assert all(torch.equal(a, b) for a, b in zip(ref.state_dict().values(), new.state_dict().values()))
    with pytest.raises(ValueError, match="this module was generated from"):
        module.ModelNew(*([init[0] + 1] + list(init[1:])))
    with pytest.raises(ValueError, match="runs on CUDA only"):
        new(torch.rand(2, specs[0].input_size))
    # forward runs layer k's own forward on this ModelNew, in order, each on the last one's result
    assert module._FORWARD == tuple(layer.ModelNew.forward for layer in module._LAYERS)
    calls = []
    module._FORWARD = tuple(lambda self, x, k=k: calls.append((k, self, x)) or x + k for k in range(len(plans)))
    x = torch.zeros(2, specs[0].input_size)
    assert torch.equal(new(x), x + sum(range(len(plans))))
    assert [(k, self) for k, self, _ in calls] == [(k, new) for k in range(len(plans))]
    assert all(torch.equal(seen, x + k * (k - 1) // 2) for k, _, seen in calls)


def test_render_layers_refuses_what_it_cannot_compose():
    specs, _ = model_specs(MODELS / "layers_mlp_relu.py")
    plans = [fusegen.plan(s) for s in specs]
    with pytest.raises(ValueError, match="two or more layers of one model file"):
        render_layers(plans[:1])
    other, _ = model_specs(MODELS / "layers_mlp_gn.py")
    with pytest.raises(ValueError, match="two or more layers of one model file"):
        render_layers([plans[0], fusegen.plan(other[1])])


def test_from_model_writes_the_composite_and_names_each_layer(tmp_path, capsys):
    assert main(["from-model", str(MODELS / "layers_three_gemms.py"), "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].endswith(".py") and "layers3_" in printed[0]
    assert [ln.split(":")[0] for ln in printed[1::2]] == ["layer 0", "layer 1", "layer 2"]



def test_layers_under_autocast_hand_each_output_on_in_float32(tmp_path, capsys):
    """Under autocast an inner layer's output (the values autocast rounds to 16 bits) goes to the next layer, a
    float32 module under autocast, in float32: the next one's conversion to its operand type is exact. The last
    layer's output is the reference's type. A plan that would hand 16 bits on is refused."""
    assert main(["from-model", str(MODELS / "layers_mlp_relu.py"), "--out", str(tmp_path), "--autocast",
                 "bfloat16"]) == 0
    source = pathlib.Path(capsys.readouterr().out.splitlines()[0]).read_text()
    assert source.count("OUT_DTYPE = torch.float32") == 1 and source.count("OUT_DTYPE = torch.bfloat16") == 1
    specs = [dataclasses.replace(s, autocast="bfloat16") for s in model_specs(MODELS / "layers_mlp_relu.py")[0]]
    inner, last = fusegen.plan(specs[0], feeds_layer=True), fusegen.plan(specs[1])
    assert (inner.output.name, last.output.name) == ("float32", "bfloat16")  # (ReLU, then a Linear alone: 16 bits)
    assert fusegen.plan(specs[0]).output.name == "bfloat16" and "_f32out" in inner.module_name
    with pytest.raises(ValueError, match="layer 0 runs under autocast and feeds the next layer"):
        render_layers([fusegen.plan(specs[0]), last])


@pytest.mark.parametrize("name", sorted(LAYERS) + ["stage_residual_no_grad.py", "stage_residual_detached.py"])
def test_the_bar_passes_the_reference_against_itself(name):
    """compare_models on a model of several GEMMs (every layer's kinks, every GEMM's rounding), and on detached
    values (its replay of the traced graph keeps torch.no_grad() blocks, which fx does not record), on the CPU."""
    m = load_model_file(MODELS / name)
    report, problems = compare_models(m.Model, m.Model, m.get_init_inputs(), (17, m.get_inputs()[0].shape[1]), 0,
                                      device="cpu", dist="normal")
    assert not problems, problems


class _ScaleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return g * 1.001


def test_the_bar_fails_a_wrong_gradient_between_the_layers():
    """The first layer's gradients 0.1% off (the second layer's backward hands a scaled gradient back): the bar
    names them, and not the output nor the second layer's."""
    m = load_model_file(MODELS / "layers_mlp_relu.py")

    class Broken(m.Model):
        def forward(self, x):
            return self.fc2(_ScaleGrad.apply(torch.relu(self.fc(x))))

    report, problems = compare_models(Broken, m.Model, m.get_init_inputs(), (64, 32), 0, device="cpu")
    named = {p.split(":")[0] for p in problems}
    assert {"grad_fc.weight", "grad_fc.bias", "grad_x"} <= named and not named & {"out", "grad_fc2.weight"}, problems
