"""Chain folds (plan/algebra.py) on the CPU: what each fold makes of a chain, that a value read later is never
folded away, that 16-bit layers get only the exact folds, and that the plan and the explanation name them (the
GPU checks the folded chains' values: tests/models/fold_scales.py in tests/test_gpu_chains.py)."""
import dataclasses

from helpers import REPO

import fusegen
from fusegen.codegen.explain import explain
from fusegen.frontend import model_spec
from fusegen.plan.algebra import fold
from fusegen.spec import Stage

MODELS = REPO / "tests" / "models"


def _chain(spec):
    return [(s.kind, dict(s.params)) for s in spec.chain]


def test_folds_merge_doublings_and_scales_and_keep_what_a_residual_reads():
    spec = model_spec(MODELS / "fold_scales.py")[0]
    folded = fold(spec)
    assert _chain(folded) == [("relu", {}), ("scalar", {"op": "mul", "value": 2.0}), ("sigmoid", {}),
                              ("scalar", {"op": "mul", "value": 6.0}), ("residual", {"src": 2})]
    assert len(folded.folds) == 3 and "across relu" in folded.folds[0]
    p = fusegen.plan(spec)
    assert p.spec.chain == folded.chain and p.rewrites == folded.folds and "folded: 3 rewrite(s)" in p.summary
    assert "## Rewrites that fired" in explain(p)
    assert fusegen.plan(spec, rewrite=False).spec.chain == spec.chain  # as written on request


def _spec(*stages, dtype="float32"):
    return fusegen.Spec(8, 8, 1, stages=tuple(stages), dtype=dtype)


MUL = lambda c: Stage("scalar", (("op", "mul"), ("value", c)))  # noqa: E731


def test_a_value_read_later_is_not_folded_away():
    # x * 3 -> x + x where a residual reads x * 3's value (value 1): both stay
    spec = _spec(MUL(3.0), Stage("add_self"), Stage("residual", (("src", 1),)))
    assert fold(spec).chain == spec.chain
    # ... and where it reads the value after them, that value's index follows the fold
    spec = _spec(MUL(3.0), Stage("add_self"), Stage("tanh"), Stage("residual", (("src", 2),)))
    assert _chain(fold(spec)) == [("scalar", {"op": "mul", "value": 6.0}), ("tanh", {}), ("residual", {"src": 1})]


def test_sixteen_bit_layers_get_only_the_exact_folds():
    chain = (MUL(3.0), MUL(5.0), Stage("add_self"), MUL(0.5), Stage("relu"), MUL(2.0))
    assert _chain(fold(_spec(*chain))) == [("relu", {}), ("scalar", {"op": "mul", "value": 30.0})]
    # (in bf16 the reference rounds x * 5 and doubles it exactly: one multiply by 10 rounds the same)
    assert _chain(fold(_spec(*chain, dtype="bfloat16"))) == [
        ("scalar", {"op": "mul", "value": 3.0}), ("scalar", {"op": "mul", "value": 10.0}),
        ("scalar", {"op": "mul", "value": 0.5}), ("relu", {}), ("scalar", {"op": "mul", "value": 2.0})]


def test_a_negative_scale_does_not_cross_an_activation():
    spec = _spec(MUL(-2.0), Stage("relu"), MUL(3.0))
    assert fold(spec).chain == spec.chain
    leaky = Stage("leaky_relu", (("negative_slope", 0.1),))
    assert _chain(fold(_spec(MUL(2.0), leaky, MUL(3.0)))) == [("leaky_relu", {"negative_slope": 0.1}),
                                                              ("scalar", {"op": "mul", "value": 6.0})]


def test_the_front_end_names_the_size_1_reductions_it_drops():
    spec = model_spec(MODELS / "row_logsumexp_tail.py")[0]
    assert any("over the size-1 dim" in w for w in spec.folds)
    assert dataclasses.replace(spec, folds=()) == spec  # (out of comparisons and names)
