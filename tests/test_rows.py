"""Row reductions on the CPU: what the front end reads (shapes, identities, the tuple of max / min), the roles and
slots the planner gives each stage, and the spec checks that keep a chain's shapes consistent."""
import pytest

from helpers import REPO

import fusegen
from fusegen.frontend import model_spec
from fusegen.plan import ROWS
from fusegen.spec import Spec, SpecError, Stage

MODELS = REPO / "tests" / "models"


@pytest.mark.parametrize("name,kinds,out_shape", [
    ("row_logsumexp_tail.py", ("row_reduce", "leaky_relu", "scalar"), "flat"),  # .sum(dim=1) after: an identity
    ("row_min_values_sigmoid.py", ("row_reduce", "sigmoid"), "flat"),  # amax over the size-1 dim: an identity
    ("row_sum_keepdim_relu.py", ("row_reduce", "scalar", "relu"), "keepdim"),
    ("row_max_center.py", ("row_reduce", "row_combine"), "full"),
    ("row_softmax_module_wide.py", ("softmax", "scalar"), "full"),
])
def test_the_front_end_reads_reductions_their_identities_and_the_output_shape(name, kinds, out_shape):
    spec, chain = model_spec(MODELS / name)
    assert tuple(s.kind for s in chain.stages) == kinds
    assert spec.out_shape == out_shape
    assert fusegen.plan(spec, rewrite=False).group_strategy == ROWS  # (a row sum's rewrite: tests/test_row_sum.py)


def test_max_with_a_dim_is_a_reduction_to_torchs_first_index_and_amax_shares_ties():
    spec, _ = model_spec(MODELS / "row_max_center.py")
    assert spec.chain[0].params == (("how", "max"), ("keepdim", True))
    assert spec.chain[1].params == (("op", "sub"), ("src", 0))
    spec, _ = model_spec(MODELS / "row_amin_rsub.py")
    assert spec.chain[0].param("how") == "amin" and spec.chain[1].param("op") == "rsub"


def test_the_planner_gives_roles_slots_and_the_row_tail():
    spec, _ = model_spec(MODELS / "row_mixed_chain.py")
    p = fusegen.plan(spec)
    assert [s.role for s in p.stages] == ["reduce", "combine", "ew", "norm", "ew", "residual", "reduce"]
    assert [s.stats_at for s in p.stages if s.stats_at >= 0] == [0, 2, 4] and p.row_stats == 6
    assert [s.sums_at for s in p.stages if s.sums_at >= 0] == [0, 1, 2, 3] and p.row_sums == 4
    assert p.stages[1].row_of == 0 and p.stages[1].tail == ()
    assert p.terminal_reduce == 6 and p.terminal_tail == ()
    spec, _ = model_spec(MODELS / "row_logsumexp_tail.py")
    p = fusegen.plan(spec)
    assert p.terminal_tail == (2, 1) and p.terminal_reduce == 0  # backward walks the tail last stage first
    assert p.row_team == 256 and fusegen.plan(model_spec(MODELS / "row_softmax_torch.py")[0]).row_team == 32


def test_a_spec_with_mismatched_shapes_is_refused():
    reduce = Stage("row_reduce", (("how", "sum"), ("keepdim", True)))
    with pytest.raises(SpecError, match="reads a full value, got a row one"):
        Spec(8, 8, 1, stages=(reduce, Stage("channel", (("op", "mul"), ("param", "p")))))
    with pytest.raises(SpecError, match="must be an earlier \\(batch, hidden\\) value"):
        Spec(8, 8, 1, stages=(reduce, Stage("row_combine", (("op", "sub"), ("src", 1)))))


def test_a_groupnorm_beside_row_reductions_is_one_of_the_row_kernels_reductions():
    # x - mean -> GroupNorm (2 groups of 65, no affine) -> tanh -> log_softmax
    p = fusegen.plan(model_spec(MODELS / "row_center_gn_wide_tanh.py")[0])
    assert p.group_strategy == ROWS and p.gn_index == -1  # not the fused GroupNorm
    roles = [(s.kind, s.role) for s in p.stages]
    assert roles == [("row_reduce", "reduce"), ("row_combine", "combine"), ("group_norm", "gnorm"), ("tanh", "ew"),
                     ("log_softmax", "norm")]
    gn = p.stages[2]
    # its two doubles a group follow the other reductions' (their count depends on the run-time width)
    assert (gn.stats_at, gn.sums_at) == (p.row_stats, p.row_sums) == (4, 3)
    assert (gn.group_width, gn.group_lanes, p.row_group_width) == (65, 32, 65)  # wider than a warp: the team
    assert dict(gn.choices) == {"affine": False, "eps": 1e-3} and p.chan_slots == ()
    # with affine its weight and bias are per-channel parameters (their gradients: the column sums)
    p = fusegen.plan(model_spec(MODELS / "row_gn_silu_sum_scale.py")[0])
    gn = p.stages[1]
    assert (gn.role, gn.chan, gn.group_lanes) == ("gnorm", 1, 4)
    assert p.chan_slots == ((0, "param"), (1, "weight"), (1, "bias"))
    cuda = fusegen.render_cuda(p)
    assert "struct G1 {" in cuda and "constexpr int ROW_GROUP_WIDTH = 3;" in cuda
    # a BatchNorm beside another reduction is not generated yet
    gn = Stage("group_norm", (("num_groups", 2), ("eps", 1e-5), ("affine", False), ("weight", None), ("bias", None)))
    bn = Stage("batch_norm", (("eps", 1e-5), ("momentum", 0.1), ("affine", False), ("track_running_stats", False)))
    with pytest.raises(SpecError, match="a BatchNorm with a GroupNorm or a row reduction"):
        fusegen.plan(Spec(8, 8, 2, stages=(gn, bn)))


def test_a_row_output_module_allocates_one_value_a_row(tmp_path):
    for name, dims in (("row_logsumexp_tail.py", "fresh({M}, x.options()"),
                       ("row_sum_keepdim_relu.py", "fresh({M, 1}, x.options()")):
        text = fusegen.write_module(fusegen.plan(model_spec(MODELS / name)[0], rewrite=False), tmp_path).read_text()
        assert dims in text and "Z_ALWAYS = True" in text
