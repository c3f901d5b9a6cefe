"""The accuracy bar itself (fusegen.accuracy.compare), on the CPU: it passes the reference against itself and
fails a layer that is wrong by a little, so the GPU tests built on it can fail."""
import pytest
import torch

import fusegen
from fusegen.accuracy import ReferenceLayer, compare

SPEC = fusegen.Spec(48, 64, 4)


def test_the_reference_passes_against_itself():
    report, problems = compare(ReferenceLayer, ReferenceLayer, SPEC, batch=9, seed=0, device="cpu")
    assert problems == []
    assert set(report) >= {"out", "grad_x", "grad_fc.weight", "grad_fc.bias", "grad_gn.weight", "grad_gn.bias"}
    for name in ("out", "grad_x"):
        ours, ref = report[name]
        assert ours == ref and 0 < ref < 1e-5  # the same fp32 computation: the same error against fp64


class _Off(ReferenceLayer):
    """The reference, off by a relative `scale` in its output (and so in every gradient)."""
    scale = 0.0

    def forward(self, x):
        return super().forward(x) * (1 + self.scale)


@pytest.mark.parametrize("scale,missed", [(1e-3, {"out", "allclose"}), (3e-6, {"out"}), (1e-8, set())])
def test_a_layer_off_by_a_little_is_caught(scale, missed):
    off = type("Off", (_Off,), {"scale": scale})
    report, problems = compare(off, ReferenceLayer, SPEC, batch=9, seed=1, device="cpu")
    text = "\n".join(problems)
    for word in missed:
        assert word in text, (scale, text)
    if not missed:
        assert problems == [], text


def test_nan_in_a_gradient_is_caught():
    class NanGrad(ReferenceLayer):
        def forward(self, x):
            y = super().forward(x)
            if y.requires_grad:  # the output stays finite; every gradient becomes NaN
                y.register_hook(lambda g: g * float("nan"))
            return y
    _, problems = compare(NanGrad, ReferenceLayer, SPEC, batch=5, seed=2, device="cpu")
    assert any(p.startswith("grad_x: non-finite") for p in problems), problems
    assert not any(p.startswith("out:") for p in problems), problems


def test_tf32_is_judged_by_its_own_tolerance():
    spec = fusegen.Spec(48, 64, 4, precision="tf32")
    off = type("Off", (_Off,), {"scale": 1e-4})  # far outside fp32's bar, inside TF32's (2e-3)
    _, problems = compare(off, ReferenceLayer, spec, batch=9, seed=3, device="cpu")
    assert problems == []
    worse = type("Worse", (_Off,), {"scale": 1e-2})
    _, problems = compare(worse, ReferenceLayer, spec, batch=9, seed=3, device="cpu")
    assert problems
