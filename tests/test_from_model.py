"""`fusegen from-model`: the front end traces model files, matches Linear -> stages, renders the family it
generates, and refuses the rest naming the op, the file and the line (CPU: tracing needs no GPU)."""
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
    from fusegen.cli import main
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


@pytest.mark.parametrize("name,words", [
    ("refuse_softmax.py", "softmax (a reduction over the hidden dimension)"),
    ("refuse_batchnorm.py", "BatchNorm1d (BatchNorm: statistics over the batch)"),
    ("refuse_two_gemms.py", "Linear (a second GEMM)"),
    ("refuse_dropout.py", "Dropout (dropout in training)"),
    ("refuse_mean.py", "mean (a reduction)"),
])
def test_refusals_name_the_op_file_and_line(name, words):
    with pytest.raises(ModelError) as e:
        trace_chain(MODELS / name)
    message = str(e.value)
    assert words in message, message
    assert re.match(rf"{re.escape(str(MODELS / name))}:\d+: ", message), message  # file:line first
    assert "outside what fusegen generates" in message and "nn.GroupNorm" in message  # and what is supported


def test_recognized_but_not_generated_chains_are_refused_whole(tmp_path):
    chain = trace_chain(MODELS / "relu_scale.py")
    assert chain.describe() == "linear -> relu -> scalar"
    assert dict(chain.stages[1].params) == {"op": "mul", "value": 2.0}
    with pytest.raises(ModelError, match="recognized linear -> relu -> scalar, but this version generates only"):
        to_spec(chain)
    from fusegen.cli import main
    out = tmp_path / "out"
    assert main(["from-model", str(MODELS / "relu_scale.py"), "--out", str(out)]) == 2
    assert not out.exists()  # nothing generated half-right


def test_other_parameter_names_are_refused_not_renamed(tmp_path):
    chain = trace_chain(MODELS / "renamed_headline.py")
    to_spec(chain)  # the chain itself is the headline family
    with pytest.raises(ModelError, match="with parameters linear.weight, linear.bias, norm.weight, norm.bias"):
        check_interface(MODELS / "renamed_headline.py", chain)


def test_a_file_that_is_not_a_model_file(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\nclass Model(torch.nn.Module):\n    pass\n")
    with pytest.raises(ModelError, match="missing get_init_inputs, get_inputs"):
        trace_chain(bad)
    with pytest.raises(ModelError, match="no such file"):
        trace_chain(tmp_path / "missing.py")


def test_from_model_on_the_reference_file_reproduces_the_committed_module(tmp_path):
    from fusegen.cli import main
    assert main(["from-model", str(REFERENCE_FILE), "--out", str(tmp_path), "--gpu", "NVIDIA H200"]) == 0
    (made,) = tmp_path.glob("*.py")
    committed = REPO / "generated" / made.name
    assert committed.is_file(), f"{made.name} is not the committed headline module"
    assert made.read_bytes() == committed.read_bytes()


# --------------------------------------------------------------------------------------------------------------
# Random chains: any order and spelling of the recognized stages traces back to the same kinds and constants
# --------------------------------------------------------------------------------------------------------------
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

HIDDEN, GROUPS = 48, 6


def _spellings(i, kind, value):
    """(constructor line or None, forward expression of `x`, expected params) for stage i."""
    m = f"self.s{i}"
    if kind == "group_norm":
        eps = value
        return ([f"{m} = nn.GroupNorm({GROUPS}, {HIDDEN}, eps={eps!r})"], [f"{m}(x)"],
                {"num_groups": GROUPS, "eps": eps, "affine": True})
    if kind == "leaky_relu":
        return ([f"{m} = nn.LeakyReLU({value!r})"], [f"{m}(x)", f"F.leaky_relu(x, {value!r})"],
                {"negative_slope": value})
    if kind == "gelu":
        return ([f"{m} = nn.GELU(approximate={value!r})"], [f"{m}(x)", f"F.gelu(x, approximate={value!r})"],
                {"approximate": value})
    if kind == "scalar":
        op, c = value
        forms = {"mul": [f"x * {c!r}", f"{c!r} * x"], "div": [f"x / {c!r}"], "add": [f"x + {c!r}", f"{c!r} + x"],
                 "sub": [f"x - {c!r}"]}[op]
        return [], forms, {"op": op, "value": float(c)}
    if kind == "add_self":
        return [], ["x + x"], {}
    mod = {"relu": "ReLU", "silu": "SiLU", "sigmoid": "Sigmoid", "tanh": "Tanh"}[kind]
    fns = {"relu": ["F.relu(x)", "torch.relu(x)"], "silu": ["F.silu(x)"], "sigmoid": ["torch.sigmoid(x)"],
           "tanh": ["torch.tanh(x)"]}[kind]
    return [f"{m} = nn.{mod}()"], [f"{m}(x)"] + fns, {}


_constants = st.floats(0.25, 4.0, allow_nan=False).map(lambda v: round(v, 3))
_stage = st.one_of(
    st.tuples(st.just("group_norm"), st.sampled_from([1e-5, 1e-3])),
    st.tuples(st.just("leaky_relu"), st.sampled_from([0.01, 0.2, -0.5])),
    st.tuples(st.just("gelu"), st.sampled_from(["none", "tanh"])),
    st.tuples(st.just("scalar"), st.tuples(st.sampled_from(["mul", "div", "add", "sub"]), _constants)),
    st.tuples(st.sampled_from(["add_self", "relu", "silu", "sigmoid", "tanh"]), st.none()),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stages=st.lists(_stage, min_size=1, max_size=6), data=st.data())
def test_random_chains_trace_back_to_their_stages(stages, data, tmp_path):
    init, body, expected = [], [], []
    for i, (kind, value) in enumerate(stages):
        lines, forms, params = _spellings(i, kind, value)
        init += lines
        body.append(f"x = {data.draw(st.sampled_from(forms), label=f'stage {i}')}")
        expected.append((kind, params))
    src = "\n".join([
        "import torch", "import torch.nn as nn", "import torch.nn.functional as F", "",
        "class Model(nn.Module):", "    def __init__(self, input_size, hidden_size):", "        super().__init__()",
        "        self.fc = nn.Linear(input_size, hidden_size)"] + [f"        {ln}" for ln in init] + [
        "    def forward(self, x):", "        x = self.fc(x)"] + [f"        {ln}" for ln in body] + [
        "        return x", "", "def get_inputs():", f"    return [torch.rand(4, 32)]", "",
        "def get_init_inputs():", f"    return [32, {HIDDEN}]", ""])
    path = tmp_path / f"chain_{abs(hash(src)) % 10**8}.py"
    path.write_text(src)
    chain = trace_chain(path)
    assert (chain.input_size, chain.hidden_size, chain.bias) == (32, HIDDEN, True)
    assert [(s.kind, dict(s.params)) for s in chain.stages] == expected, src
    # each stage points at its own line of forward()
    lines = [int(s.where.rsplit(":", 1)[1]) for s in chain.stages]
    assert lines == sorted(lines) and len(set(lines)) == len(lines), (lines, src)
