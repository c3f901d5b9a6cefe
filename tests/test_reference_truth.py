"""CPU checks of the accuracy bar's fp64 truth (tests/helpers.py): it must equal the reference model in float64,
and the kink rule must only forgive elements within fp32 rounding of LeakyReLU's kink."""
import torch

from helpers import NAMES, layer_fp64, kink_tolerance, reference_namespace, run_layer, truth_for


def _setup(batch=5, inp=7, hidden=12, groups=3, seed=0):
    torch.manual_seed(seed)
    ref = reference_namespace()["Model"](inp, hidden, groups).double()
    x = torch.rand(batch, inp, dtype=torch.float64)
    grad = torch.randn(batch, hidden, dtype=torch.float64)
    params = (ref.fc.weight, ref.fc.bias, ref.gn.weight, ref.gn.bias)

    def fn(positive):
        return layer_fp64(x, *params, groups, ref.gn.eps, ref.leaky_relu.negative_slope, positive)

    return ref, x, grad, fn


def test_fp64_truth_equals_reference_model():
    ref, x, grad, fn = _setup()
    expected = run_layer(ref, x, grad, torch.float64)
    y = fn(torch.ones(5, 12, dtype=torch.bool))[0].detach() / 2
    got, flips = truth_for(expected[0], y, torch.zeros_like(y), fn, grad)
    assert flips == 0
    for name, a, b in zip(NAMES, got, expected):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12, msg=name)


def test_kink_rule_forgives_only_elements_within_tolerance():
    ref, x, grad, fn = _setup()
    y = fn(torch.ones(5, 12, dtype=torch.bool))[0].detach() / 2
    flipped = -y  # a tested output on the other side of the kink everywhere
    tol = torch.zeros_like(y)
    tol[0, 0] = y[0, 0].abs()  # one element counts as at the kink
    got, flips = truth_for(flipped, y, tol, fn, grad)
    assert flips == 1
    plain, _ = truth_for(y, y, torch.zeros_like(y), fn, grad)
    assert not torch.equal(got[1], plain[1])  # grad_x follows the flipped side
    assert torch.equal(got[2][4:], plain[2][4:])  # only the rows of element 0's group (4 channels) change
    assert not torch.equal(got[2][:4], plain[2][:4])


def test_kink_tolerance_covers_fp32_rounding_and_little_more():
    ref, x, grad, fn = _setup(batch=4, inp=4096, hidden=16, groups=4)
    tol = kink_tolerance(x, ref.fc.weight, ref.fc.bias, ref.gn.weight, 4, ref.gn.eps)
    y = fn(torch.ones(4, 16, dtype=torch.bool))[0].detach() / 2
    ref32 = ref.float()
    y32 = ref32.gn(ref32.fc(x.float())).double()  # the fp32 reference's pre-activation
    assert tol.shape == y.shape
    assert ((y32 - y).abs() <= tol).all()
    assert (tol < 1e-3 * y.abs().max()).all()
