"""The op registry (fusegen/ops/): every op is whole — device code with a forward and a backward, a front-end
spelling, a README row, a short name — so that nothing is half-added."""
import re

import pytest

from helpers import REPO

import fusegen
from fusegen.frontend import STAGES
from fusegen.ops import COLUMN, ELEMENTWISE, GROUP, OPS, ROW, ROW_VALUE, WINDOW, chain_title, op
from fusegen.spec import Spec, Stage

TEMPLATES = REPO / "templates"


@pytest.mark.parametrize("kind", sorted(OPS))
def test_every_op_has_device_code_with_forward_and_backward(kind):
    o = OPS[kind]
    if o.reduces == GROUP:  # GroupNorm: its fused epilogues per strategy, its backward kernel; beside row reductions
        # one of the row kernels' reductions
        assert list(TEMPLATES.glob("epilogue/epilogue_gn_*.cuh.j2")) and (TEMPLATES / "epilogue/gn_backward.cuh.j2").is_file()
        text = (TEMPLATES / "ops" / f"reduce_{kind}.cuh.j2").read_text()
        for fn in ("fwd", "bwd_add", "bwd"):
            assert re.search(rf"\b{fn}\(", text), f"reduce_{kind}: {fn}"
        for name in o.choices:
            assert f'st.choice("{name}")' in text, f"reduce_{kind} does not express its choice {name}"
        return
    if o.reduces == ROW:  # a row reduction: its state, its merge, forward and backward
        text = (TEMPLATES / "ops" / f"reduce_{kind}.cuh.j2").read_text()
        need = ("init", "add", "merge", "finish", "bwd") + (("value",) if o.makes == ROW_VALUE else ("apply", "bwd_add"))
        for fn in need:
            assert re.search(rf"\b{fn}\(", text), f"reduce_{kind}: {fn}"
        for name in o.choices:
            assert f'st.choice("{name}")' in text, f"reduce_{kind} does not express its choice {name}"
        return
    if o.reduces == COLUMN:  # a reduction over the batch: what a column keeps, forward, backward and its sums
        text = (TEMPLATES / "ops" / f"column_{kind}.cuh.j2").read_text()
        for fn in ("col", "fwd", "bwd_add", "bwd"):
            assert re.search(rf"\b{fn}\(", text), f"column_{kind}: {fn}"
        for name in o.choices:
            assert f'st.choice("{name}")' in text, f"column_{kind} does not express its choice {name}"
        cols = (TEMPLATES / "epilogue" / "epilogue_cols.cuh.j2").read_text()
        for name in o.scalars:  # runtime scalars are read through their slots
            assert f'.slot("{name}")' in cols, f"the column kernels do not read {kind}'s scalar {name}"
        return
    if o.reduces == WINDOW and o.accumulate:  # an average pool, run on the Linear's weight: its kernels both ways
        text = (TEMPLATES / "ops" / f"weight_{kind}.cuh.j2").read_text()
        for fn in ("pool_weight_kernel", "pool_weight_grad_kernel", "pool_window"):
            assert re.search(rf"\b{fn}\(", text), f"weight_{kind}: {fn}"
        return
    if o.reduces == WINDOW:  # a max pool, read by the row kernels: its width, a window's value and its backward
        text = (TEMPLATES / "ops" / f"pool_{kind}.cuh.j2").read_text()
        for fn in ("width", "fwd", "bwd"):
            assert re.search(rf"\b{fn}\(", text), f"pool_{kind}: {fn}"
        for name in o.choices:
            assert f'st.choice("{name}")' in text, f"pool_{kind} does not express its choice {name}"
        return
    assert o.reduces == ELEMENTWISE
    if kind == "residual":  # reads two chain values: composed in the chain itself
        text = (TEMPLATES / "epilogue" / "epilogue_chain.cuh.j2").read_text()
        assert 'st.kind == "residual"' in text
        return
    text = (TEMPLATES / "ops" / f"stage_{kind}.cuh.j2").read_text()
    assert re.search(r"\bfwd\(", text) and re.search(r"\bbwd\(", text), f"stage_{kind}: fwd and bwd"
    for name in o.scalars:  # runtime scalars are read through their slots
        assert f'st.slot("{name}")' in text, f"stage_{kind} does not read its scalar {name}"
    for name in o.choices:
        assert f'st.choice("{name}")' in text, f"stage_{kind} does not express its choice {name}"


def test_every_op_has_a_spelling_a_readme_row_and_a_unique_short_name():
    readme = (REPO / "README.md").read_text()
    table = readme[readme.index("| stage | spellings recognized |"):]
    table = table[:table.index("\n\n")]
    for kind, o in OPS.items():
        assert STAGES[kind] == o.spellings and o.spellings
        assert o.title in table, f"README's stage table has no row for {o.title}"
    shorts = [o.short for o in OPS.values()]
    assert len(set(shorts)) == len(shorts)


def test_titles_and_kinks_come_from_the_registry():
    assert chain_title(Spec(8, 8, 1).chain) == "Linear -> GroupNorm -> LeakyReLU -> x + x"
    assert op("scalar").title_of(Stage("scalar", (("op", "rsub"), ("value", 2.0)))) == "2.0 - x"
    assert Stage("hardtanh", (("min_val", -1.0), ("max_val", 2.0))).kinks == ((-1.0, 0.0, 1.0), (2.0, 1.0, 0.0))
    assert Stage("clamp", (("min", None), ("max", 3.0))).kinks == ((3.0, 1.0, 0.0),)
    assert Stage("gelu", (("approximate", "none"),)).kinks == ()
    assert Stage("channel", (("op", "pfmax"), ("param", "floor"))).kinks == (("floor", 0.0, 1.0),)
    assert Stage("channel", (("op", "clamp_max"), ("param", "cap"))).kinks == (("cap", 1.0, 0.0),)
    assert Stage("channel", (("op", "mul"), ("param", "scale"))).kinks == ()
    with pytest.raises(KeyError, match="no op 'softplus'"):
        op("softplus")


def test_every_op_declares_its_element_types_and_the_plan_carries_them():
    from fusegen.dtypes import DTYPES

    for kind, o in OPS.items():
        assert o.compute in DTYPES, kind
        # (a reduction's state has a type; a max pool selects, keeping none)
        assert (o.accumulate in DTYPES) if o.reduces != ELEMENTWISE and kind != "max_pool" else not o.accumulate, kind
    p = fusegen.plan(Spec(64, 64, 4))
    assert (p.element.name, p.compute.name, p.statistics.name) == ("float32", "float32", "float64")
    cuda = fusegen.render_cuda(p)
    for alias, t in (("elem_t", "float"), ("compute_t", "float"), ("stat_t", "double")):
        assert f"using {alias} = {t};" in cuda
