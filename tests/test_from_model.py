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
