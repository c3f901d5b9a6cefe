"""`fusegen from-model`: the front end traces model files, matches Linear -> stages, renders the family it
generates, and refuses the rest naming the op, the file and the line (CPU: tracing needs no GPU)."""
import dataclasses
import pathlib
import re

import pytest

from helpers import REFERENCE_FILE, REPO, import_file

import fusegen
from fusegen.frontend import ModelError, check_interface, to_spec, trace_chain

MODELS = REPO / "tests" / "models"


def test_the_reference_file_yields_the_headline_module(tmp_path):
    chain = trace_chain(REFERENCE_FILE)
    assert chain.describe() == "linear -> group_norm -> leaky_relu -> add_self"
    spec = to_spec(chain)
    assert spec == fusegen.Spec(8192, 8192, 512)  # what `fusegen render --hidden 8192 --groups 512` plans
    check_interface(REFERENCE_FILE, chain)


@pytest.mark.parametrize("name,spec", [
    ("headline_small.py", fusegen.Spec(96, 128, 8)),
    ("headline_functional.py", fusegen.Spec(64, 32, 4, negative_slope=0.2)),
])
def test_headline_family_in_any_spelling(name, spec):
    chain = trace_chain(MODELS / name)
    assert to_spec(chain) == spec
    assert all(re.search(rf"{name}:\d+$", s.where) for s in chain.stages), [s.where for s in chain.stages]


def test_from_model_cli_renders_what_render_renders(tmp_path):
    from fusegen.tools.cli import main
    assert main(["from-model", str(MODELS / "headline_small.py"), "--out", str(tmp_path / "a"), "--arch", "8.0"]) == 0
    assert main(["render", "--input", "96", "--hidden", "128", "--groups", "8", "--out", str(tmp_path / "b"),
                 "--arch", "8.0"]) == 0
    (a,), (b,) = sorted((tmp_path / "a").glob("*.py")), sorted((tmp_path / "b").glob("*.py"))
    assert a.read_text() == b.read_text()
    # the module keeps the model file's constructor, parameter names and order (same seed, same weights)
    import torch
    ns = {}
    exec(compile((MODELS / "headline_small.py").read_text(), "m", "exec"), ns)
    torch.manual_seed(5)
    ref = ns["Model"](96, 128, 8)
    torch.manual_seed(5)
    new = import_file(a).ModelNew(96, 128, 8)
    assert list(ref.state_dict()) == list(new.state_dict())
    assert all(torch.equal(u, v) for u, v in zip(ref.state_dict().values(), new.state_dict().values()))


@pytest.mark.parametrize("name,words,line_text", [
    ("refuse_softmax_batch_dim.py", "softmax over dim 0: fusegen reduces over the features", "torch.softmax(x"),
    ("refuse_max_indices.py", "the indices of a max / min (an argmax)", "torch.max(x, dim=1)[1]"),
    ("refuse_mean_whole.py", "a mean over the whole tensor", "x.mean()"),
    ("refuse_row_value_param.py", "x * p of a (batch, 1) row value", "x.sum(dim=1, keepdim=True) * self.p"),
    ("refuse_row_value_twice.py", "a row value used a second time", "(x - m) / m"),
    ("refuse_batchnorm_functional.py", "batch_norm (a BatchNorm other than nn.BatchNorm1d", "F.batch_norm("),
    ("refuse_gemm_of_earlier_value.py", "Linear (a GEMM of an earlier value of the chain", "self.fc2(h)"),
    ("refuse_gemm_of_row_value.py", "Linear (a GEMM of a row value", "self.fc2(s)"),
    ("refuse_residual_across_gemms.py", "add (the model's input reaches a layer after the first GEMM",
     "x + self.fc2(h)"),
    ("refuse_dropout.py", "Dropout1d (a dropout over channels or of another kind", "self.drop("),
    ("refuse_min_elementwise.py", "min (an operand buffer constant that is not an nn.Parameter",
     "torch.min(x, self.constant)"),
    ("refuse_max_of_values.py", "maximum (element-wise max against a tensor other than a per-channel nn.Parameter",
     "torch.maximum(y, h)"),
    ("refuse_clamp_param_and_bound.py", "clamp (a clamp with a tensor bound and a second bound",
     "torch.clamp(x, min=self.lower, max=6.0)"),
    ("refuse_second_groupnorm.py", "GroupNorm (a second GroupNorm", "self.gn2(x)"),
    ("refuse_detached_chain.py", "relu (the chain goes on from a detached value", "torch.relu(h)"),
    ("refuse_no_grad_compute.py", "mul (a computation while autograd is off (torch.no_grad()", "x = x * 2.0"),
    ("refuse_column_param.py", "mul (a parameter operand scale of shape (16, 1): a parameter operand is per channel, of shape "
                               "(16,) or (1, 16), or a scalar", "x * self.scale"),
])
def test_refusals_name_the_op_file_and_line(name, words, line_text):
    with pytest.raises(ModelError) as e:
        trace_chain(MODELS / name)
    message = str(e.value)
    assert words in message, message
    match = re.match(rf"{re.escape(str(MODELS / name))}:(\d+): ", message)  # file:line first
    assert match, message
    assert line_text in _line(MODELS / name, int(match.group(1)))
    assert "outside what fusegen generates" in message and "nn.GroupNorm" in message  # and what is supported


def test_a_chain_the_renderer_cannot_emit_is_refused_whole(tmp_path):
    src = (MODELS / "stage_gn_sigmoid_x_residual.py").read_text()
    # a residual of the Linear's output added after the GroupNorm: its gradient would cross the group statistics
    crossing = src.replace("return x\n", "return x + z0\n", 1).replace("x = self.fc(x)", "x = z0 = self.fc(x)", 1)
    assert "x + z0" in crossing and "z0 = self.fc(x)" in crossing
    model = tmp_path / "crossing.py"
    model.write_text(crossing)
    trace_chain(model)  # recognized ...
    from fusegen.tools.cli import main
    out = tmp_path / "out"
    assert main(["from-model", str(model), "--out", str(out)]) == 2  # ... but refused, naming the line
    assert not out.exists()  # nothing generated half-right


def test_other_chains_and_names_keep_the_model_files_interface(tmp_path):
    from fusegen.frontend import model_spec
    chain = trace_chain(MODELS / "renamed_headline.py")
    to_spec(chain)  # the chain itself is the headline family, but its names are not the short form's:
    with pytest.raises(ModelError, match="with parameters linear.weight, linear.bias, norm.weight, norm.bias"):
        check_interface(MODELS / "renamed_headline.py", chain)
    spec, _ = model_spec(MODELS / "renamed_headline.py")  # so the general form keeps them
    assert spec.interface.weight == "linear.weight" and spec.interface.bias == "linear.bias"
    spec, chain = model_spec(MODELS / "relu_scale.py")
    assert chain.describe() == "linear -> relu -> scalar" and spec.interface is not None
    from fusegen.tools.cli import main
    assert main(["from-model", str(MODELS / "relu_scale.py"), "--out", str(tmp_path)]) == 0
    assert len(list(tmp_path.glob("lin_relu_s_*.py"))) == 1


def test_a_file_that_is_not_a_model_file(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\nclass Model(torch.nn.Module):\n    pass\n")
    with pytest.raises(ModelError, match="missing get_init_inputs, get_inputs"):
        trace_chain(bad)
    with pytest.raises(ModelError, match="no such file"):
        trace_chain(tmp_path / "missing.py")


def test_from_model_on_the_reference_file_reproduces_the_committed_module(tmp_path):
    from fusegen.tools.cli import main
    assert main(["from-model", str(REFERENCE_FILE), "--out", str(tmp_path), "--gpu", "NVIDIA H200"]) == 0
    (made,) = tmp_path.glob("*.py")
    committed = REPO / "generated" / made.name
    assert committed.is_file(), f"{made.name} is not the committed headline module"
    assert made.read_bytes() == committed.read_bytes()


# --------------------------------------------------------------------------------------------------------------
# The stage library: every stage_*.py model file traces to its chain, each stage pointing at its own line
# --------------------------------------------------------------------------------------------------------------
def _line(path, number):
    return pathlib.Path(path).read_text().splitlines()[number - 1]


def _gn(groups, weight="gn.weight", bias="gn.bias", eps=1e-5):
    return (("num_groups", groups), ("eps", eps), ("affine", weight is not None or bias is not None),
            ("weight", weight), ("bias", bias))


def _s(op, value):
    return (("op", op), ("value", value))


def _ch(op, param):
    return (("op", op), ("param", param))


def _clamp(lo, hi):
    return (("min", lo), ("max", hi))


# file -> ((input, hidden, weight, bias_name, weight_in_out), [(kind, params, text on the stage's line)])
STAGE_FILES = {
    "stage_relu_scale_tanh.py": ((37, 130, "fc.weight", "fc.bias", False), [
        ("relu", (), "self.act(x)"), ("scalar", _s("mul", 2.0), "x * self.scale"),
        ("tanh", (), "torch.tanh(x)"), ("scalar", _s("add", 0.5), "self.shift + x"),
        ("clamp", _clamp(-0.5, 0.75), "torch.clamp(x, -0.5, 0.75)")]),
    "stage_gn_no_affine_mish.py": ((64, 96, "fc.weight", "fc.bias", False), [
        ("group_norm", _gn(32, None, None), "self.gn(x)"), ("mish", (), "self.mish(x)"),
        ("scalar", _s("mul", 2.0), "x.mul(2.0)"), ("scalar", _s("div", 3.0), "x / 3.0"),
        ("scalar", _s("add", 0.1), "x + 0.1")]),
    "stage_bias_param_gn.py": ((100, 48, "fc.weight", None, False), [
        ("channel", _ch("add", "bias"), "x + self.bias"), ("relu", (), "torch.relu(x)"),
        ("group_norm", _gn(3, eps=1e-3), "self.gn(x)"),
        ("leaky_relu", (("negative_slope", 0.1),), "F.leaky_relu(x, self.negative_slope)")]),
    "stage_channel_scale.py": ((64, 130, "fc.weight", "fc.bias", False), [
        ("channel", _ch("mul", "scale"), "x * self.scale"), ("sigmoid", (), "torch.sigmoid(x)"),
        ("channel", _ch("div", "divisor"), "x / self.divisor"), ("channel", _ch("mul", "gain"), "self.gain * x"),
        ("clamp", _clamp(0.1, None), "x.clamp_min(0.1)")]),
    "stage_silu_residual.py": ((37, 48, "fc.weight", "fc.bias", False), [
        ("silu", (), "h * torch.sigmoid(h)"), ("scalar", _s("mul", 0.5), "0.5 * y"),
        ("residual", (("src", 0),), "y + h")]),
    "stage_linear_params_residual.py": ((37, 96, "weight", "bias", False), [
        ("gelu", (("approximate", "tanh"),), 'F.gelu(x, approximate="tanh")'), ("tanh", (), "torch.tanh(x)"),
        ("scalar", _s("mul", 1.5), "x * 1.5"), ("residual", (("src", 1),), "h + x"),
        ("group_norm", _gn(96), "self.gn(x)"),
        ("clamp", _clamp(-0.5, 0.75), "torch.clamp(x, min=self.min_value, max=self.max_value)")]),
    "stage_matmul_methods.py": ((64, 48, "w", None, True), [
        ("clamp", _clamp(-0.5, None), "x.clamp(min=-0.5)"), ("relu", (), "x.relu()"),
        ("add_self", (), "torch.add(x, x)"), ("tanh", (), "x.tanh()")]),
    "stage_hardtanh_wide_group.py": ((100, 320, "fc.weight", "fc.bias", False), [
        ("hardtanh", (("min_val", -0.5), ("max_val", 0.75)), "self.hardtanh(x)"),
        ("group_norm", _gn(1), "self.gn(x)"), ("silu", (), "self.silu(x)")]),
    "stage_functional_gn.py": ((37, 64, "fc.weight", "fc.bias", False), [
        ("silu", (), "F.silu(x)"),
        ("group_norm", _gn(4, "gn_w", "gn_b"), "F.group_norm(x, self.num_groups, self.gn_w, self.gn_b, self.eps)"),
        ("relu", (), "F.relu(x)"), ("scalar", _s("sub", 0.25), "x - 0.25"), ("scalar", _s("rsub", 2.0), "2.0 - x")]),
    "stage_sequential_gelu.py": ((48, 96, "layers.0.weight", "layers.0.bias", False), [
        ("gelu", (("approximate", "none"),), "self.layers(x)"), ("sigmoid", (), "self.layers(x)"),
        ("scalar", _s("div", 2.0), "x.div(2.0)"), ("channel", _ch("sub", "offset"), "x - self.offset")]),
    "stage_torch_matmul_bias.py": ((100, 130, "w", None, True), [
        ("channel", _ch("add", "b"), "self.b + x"), ("mish", (), "F.mish(x)"), ("tanh", (), "self.tanh(x)")]),
    "stage_scalar_methods.py": ((64, 130, "fc.weight", "fc.bias", False), [
        ("scalar", _s("mul", 2.0), "x.mul(2.0)"), ("scalar", _s("sub", 0.5), "x.sub(0.5)"),
        ("clamp", _clamp(-0.5, 0.75), "x.clamp(-0.5, 0.75)"), ("add_self", (), "x.add(x)"),
        ("scalar", _s("div", 1.5), "x.div(1.5)"), ("scalar", _s("add", 0.25), "x.add(0.25)"),
        ("sigmoid", (), "x.sigmoid()")]),
    "stage_torch_ops_mm.py": ((37, 48, "weight", None, False), [
        ("channel", _ch("mul", "gain"), "torch.mul(x, self.gain)"),
        ("leaky_relu", (("negative_slope", 0.2),), "F.leaky_relu(x, negative_slope=self.negative_slope)"),
        ("scalar", _s("sub", 0.1), "torch.sub(x, 0.1)"), ("scalar", _s("add", 0.3), "torch.add(x, 0.3)"),
        ("scalar", _s("mul", 3.0), "torch.mul(x, 3.0)"), ("scalar", _s("div", 2.0), "torch.div(x, 2.0)"),
        ("hardtanh", (("min_val", -0.5), ("max_val", 0.75)), "F.hardtanh(x, -0.5, 0.75)"),
        ("clamp", _clamp(None, 0.5), "torch.clip(x, max=0.5)")]),
    "stage_gn_sigmoid_x_residual.py": ((37, 48, "fc.weight", "fc.bias", False), [
        ("group_norm", _gn(16), "self.gn(x)"), ("silu", (), "torch.sigmoid(x) * x"),
        ("scalar", _s("mul", 0.5), "x * 0.5"), ("residual", (("src", 1),), "x + h"),
        ("clamp", _clamp(None, 1.0), "x.clamp_max(1.0)")]),
    "stage_headline_variants.py": ((64, 96, "fc.weight", "fc.bias", False), [
        ("group_norm", _gn(6), "self.gn(self.fc(x))"),
        ("leaky_relu", (("negative_slope", 0.05),), "self.act(self.gn"), ("add_self", (), "x + x"),
        ("channel", _ch("mul", "scale"), "x.mul(self.scale)"),
        ("hardtanh", (("min_val", 0.0), ("max_val", 6.0)), "self.relu6(x)")]),
    "stage_channel_min_max.py": ((37, 130, "fc.weight", "fc.bias", False), [
        ("relu", (), "torch.relu(x)"), ("channel", _ch("maximum", "floor"), "torch.maximum(x, self.floor)"),
        ("channel", _ch("minimum", "ceiling"), "torch.min(x, self.ceiling)"),
        ("channel", _ch("pfmax", "low"), "torch.fmax(self.low, x)"), ("scalar", _s("mul", 2.0), "x * 2.0"),
        ("channel", _ch("fmin", "cap"), "x.fmin(self.cap)")]),
    "stage_channel_clamp_params.py": ((64, 96, "fc.weight", "fc.bias", False), [
        ("relu", (), "torch.relu(x)"), ("channel", _ch("clamp_min", "lower"), "torch.clamp(x, min=self.lower)"),
        ("group_norm", _gn(8), "self.gn(x)"), ("channel", _ch("clamp_max", "upper"), "x.clamp_max(self.upper)"),
        ("channel", _ch("maximum", "floor"), "torch.max(self.floor, x)")]),
    "stage_scalar_params.py": ((45, 84, "fc.weight", "fc.bias", False), [
        ("channel", _ch("mul", "scale") + (("scalar", True),), "x * self.scale"), ("tanh", (), "torch.tanh(x)"),
        ("channel", _ch("sub", "shift") + (("scalar", True),), "x - self.shift"),
        ("channel", _ch("maximum", "floor") + (("scalar", True),), "torch.max(x, self.floor)"),
        ("channel", _ch("clamp_max", "cap") + (("scalar", True),), "torch.clamp(x, max=self.cap)")]),
    "stage_scalar_gn.py": ((40, 64, "fc.weight", "fc.bias", False), [
        ("channel", _ch("mul", "scale") + (("scalar", True),), "self.fc(x) * self.scale"),
        ("group_norm", _gn(8), "self.gn(h)"),
        ("channel", _ch("maximum", "floor") + (("scalar", True),), "torch.max(h, self.floor)")]),
    "stage_linear_alone.py": ((29, 70, "fc.weight", None, False), [("identity", (), "return self.fc(x)")]),
    "stage_residual_detached.py": ((41, 96, "fc.weight", "fc.bias", False), [
        ("relu", (), "torch.relu(x)"), ("scalar", _s("mul", 2.0), "x * 2.0"),
        ("residual", (("src", 0), ("detached", True)), "x + original_x"), ("group_norm", _gn(8), "self.gn(x)"),
        ("tanh", (), "torch.tanh(x)"), ("residual", (("src", 5), ("detached", True)), "x + x.detach()")]),
    "stage_residual_no_grad.py": ((64, 128, "fc.weight", "fc.bias", False), [
        ("group_norm", _gn(8), "self.gn(x)"), ("silu", (), "x * torch.sigmoid(x)"),
        ("channel", _ch("mul", "scale"), "x * self.scale"),
        ("residual", (("src", 1), ("detached", True)), "x + skip")]),
    "stage_dropout.py": ((72, 160, "fc.weight", "fc.bias", False), [
        ("gelu", (("approximate", "none"),), "F.gelu(x)"), ("dropout", (("p", 0.25), ("module", "drop")), "self.drop("),
        ("group_norm", _gn(10), "self.gn(x)"), ("dropout", (("p", 0.1), ("module", "")), "F.dropout(x, 0.1"),
        ("tanh", (), "torch.tanh(x)"), ("dropout", (("p", 0.5), ("module", "")), "torch.dropout("),
        ("dropout", (("p", 0.3), ("module", None)), "F.dropout(x, p=0.3)")]),
    "stage_input_residual.py": ((96, 96, "fc.weight", "fc.bias", False), [
        ("relu", (), "torch.relu(self.fc(x))"), ("tanh", (), "x + torch.tanh(h)"), ("input_residual", (), "x + torch.tanh(h)"),
        ("input_residual", (("detached", True),), "h + x.detach()")]),
    "stage_activations_misc.py": ((37, 130, "fc.weight", None, False), [
        ("sigmoid", (), "F.sigmoid(h)"), ("silu", (), "x.mul(torch.sigmoid(x))"),
        ("channel", _ch("sub", "shift"), "x - self.shift"), ("residual", (("src", 0),), "torch.add(h, x)"),
        ("relu", (), "torch.relu(x)")]),
}


def test_every_stage_file_is_in_the_table_and_every_kind_is_covered():
    assert sorted(p.name for p in MODELS.glob("stage_*.py")) == sorted(STAGE_FILES)
    from fusegen.frontend import GENERATED, STAGES
    from fusegen.ops import COLUMN, ROW, ROW_VALUE, WINDOW, OPS
    covered = {kind for _, stages in STAGE_FILES.values() for kind, _, _ in stages}
    # the row ops' files are tests/models/row_*.py (tests/test_rows.py reads them), the BatchNorm's bn_*.py
    # (tests/test_batchnorm.py), the pools' pool_*.py (tests/test_pool.py)
    own_files = {k for k, o in OPS.items() if o.reduces in (ROW, COLUMN, WINDOW) or o.takes == ROW_VALUE}
    assert covered == set(STAGES) - own_files, set(STAGES) ^ covered
    assert set(GENERATED) <= set(STAGES)


@pytest.mark.parametrize("name", sorted(STAGE_FILES))
def test_stage_files_trace_to_their_chains(name):
    (input_size, hidden, weight, bias_name, in_out), expected = STAGE_FILES[name]
    path = MODELS / name
    chain = trace_chain(path)
    assert chain.describe() == " -> ".join(["linear"] + [kind for kind, _, _ in expected])
    assert [(s.kind, s.params) for s in chain.stages] == [(kind, params) for kind, params, _ in expected]
    assert (chain.input_size, chain.hidden_size, chain.weight, chain.bias_name, chain.weight_in_out, chain.bias) \
        == (input_size, hidden, weight, bias_name, in_out, bias_name is not None)
    for stage, (_, _, text) in zip(chain.stages, expected):
        file, line = stage.where.rsplit(":", 1)
        assert file == str(path) and text in _line(path, int(line)), (stage, text)
    # the names the chain records are the Model's parameters, of the shapes the planner will assume
    import torch
    module = import_file(path)
    model = module.Model(*module.get_init_inputs())
    params = dict(model.named_parameters())
    assert params[weight].shape == ((input_size, hidden) if in_out else (hidden, input_size))
    assert bias_name is None or params[bias_name].shape == (hidden,)
    for stage in chain.stages:
        for key in ("param", "weight", "bias"):
            if stage.param(key) is not None and stage.kind in ("channel", "group_norm"):
                assert params[stage.param(key)].numel() == (1 if stage.param("scalar") else hidden)
    # and the file is a runnable benchmark-style model of small, O(1) outputs
    (x,) = module.get_inputs()
    y = model(x)
    assert x.shape[1] == input_size and y.shape == (x.shape[0], hidden) and 3 <= x.shape[0] <= 64
    assert torch.isfinite(y).all() and y.abs().max() < 10 and y.std() > 0


# --------------------------------------------------------------------------------------------------------------
# Refusals and in-place spellings, on small files written here
# --------------------------------------------------------------------------------------------------------------
def _model_file(tmp_path, init, body, hidden=48, name="m"):
    """A model file with `self.fc = nn.Linear(32, hidden)` plus init lines, forward(x) = body lines."""
    src = "\n".join([
        "import torch", "import torch.nn as nn", "import torch.nn.functional as F", "",
        "class Model(nn.Module):", "    def __init__(self, input_size, hidden_size):", "        super().__init__()",
        "        self.fc = nn.Linear(input_size, hidden_size)"] + [f"        {ln}" for ln in init] + [
        "    def forward(self, x):"] + [f"        {ln}" for ln in body] + [
        "", "def get_inputs():", "    return [torch.rand(4, 32)]", "",
        "def get_init_inputs():", f"    return [32, {hidden}]", ""])
    path = tmp_path / f"{name}.py"
    path.write_text(src)
    return path


def test_a_linear_alone_is_the_identity_chain_not_the_headline(tmp_path):
    """A Spec without stages is the headline layer: a model of a Linear alone is one identity stage."""
    from fusegen.frontend import model_spec
    spec, chain = model_spec(_model_file(tmp_path, [], ["x = self.fc(x)", "return x"]))
    assert [s.kind for s in spec.chain] == ["identity"] and len(chain.value_nodes) == 2
    assert fusegen.plan(spec).group_strategy == "none"


@pytest.mark.parametrize("init,body,words", [
    (["self.s = nn.Parameter(torch.ones(1, 1, 1))"], ["x = self.fc(x)", "x = x * self.s  # here"],
     "mul (a parameter operand s of shape (1, 1, 1): a parameter operand is per channel, of shape (48,) or (1, 48), "
     "or a scalar (shape (), (1,) or (1, 1)))"),
    (["self.s = nn.Parameter(torch.ones(48, 1))"], ["x = self.fc(x)", "x = torch.add(self.s, x)  # here"],
     "add (a parameter operand s of shape (48, 1): a parameter operand is per channel"),
    ([], ["y = self.fc(x)", "y = torch.relu(y)", "y = y + x  # here"],
     "add (a residual of the layer's input: x has 32 features, the value 48; torch adds them element-wise only "
     "when they are equal"),
    ([], ["h = self.fc(x)", "a = torch.relu(h)", "b = torch.tanh(h)  # here", "y = a + b"], "tanh (a branch"),
    (["self.gn = nn.GroupNorm(4, 24)"], ["x = self.fc(x)", "x = self.gn(x)  # here"],
     "GroupNorm (a GroupNorm over 24 channels after a Linear with 48 out features"),
    ([], ["x = self.fc(x)", "x = F.group_norm(x, 5)  # here"], "group_norm (num_groups=5 must be a positive int"),
    (["self.gn = nn.GroupNorm(4, 48)"], ["x = self.fc(x)", "x = self.gn(x)", "x = F.group_norm(x, 2)  # here"],
     "group_norm (a second GroupNorm"),
    (["self.register_buffer('s', torch.ones(48))"], ["x = self.fc(x)", "x = x * self.s  # here"],
     "mul (an operand buffer s that is not an nn.Parameter"),
    (["self.p = nn.Parameter(torch.ones(48))"], ["x = self.fc(x)", "x = self.p - x  # here"], "sub (p - x"),
    ([], ["x = self.fc(x)", "x = 2.0 / x  # here"], "truediv (c / x (a reciprocal)"),
    ([], ["x = self.fc(x)", "x = x * x  # here"], "mul (x mul x"),
    ([], ["h = self.fc(x)", "x = torch.relu(h)", "x = x * h  # here"], "mul (a mul of two chain values"),
    ([], ["x = self.fc(x)", "x = torch.add(x, 1.0, alpha=2.0)  # here"], "add (alpha or rounding_mode"),
    ([], ["x = self.fc(x)", "x = torch.clamp(x)  # here"], "clamp (a clamp without bounds)"),
    (["self.w2 = nn.Parameter(torch.ones(48, 48))"], ["x = self.fc(x)", "x = x @ self.w2  # here"],
     "matmul (a second GEMM: a model of several Linears is generated as several fused layers"),
    (["self.w2 = nn.Parameter(torch.ones(48, 48))"],
     ["x = torch.relu(self.fc(x))", "x = torch.mm(x, self.w2)  # here"], "mm (a second GEMM: a model"),
    ([], ["x = torch.relu(x)  # here", "x = self.fc(x)"], "relu (the layer must start with a Linear of its input"),
    ([], ["x = self.fc(x)", "x = F.gelu(x, approximate='erf')  # here"], "gelu (GELU with approximate='erf'"),
    (["self.pool = nn.AdaptiveMaxPool1d(2)"], ["x = self.fc(x)", "x = self.pool(x.unsqueeze(1))  # here",
                                               "x = x.squeeze(1)"],
     "unsqueeze (a pool over the features (AdaptiveMaxPool1d on x.unsqueeze(1)"),
    ([], ["x = self.fc(x)", "x = F.adaptive_avg_pool1d(x.unsqueeze(1), 4)  # here", "x = x.squeeze(1)"],
     "unsqueeze (a pool over the features (F.adaptive_avg_pool1d on x.unsqueeze(1)"),
])
def test_refusals_of_what_the_stages_cannot_be(tmp_path, init, body, words):
    path = _model_file(tmp_path, init, body + ["return " + body[-1].split(" = ")[0]])
    with pytest.raises(ModelError) as e:
        trace_chain(path)
    message = str(e.value)
    assert words in message, message
    line = next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if ln.endswith("# here"))
    assert message.startswith(f"{path}:{line}: "), message
    from fusegen.frontend import STAGES
    assert message.endswith("(" + "; ".join(STAGES.values()) + ")"), message  # and what is supported


def test_in_place_stages_overwrite_the_value_they_read(tmp_path):
    # nn.ReLU(inplace=True) overwrites h as well: the "residual" h is the ReLU's output, so y + h is y + y
    path = _model_file(tmp_path, ["self.act = nn.ReLU(inplace=True)"],
                       ["h = self.fc(x)", "y = self.act(h)", "y = y + h", "y.mul_(2.0)", "F.leaky_relu(y, 0.3, True)",
                        "return y"])
    chain = trace_chain(path)
    assert [(s.kind, s.params) for s in chain.stages] == [
        ("relu", ()), ("add_self", ()), ("scalar", (("op", "mul"), ("value", 2.0))),
        ("leaky_relu", (("negative_slope", 0.3),))]
    # h.mul_(sigmoid(h)) is SiLU written over h, so g (the same tensor) is its result too
    path = _model_file(tmp_path, [], ["h = self.fc(x)", "g = h", "h.mul_(torch.sigmoid(h))", "y = h + g", "return y"],
                       name="silu_")
    assert trace_chain(path).describe() == "linear -> silu -> add_self"
    # h.add_(y) adds y to the Linear's output in place: a residual, after which h is the sum
    path = _model_file(tmp_path, [], ["h = self.fc(x)", "y = torch.relu(h)", "h.add_(y)", "z = h * 2.0", "return z"],
                       name="add_")
    assert [(s.kind, s.params) for s in trace_chain(path).stages] == [
        ("relu", ()), ("residual", (("src", 0),)), ("scalar", (("op", "mul"), ("value", 2.0)))]


def test_identities_are_not_stages(tmp_path):
    path = _model_file(tmp_path, ["self.drop = nn.Dropout(0.0)", "self.id = nn.Identity()"],
                       ["h = self.fc(x)", "x = self.drop(h)", "x = self.id(x)", "x = F.dropout(x, 0.5, False)",
                        "x = x + h", "return x"])
    assert trace_chain(path).describe() == "linear -> add_self"  # every value there is h


# --------------------------------------------------------------------------------------------------------------
# Random chains: any order and spelling of the recognized stages traces back to the same kinds and parameters
# --------------------------------------------------------------------------------------------------------------
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

HIDDEN, INPUT = 48, 32
_constants = st.one_of(st.floats(0.25, 4.0, allow_nan=False).map(lambda v: round(v, 3)), st.sampled_from([1, 2, 3]))


def _draw_linear(draw):
    """(init lines, forward expression of `x`, (weight, bias_name, weight_in_out))."""
    form = draw(st.sampled_from(["module", "module_nobias", "flinear", "flinear_nobias", "matmul", "matmul_t"]))
    if form.startswith("module"):
        bias = form == "module"
        return ([f"self.fc = nn.Linear({INPUT}, {HIDDEN}, bias={bias})"], "self.fc(x)",
                ("fc.weight", "fc.bias" if bias else None, False))
    if form.startswith("flinear"):
        init = [f"self.w = nn.Parameter(torch.randn({HIDDEN}, {INPUT}) * 0.1)"]
        if form == "flinear":
            return init + [f"self.b = nn.Parameter(torch.zeros({HIDDEN}))"], \
                draw(st.sampled_from(["F.linear(x, self.w, self.b)", "F.linear(x, self.w, bias=self.b)"])), \
                ("w", "b", False)
        return init, "F.linear(x, self.w)", ("w", None, False)
    if form == "matmul":
        return ([f"self.w = nn.Parameter(torch.randn({INPUT}, {HIDDEN}) * 0.1)"],
                draw(st.sampled_from(["x @ self.w", "torch.matmul(x, self.w)", "torch.mm(x, self.w)",
                                      "x.matmul(self.w)"])), ("w", None, True))
    return ([f"self.w = nn.Parameter(torch.randn({HIDDEN}, {INPUT}) * 0.1)"],
            draw(st.sampled_from(["x @ self.w.t()", "torch.mm(x, self.w.T)"])), ("w", None, False))


def _draw_stage(draw, i, kind, residual_sources):
    """(init lines, forward expression of `x`, expected params) for stage i of `kind`."""
    m, pick = f"self.s{i}", lambda forms: draw(st.sampled_from(forms), label=f"stage {i} {kind}")
    if kind == "group_norm":
        groups, eps = draw(st.sampled_from([1, 3, 6, 16, 48])), draw(st.sampled_from([1e-5, 1e-3]))
        form = pick(["module", "module_plain", "functional", "functional_plain"])
        if form == "module":
            return ([f"{m} = nn.GroupNorm({groups}, {HIDDEN}, eps={eps!r})"], f"{m}(x)",
                    _gn(groups, f"s{i}.weight", f"s{i}.bias", eps))
        if form == "module_plain":
            return ([f"{m} = nn.GroupNorm({groups}, {HIDDEN}, eps={eps!r}, affine=False)"], f"{m}(x)",
                    _gn(groups, None, None, eps))
        if form == "functional":
            return ([f"self.gw{i} = nn.Parameter(torch.ones({HIDDEN}))",
                     f"self.gb{i} = nn.Parameter(torch.zeros({HIDDEN}))"],
                    f"F.group_norm(x, {groups}, self.gw{i}, self.gb{i}, {eps!r})",
                    _gn(groups, f"gw{i}", f"gb{i}", eps))
        return [], f"F.group_norm(x, {groups}, eps={eps!r})", _gn(groups, None, None, eps)
    if kind == "leaky_relu":
        v = draw(st.sampled_from([0.01, 0.2, -0.5]))
        form = pick(["module", "f", "f_kw", "attr"])
        init = {"module": [f"{m} = nn.LeakyReLU({v!r})"], "attr": [f"self.c{i} = {v!r}"]}.get(form, [])
        expr = {"module": f"{m}(x)", "f": f"F.leaky_relu(x, {v!r})", "f_kw": f"F.leaky_relu(x, negative_slope={v!r})",
                "attr": f"F.leaky_relu(x, self.c{i})"}[form]
        return init, expr, (("negative_slope", v),)
    if kind == "gelu":
        v = draw(st.sampled_from(["none", "tanh"]))
        forms = [([f"{m} = nn.GELU(approximate={v!r})"], f"{m}(x)"), ([], f"F.gelu(x, approximate={v!r})")]
        if v == "none":
            forms += [([f"{m} = nn.GELU()"], f"{m}(x)"), ([], "F.gelu(x)")]
        init, expr = pick(forms)
        return init, expr, (("approximate", v),)
    if kind == "hardtanh":
        lo, hi = draw(st.sampled_from([(-0.5, 0.75), (-1.0, 1.0), (0.0, 2.5), (0.0, 6.0)]))
        forms = [([f"{m} = nn.Hardtanh({lo!r}, {hi!r})"], f"{m}(x)"), ([], f"F.hardtanh(x, {lo!r}, {hi!r})"),
                 ([], f"F.hardtanh(x, min_val={lo!r}, max_val={hi!r})")]
        if (lo, hi) == (0.0, 6.0):
            forms += [([f"{m} = nn.ReLU6()"], f"{m}(x)"), ([], "F.relu6(x)")]
        init, expr = pick(forms)
        return init, expr, (("min_val", lo), ("max_val", hi))
    if kind == "clamp":
        lo, hi = draw(st.sampled_from([(-0.5, 0.75), (-0.5, None), (None, 0.75), (0.0, 1.5)]))
        kw = ", ".join(f"{k}={v!r}" for k, v in (("min", lo), ("max", hi)) if v is not None)
        forms = [f"torch.clamp(x, {lo!r}, {hi!r})", f"torch.clamp(x, {kw})", f"torch.clip(x, {kw})",
                 f"x.clamp({kw})", f"x.clip({lo!r}, {hi!r})"]
        forms += [f"x.clamp_min({lo!r})"] if hi is None else [f"x.clamp_max({hi!r})"] if lo is None else []
        return [], pick(forms), _clamp(lo, hi)
    if kind == "add_self":
        return [], pick(["x + x", "torch.add(x, x)", "x.add(x)"]), ()
    if kind == "scalar":
        op, c = draw(st.sampled_from(["mul", "div", "add", "sub", "rsub"])), draw(_constants)
        forms = {"mul": [f"x * {c!r}", f"{c!r} * x", f"torch.mul(x, {c!r})", f"x.mul({c!r})", f"x * self.c{i}"],
                 "div": [f"x / {c!r}", f"torch.div(x, {c!r})", f"x.div({c!r})", f"x / self.c{i}"],
                 "add": [f"x + {c!r}", f"{c!r} + x", f"torch.add(x, {c!r})", f"x.add({c!r})", f"self.c{i} + x"],
                 "sub": [f"x - {c!r}", f"torch.sub(x, {c!r})", f"x.sub({c!r})", f"x - self.c{i}"],
                 "rsub": [f"{c!r} - x", f"torch.rsub(x, {c!r})", f"self.c{i} - x"]}[op]
        if op == "mul" and pick([False, True]):
            return [], "-x", _s("mul", -1.0)  # read as x * -1
        return [f"self.c{i} = {c!r}"], pick(forms), _s(op, float(c))
    if kind == "channel":
        op = draw(st.sampled_from(["mul", "div", "add", "sub", "maximum", "minimum", "fmax", "pfmin", "clamp_min",
                                   "clamp_max"]))
        shape = pick([f"{HIDDEN}", f"1, {HIDDEN}", "()", "1", "1, 1"])  # torch.rand's arguments
        p = f"self.p{i}"
        forms = {"mul": [f"x * {p}", f"{p} * x", f"torch.mul(x, {p})", f"x.mul({p})"],
                 "div": [f"x / {p}", f"torch.div(x, {p})", f"x.div({p})"],
                 "add": [f"x + {p}", f"{p} + x", f"torch.add(x, {p})", f"x.add({p})"],
                 "sub": [f"x - {p}", f"torch.sub(x, {p})", f"x.sub({p})"],
                 "maximum": [f"torch.maximum(x, {p})", f"torch.max({p}, x)", f"x.maximum({p})", f"x.max({p})"],
                 "minimum": [f"torch.minimum({p}, x)", f"torch.min(x, {p})", f"x.min({p})"],
                 "fmax": [f"torch.fmax(x, {p})", f"x.fmax({p})"], "pfmin": [f"torch.fmin({p}, x)"],
                 "clamp_min": [f"torch.clamp(x, min={p})", f"x.clamp_min({p})", f"x.clamp(min={p})"],
                 "clamp_max": [f"torch.clamp(x, max={p})", f"x.clamp_max({p})", f"torch.clip(x, max={p})"]}[op]
        scalar = (("scalar", True),) if shape in ("()", "1", "1, 1") else ()
        return [f"{p} = nn.Parameter(torch.rand({shape}) + 0.5)"], pick(forms), _ch(op, f"p{i}") + scalar
    if kind == "residual":
        src = draw(st.sampled_from(residual_sources))
        h = pick([f"h{src}", f"h{src}.detach()", f"h{src}.clone().detach()"])
        detached = (("detached", True),) if "detach" in h else ()
        return [], pick([f"x + {h}", f"{h} + x", f"torch.add(x, {h})", f"torch.add({h}, x)", f"x.add({h})"]), \
            (("src", src),) + detached
    if kind == "dropout":
        v = draw(st.sampled_from([0.1, 0.5, 0.75]))
        forms = [([f"{m} = nn.Dropout({v!r})"], f"{m}(x)", f"s{i}"), ([f"{m} = nn.Dropout(p={v!r})"], f"{m}(x)", f"s{i}"),
                 ([], f"F.dropout(x, {v!r}, self.training)", ""), ([], f"F.dropout(x, p={v!r}, training=self.training)", ""),
                 ([], f"torch.dropout(x, {v!r}, self.training)", ""), ([], f"F.dropout(x, {v!r})", None),
                 ([], f"F.dropout(x, {v!r}, True)", None), ([], f"torch.dropout(x, {v!r}, True)", None)]
        init, expr, module = pick(forms)
        return init, expr, (("p", v), ("module", module))
    if kind == "silu":
        return pick([([f"{m} = nn.SiLU()"], f"{m}(x)"), ([], "F.silu(x)"), ([], "x * torch.sigmoid(x)"),
                     ([], "torch.sigmoid(x) * x"), ([], "x.mul(torch.sigmoid(x))"), ([], "x * x.sigmoid()")]) + ((),)
    modules = {"relu": "ReLU", "sigmoid": "Sigmoid", "tanh": "Tanh", "mish": "Mish"}
    fns = {"relu": ["F.relu(x)", "torch.relu(x)", "x.relu()"],
           "sigmoid": ["torch.sigmoid(x)", "F.sigmoid(x)", "x.sigmoid()"],
           "tanh": ["torch.tanh(x)", "F.tanh(x)", "x.tanh()"], "mish": ["F.mish(x)"]}[kind]
    return pick([([f"{m} = nn.{modules[kind]}()"], f"{m}(x)")] + [([], f) for f in fns]) + ((),)


# the row ops, the BatchNorm and the pools: their spellings are read from tests/models/row_*.py, bn_*.py and pool_*.py
# (test_rows.py, test_batchnorm.py, test_pool.py, test_max_pool.py) and the GPU random chains
# (and the residual of the layer's input, which needs in == out features: tests/test_input_residual.py)
ROW_OPS = ("softmax", "log_softmax", "row_reduce", "row_combine", "batch_norm", "avg_pool", "max_pool",
           "input_residual")
IDENTITIES = ["F.dropout(x, 0.0)", "F.dropout(x, 0.3, training=False)", "self.idt(x)"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_chains_trace_back_to_their_stages(data, tmp_path):
    from fusegen.frontend import STAGES
    init, lin_expr, (weight, bias_name, in_out) = _draw_linear(data.draw)
    init.append("self.idt = nn.Identity()")
    body = [f"x = {lin_expr}; h0 = x"]
    expected, stage_lines = [], []
    gn_value = None  # the chain value the GroupNorm produced: residuals must not reach across it
    for i in range(data.draw(st.integers(1, 8), label="length")):
        if data.draw(st.integers(0, 3), label=f"identity before {i}") == 0:
            body.append(f"x = {data.draw(st.sampled_from(IDENTITIES))}")
        lo = 0 if gn_value is None else gn_value
        sources = list(range(lo, i))  # value i is the current one (stage i-1's output)
        kinds = [k for k in STAGES if not (k == "group_norm" and gn_value is not None) and k not in ROW_OPS
                 and k != "identity" and not (k == "residual" and not sources)]
        kind = data.draw(st.sampled_from(kinds), label=f"stage {i}")
        lines, expr, params = _draw_stage(data.draw, i, kind, sources)
        init += lines
        body.append(f"x = {expr}; h{i + 1} = x")
        stage_lines.append(len(body))
        expected.append((kind, params))
        if kind == "group_norm":
            gn_value = i + 1
    head = ["import torch", "import torch.nn as nn", "import torch.nn.functional as F", "",
            "class Model(nn.Module):", "    def __init__(self, input_size, hidden_size):", "        super().__init__()"]
    head += [f"        {ln}" for ln in init] + ["    def forward(self, x):"]
    src = "\n".join(head + [f"        {ln}" for ln in body] + [
        "        return x", "", "def get_inputs():", f"    return [torch.rand(4, {INPUT})]", "",
        "def get_init_inputs():", f"    return [{INPUT}, {HIDDEN}]", ""])
    path = tmp_path / f"chain_{abs(hash(src)) % 10**8}.py"
    path.write_text(src)
    chain = trace_chain(path)
    assert (chain.input_size, chain.hidden_size, chain.weight, chain.bias_name, chain.weight_in_out) == \
        (INPUT, HIDDEN, weight, bias_name, in_out), src
    assert [(s.kind, s.params) for s in chain.stages] == expected, src
    # each stage points at its own line of forward()
    assert [int(s.where.rsplit(":", 1)[1]) for s in chain.stages] == [len(head) + n for n in stage_lines], src
    module = import_file(path)  # and the spellings are real torch: the model runs
    y = module.Model(*module.get_init_inputs())(*module.get_inputs())
    assert y.shape == (4, HIDDEN)


@pytest.mark.parametrize("name,strategy", [("stage_residual_detached.py", "two_stage"),
                                           ("stage_residual_no_grad.py", "fragment"),
                                           ("row_softmax_detached_residual.py", "rows"),
                                           ("bn_detached_residual.py", "cols")])
def test_a_detached_residual_sends_no_gradient_to_its_source(name, strategy):
    """Backward adds a residual's gradient into its input's and, unless the added value was detached, into the
    source value's: against the same plan with the residuals attached, each residual's `g<src> += g<i + 1>` is gone
    (where src is the residual's own input, x + x.detach(), it stays once instead of twice)."""
    import dataclasses
    import re
    import fusegen
    from fusegen.codegen.render import render_cuda
    from fusegen.frontend import model_spec
    p = fusegen.plan(model_spec(MODELS / name)[0], arch=(9, 0))
    assert p.group_strategy == strategy
    attached = dataclasses.replace(p, stages=tuple(
        dataclasses.replace(st, choices=(("detached", None),)) if st.kind == "residual" else st for st in p.stages))
    residuals = [st for st in p.stages if st.kind == "residual"]
    assert residuals and not any(st.grad_to_src for st in residuals)
    detached_source, attached_source = render_cuda(p), render_cuda(attached)
    for st in residuals:
        adds = rf"\bg{st.src} \+= g{st.index + 1};"
        n_detached, n_attached = len(re.findall(adds, detached_source)), len(re.findall(adds, attached_source))
        assert n_attached > 0 and n_detached == (n_attached // 2 if st.src == st.index else 0), (st, n_detached)


def test_scalar_parameters_are_read_at_one_place_and_their_gradients_summed():
    """Every column reads a scalar parameter's one value, and the binding sums its column sums into its (1,)
    gradient; a per-channel parameter's stay as they are."""
    import re
    import fusegen
    from fusegen.codegen.render import render_binding, render_cuda
    from fusegen.frontend import model_spec
    p = fusegen.plan(model_spec(MODELS / "stage_scalar_params.py")[0], arch=(9, 0))
    source, binding = render_cuda(p), render_binding(p)
    assert sorted(set(re.findall(r"load\(s\.chan\[(\d)\] \+ (\w+)\)", source))) == [(str(k), "0") for k in range(4)]
    assert binding.count("fg::sum_columns(dchan[") == 4
    q = fusegen.plan(model_spec(MODELS / "stage_channel_scale.py")[0], arch=(9, 0))
    assert {at for _, at in re.findall(r"load\(s\.chan\[(\d)\] \+ (\w+)\)", render_cuda(q))} == {"col"}
    assert "sum_columns" not in render_binding(q) and not q.scalar_chan_slots
    # in a 16-bit layer the kernels write its column sums in float32 (summed again, they are not rounded to 16 bits)
    h = fusegen.plan(dataclasses.replace(p.spec, dtype="bfloat16"), arch=(9, 0))
    assert h.float_grad_slots == h.scalar_chan_slots == (0, 1, 2, 3) and not p.float_grad_slots
    assert "constexpr unsigned FLOAT_GRAD_SLOTS = 15u;" in render_cuda(h)
    assert render_binding(h).count("kFloatGradSlot[") == 3  # (declared; allocated; passed)


@pytest.mark.parametrize("name", sorted(p.name for p in MODELS.glob("*.py") if not p.name.startswith("refuse_")))
def test_every_model_file_scales_to_the_tensor_core_sizes(name, tmp_path):
    """The GPU suites run each model file at its own size and scaled up (helpers.scaled_copy rewrites its
    module-level sizes), traced as the suites trace it: a file without them failed the whole GPU chains suite at
    setup, not here."""
    from helpers import scaled_copy

    from fusegen.frontend import model_specs

    f = scaled_copy(MODELS / name, tmp_path)
    specs = model_specs(f)[0]
    assert import_file(f).get_inputs()[0].shape[0] > 1 and specs[0].hidden_size >= 1000, name
