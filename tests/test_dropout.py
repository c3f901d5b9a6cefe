"""Dropout in training on the CPU (ops/elementwise.py's dropout, templates/ops/stage_dropout.cuh.j2; the GPU checks are
tests/test_gpu_dropout.py): the Philox stream the masks come from is Philox4x32-10 (its published known answers, on
the tests' own copy the GPU tests recompute masks with), the front end reads each spelling and the mode it follows,
the module draws a seed only while a dropout is on, the kernels compile on both engines without spills, and what is
not generated is refused by name."""
import pytest

from helpers import REPO, dropout_factor, philox_first
from test_compile import NVCC, compiles_without_spills
from test_from_model import _model_file

import fusegen
from fusegen.codegen import render
from fusegen.codegen.explain import explain
from fusegen.frontend import ModelError, model_spec, trace_chain
from fusegen.plan import RowSumPlan

MODELS = REPO / "tests" / "models"
DROPOUT_FILES = ["stage_dropout.py", "dropout_alone.py", "dropout_rows_softmax.py", "dropout_bn_relu.py"]


def test_philox_is_philox4x32_10():
    """Random123's known answers (counter, key -> first word): the tests' copy is the kernels' algorithm."""
    kats = [((0, 0, 0, 0), (0, 0), 0x6627E8D5),
            ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, 0x408F276D),
            ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0), 0xD16CFE09)]
    for counter, key, first in kats:
        assert int(philox_first(*counter, *key)) == first, (counter, key)


def test_the_masks_keep_one_minus_p():
    """Over 64k elements the recomputed masks keep 1 - p within 4 sigma, and two stages' masks are independent."""
    for p in (0.1, 0.5, 0.9):
        f = dropout_factor((12345, 678), 3, p, 256, 256)
        kept = (f > 0).double().mean().item()
        assert abs(kept - (1 - p)) < 4 * (p * (1 - p) / f.numel()) ** 0.5, (p, kept)
        assert bool(((f == 0) | (f == 1 / (1 - p))).all())
    a, b = (dropout_factor((7, 9), s, 0.5, 256, 256) > 0 for s in (1, 2))
    both = (a & b).double().mean().item()
    assert abs(both - 0.25) < 4 * (0.25 * 0.75 / a.numel()) ** 0.5


def test_spellings_and_the_mode_each_follows(tmp_path):
    """nn.Dropout follows its own mode, F.dropout / torch.dropout with self.training the Model's ("" module), without
    a training argument (or True) it always drops (None), training=False or p=0 is no stage."""
    cases = {"self.d(x)": ("d", 0.3), "F.dropout(x, 0.3, self.training)": ("", 0.3),
             "F.dropout(x, p=0.3, training=self.training)": ("", 0.3), "torch.dropout(x, 0.3, self.training)": ("", 0.3),
             "F.dropout(x, 0.3)": (None, 0.3), "F.dropout(x, 0.3, True)": (None, 0.3),
             "torch.dropout(x, 0.3, True)": (None, 0.3), "F.dropout(x, 0.3, inplace=True)": (None, 0.3)}
    for i, (expr, (module, p)) in enumerate(cases.items()):
        path = _model_file(tmp_path, ["self.d = nn.Dropout(0.3)"], ["x = torch.relu(self.fc(x))", f"x = {expr}", "return x"],
                           name=f"m{i}")
        assert [(s.kind, s.params) for s in trace_chain(path).stages] == \
            [("relu", ()), ("dropout", (("p", p), ("module", module)))], expr
    for i, expr in enumerate(["F.dropout(x, 0.3, training=False)", "F.dropout(x, 0.0)", "self.d0(x)"]):
        path = _model_file(tmp_path, ["self.d0 = nn.Dropout(0.0)"], ["x = torch.relu(self.fc(x))", f"x = {expr}",
                                                                     "return x"], name=f"id{i}")
        assert [s.kind for s in trace_chain(path).stages] == ["relu"], expr


def test_the_module_reads_each_mode_and_draws_only_when_on():
    """The module's p is the traced p while the module it follows trains, 0 in eval; it draws a seed only while a
    dropout is on, and backward gets the same seed (saved with the tensors)."""
    p = fusegen.plan(model_spec(MODELS / "stage_dropout.py")[0])
    assert p.seeded and p.n_scalars == len(p.scalar_slots) + 2
    src = render(p)
    assert "scalars = ((0.25 if self.drop.training else 0.0), (0.1 if self.training else 0.0), " \
           "(0.5 if self.training else 0.0), 0.3, )" in src
    assert "seed = _draw_seed() if scalars[0] > 0.0 or scalars[1] > 0.0 or scalars[2] > 0.0 or scalars[3] > 0.0 " \
           "else _NO_SEED" in src
    assert "ctx.save_for_backward(x, weight, gamma, beta, z, mean, rstd, seed)" in src
    assert "[s0, s1, s2, s3, *seed.tolist()]" in src
    assert "Dropout(p=0.25)" in src  # the title names it
    assert "not torch's bits" in explain(p).replace("\n", " ")  # the explanation says what it cannot do
    plain = render(fusegen.plan(model_spec(MODELS / "stage_relu_scale_tanh.py")[0]))
    assert "_draw_seed" not in plain and "philox" not in plain  # a layer without dropout is as before


def test_a_dropout_before_a_row_sum_is_not_rewritten_to_a_gemv(tmp_path):
    """The row-sum rewrite holds for affine head stages only: a dropout's row sum is not x . sum_j W_j."""
    path = _model_file(tmp_path, [], ["x = F.dropout(self.fc(x), 0.2, self.training)", "return x.sum(dim=1)"])
    assert not isinstance(fusegen.plan(model_spec(path)[0]), RowSumPlan)
    path = _model_file(tmp_path, [], ["x = self.fc(x).sum(dim=1, keepdim=True)",
                                           "return F.dropout(x, 0.2, self.training)"],
                       name="tail")
    assert not isinstance(fusegen.plan(model_spec(path)[0]), RowSumPlan)


@pytest.mark.parametrize("body,why", [
    ("x = nn.functional.dropout(x, 1.0, self.training)", "0 <= p < 1 is generated"),
    ("x = self.d1(x)", "Dropout1d (a dropout over channels or of another kind"),
    ("x = self.ad(x)", "AlphaDropout (an alpha dropout"),
])
def test_refusals_name_what_is_generated(tmp_path, body, why):
    path = _model_file(tmp_path, ["self.d1 = nn.Dropout1d(0.2)", "self.ad = nn.AlphaDropout(0.2)"],
                       ["x = self.fc(x)", body, "return x"])
    with pytest.raises(ModelError, match=why.replace("(", r"\(")):
        trace_chain(path)


@pytest.mark.skipif(NVCC is None, reason="nvcc not found")
@pytest.mark.parametrize("name", DROPOUT_FILES)
def test_dropout_kernels_compile_without_spills(name, tmp_path):
    for source, _ in compiles_without_spills(model_spec(MODELS / name)[0], tmp_path):  # mma.sync, wgmma
        assert "philox_first" in source
