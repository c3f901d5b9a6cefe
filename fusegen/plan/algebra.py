"""Chain rewrites that remove stages (issue 16's folds), each named where it fires: the plan's summary, the module's
docstring and its explanation say which did. The planner plans the folded chain; the model file keeps its own.

- doubling: `x + x` next to a scalar multiply is one multiply by twice the constant (exact in every type: a power
  of two commutes with rounding), two doublings one multiply by 4;
- scales: two scalar multiplies in a row are one (float32 layers: the product rounds once where the reference
  rounds twice, within an ulp);
- homogeneity: a positive scale before ReLU or LeakyReLU moves after it, relu(c x) = c relu(x) for c > 0, where
  a multiply there takes it in (float32 layers);
(reductions over the size-1 dim of a row value are identities the front end drops: Chain.folds names them.)

A stage whose value a residual or a row combine reads later is never folded away."""
import dataclasses

from ..spec import Spec, Stage

HOMOGENEOUS = ("relu", "leaky_relu")


def _mul(stage):
    """The constant of a scalar multiply stage (x + x: 2), else None."""
    if stage.kind == "add_self":
        return 2.0
    if stage.kind == "scalar" and stage.param("op") == "mul":
        return float(stage.param("value"))
    return None


def _scale(value, where):
    return Stage("scalar", (("op", "mul"), ("value", value)), where=where)


def fold(spec: Spec) -> Spec:
    """The spec with its chain folded and the folds added to its `folds`; unchanged when nothing fires."""
    if not spec.stages:
        return spec
    exact_only = spec.dtype != "float32" or bool(spec.autocast)
    stages, words = list(spec.stages), []
    while True:
        read = {s.param("src") for s in stages if s.kind in ("residual", "row_combine")}  # values read later
        step = _one_fold(stages, read, exact_only)
        if step is None:
            break
        at, removed, replacement, word = step
        stages[at:at + removed] = replacement
        shift = removed - len(replacement)
        stages = [dataclasses.replace(s, params=tuple((k, v - shift if k == "src" and v > at + removed - 1 else v)
                                                      for k, v in s.params))
                  if s.kind in ("residual", "row_combine") else s for s in stages]
        words.append(word)
    if not words:
        return spec
    return dataclasses.replace(spec, stages=tuple(stages), folds=spec.folds + tuple(words))


def _one_fold(stages, read, exact_only):
    """(index, stages removed, their replacement, words) of the first fold that applies, or None. Value k is
    the output of stage k - 1: folding stages i and i + 1 removes value i + 1, which nothing may read."""
    for i in range(len(stages) - 1):
        a, b = stages[i], stages[i + 1]
        ca, cb = _mul(a), _mul(b)
        if ca is not None and cb is not None and i + 1 not in read:
            exact = a.kind == "add_self" or b.kind == "add_self"
            if exact_only and not exact:
                continue
            what = "x + x and a scalar multiply" if exact and {a.kind, b.kind} != {"add_self"} else \
                "two doublings" if exact else "two scalar multiplies"
            return i, 2, [_scale(ca * cb, a.where)], f"{what} -> x * {ca * cb!r} (stage {i}{', ' + a.where if a.where else ''})"
        if exact_only or i + 2 >= len(stages):
            continue
        c = stages[i + 2]
        if ca is not None and ca > 0 and b.kind in HOMOGENEOUS and _mul(c) is not None and \
                not {i + 1, i + 2} & read:
            return i, 3, [b, _scale(ca * _mul(c), c.where)], \
                f"a positive scale moved across {b.kind} into the multiply after it -> x * {ca * _mul(c)!r} (stage {i})"
    return None
