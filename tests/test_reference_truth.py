"""CPU checks of the accuracy bar's fp64 truth (tests/helpers.py): it must equal the reference model in float64,
and the kink rule must only forgive elements within fp32 rounding of LeakyReLU's kink (within 16-bit rounding of z
for the 16-bit modules' bar, tests/test_gpu_dtypes.py)."""
import pytest
import torch

from fusegen.tools.accuracy import kink_tolerance_rounded_z

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


@pytest.mark.parametrize("dtype,unit", [(torch.bfloat16, 2.0 ** -8), (torch.float16, 2.0 ** -11)])
def test_kink_tolerance_of_rounded_z_covers_every_flip_and_little_more(dtype, unit):
    """z rounded to 16 bits before the GroupNorm (fp64 otherwise): every y that lands on the other side of 0 than
    fp64's lies within the tolerance, and few elements do (the tolerance forgives those alone)."""
    flips = inside = total = 0
    for seed, groups in [(0, 32), (1, 8), (2, 128), (3, 1)]:
        ref, x, grad, fn = _setup(batch=64, inp=256, hidden=512, groups=groups, seed=seed)
        W, b, gamma = ref.fc.weight.to(dtype).double(), ref.fc.bias.to(dtype).double(), ref.gn.weight
        x = x.to(dtype).double()
        z = x @ W.t() + b
        y64 = torch.nn.functional.group_norm(z, groups, eps=ref.gn.eps) * gamma
        y16 = torch.nn.functional.group_norm(z.to(dtype).double(), groups, eps=ref.gn.eps) * gamma
        tol = kink_tolerance_rounded_z(x, W, b, gamma, groups, ref.gn.eps, unit)
        flipped = y16.sign() != y64.sign()
        assert (y64.abs()[flipped] <= tol[flipped]).all(), (seed, groups)
        flips, inside, total = flips + int(flipped.sum()), inside + int((y64.abs() <= tol).sum()), total + y64.numel()
    assert flips > 0  # (the draws do reach the kink)
    assert inside < 0.01 * total, (inside, total)
