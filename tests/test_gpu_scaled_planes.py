"""The tf32 and 3xtf32 modes on sm_90: the 16-bit wgmma engine over scaled fp16 planes of the fp32 operands
(Plan.plane, templates/engines/operand_scale.cuh.j2; one plane an operand for tf32, two for 3xtf32). A Linear alone
(its output is the GEMM's) with rows beyond what random inputs give: zeros, one huge element, subnormals, rows
2^100 apart, Inf and NaN; forward and both gradients against fp64 (per row: within TF32's documented tolerance for
tf32, within twice the fp32 reference's own error for 3xtf32) and the reference's Inf / NaN pattern. The property
tests (tests/test_gpu_module.py, tf32-sm90 and 3xtf32-sm90) cover the headline chain on every input distribution."""
import pytest
import torch

from helpers import REPO, engine_ran, gpu_available, import_file

import fusegen
from fusegen.frontend import load_model_file, model_spec
from fusegen.tools.accuracy import TF32_REL_ERR

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="needs a CUDA GPU and nvcc"),
              pytest.mark.skipif(gpu_available() and tuple(torch.cuda.get_device_capability()) != fusegen.WGMMA_ARCH,
                                 reason="the scaled planes are the sm_90 tf32 engine")]

K, N = 1000, 520  # (K not a multiple of 8: the planes' rows padded for the copy engine)


# variant -> (precision, arch planned for, the mainloop reading the planes); the sm_80 one (3xFP16 on mma.sync)
# runs here as sm_90 code
ENGINES = {"tf32": ("tf32", fusegen.WGMMA_ARCH, "wgmma_f16s"), "3xtf32": ("3xtf32", fusegen.WGMMA_ARCH, "wgmma_3xf16s"),
           "3xtf32-sm80": ("3xtf32", (8, 0), "mma_3xf16s")}
# 3xtf32: each finite row within this many times the fp32 reference's own error (normwise per row), or FLOOR
FP32_RATIO, FLOOR = 2.0, 1e-6


def _build(tmp_path_factory, variant, k, n):
    """(the model file, its module, the precision, input, hidden): tests/models/stage_linear_alone.py at k x n."""
    precision, arch, mainloop = ENGINES[variant]
    out = tmp_path_factory.mktemp("scaled")
    text = (REPO / "tests" / "models" / "stage_linear_alone.py").read_text()
    model = out / "linear_alone.py"
    model.write_text(text.replace("input_size = 29", f"input_size = {k}").replace("hidden_size = 70",
                                                                                   f"hidden_size = {n}"))
    plan = fusegen.plan(model_spec(model, precision=precision)[0], arch=arch, fixed_sizes=False,
                        scaled_planes=True)
    assert plan.scaled and plan.mainloop == mainloop
    return load_model_file(model), import_file(fusegen.write_module(plan, out)), precision, k, n


@pytest.fixture(scope="module", params=sorted(ENGINES))
def linear(tmp_path_factory, request):
    return _build(tmp_path_factory, request.param, K, N)


@pytest.fixture(scope="module")
def wide(tmp_path_factory, linear):
    """Rows wider than the row kernel holds in registers: x's and W's (8200 values; its 16-byte form holds 8192)
    and dz's (1030, not a multiple of 4; its 4-byte form holds 1024)."""
    variant = next(v for v, (_, _, mainloop) in ENGINES.items() if mainloop == linear[1].MAINLOOP)
    return _build(tmp_path_factory, variant, 8200, 1030)


def _extreme_rows(M, K, gen):
    x = torch.randn(M, K, generator=gen, dtype=torch.float64)
    x[0] = 0  # all zeros: scale 1
    x[1, 7] = 1e30  # one huge element beside O(1) ones (they drop below fp16's subnormals relative to it)
    x[2] *= 1e-41  # fp32 subnormals: the scale's exponent at float's bottom
    x[3] *= 2.0 ** 100
    x[4] *= 2.0 ** -100
    x[5] = 0
    x[5, 3] = 3e-39  # a single subnormal
    x[8, 11] = float("inf")
    x[9, 2] = float("-inf")
    x[10, 5] = float("nan")
    return x.float()


def _extreme_gradient_rows(M, N, gen):
    """The output's gradient with finite extreme rows (dz's row planes, with W's scales folded, take a zero,
    subnormal or huge value by exact paths), in rows whose x is ordinary (dW = dz^T x stays finite)."""
    g = torch.randn(M, N, generator=gen, dtype=torch.float64)
    g[11] = 0
    g[12] *= 2.0 ** 60
    g[13] *= 2.0 ** -100
    g[14] *= 1e-41  # fp32 subnormals
    g[15] = 0
    g[15, 3] = 3e-39  # a single subnormal
    g[16, 5] = 1e30  # one huge element beside O(1) ones
    return g.float()


def _row_errors(value, truth):
    """Per row: max |value - truth| / max |truth| (absolute where the row is zero)."""
    diff = (value.double() - truth).abs().amax(dim=1)
    scale = truth.abs().amax(dim=1)
    return torch.where(scale > 0, diff / scale.clamp_min(1e-300), diff)


@pytest.mark.parametrize("M, sizes", [(300, "linear"), (1024, "linear"), (256, "wide")])
def test_extreme_rows_match_the_reference(linear, wide, M, sizes):
    ns, linear, precision, K, N = wide if sizes == "wide" else linear
    gen = torch.Generator().manual_seed(M)
    torch.manual_seed(0)
    ref = ns.Model(K, N).cuda()
    torch.manual_seed(0)
    ours = linear.ModelNew(K, N).cuda()
    ours.load_state_dict(ref.state_dict())
    assert engine_ran(linear, M, K).startswith(linear.MAINLOOP), engine_ran(linear, M, K)
    x = _extreme_rows(M, K, gen).cuda()
    g = _extreme_gradient_rows(M, N, gen).cuda()
    finite = torch.isfinite(x).all(dim=1)
    w = ref.fc.weight.detach()
    with torch.no_grad():
        torch.backends.cuda.matmul.allow_tf32 = False
        want = ref(x)
        truth = x.double() @ w.double().t()
    # Inf and NaN where the reference has them (rows with a non-finite input); the finite rows within the
    # precision's bound against fp64, row by row (a row far below the others keeps its own relative accuracy)
    with torch.no_grad():
        out = ours(x)
    assert torch.equal(torch.isnan(out), torch.isnan(want)), "NaN pattern differs from the reference's"
    assert torch.equal(torch.isinf(out), torch.isinf(want)) and torch.equal(out[torch.isinf(want)],
                                                                             want[torch.isinf(want)])

    def bound(theirs):  # row by row, the reference's own error (fp32 on CUDA cores) sets 3xtf32's
        return torch.full_like(theirs, TF32_REL_ERR) if precision == "tf32" else \
            (FP32_RATIO * theirs).clamp_min(FLOOR)

    errors = _row_errors(out[finite], truth[finite])
    over = errors / bound(_row_errors(want[finite], truth[finite]))
    assert float(over.max()) <= 1, (float(errors.max()), int(over.argmax()), float(over.max()))
    assert (out[0] == 0).all()  # a zero row gives zeros (no bias)
    # gradients, on x with its non-finite rows zeroed (an Inf's gradient of W is Inf / NaN in any computation)
    xf = torch.where(finite.unsqueeze(1), x, torch.zeros_like(x)).requires_grad_(True)
    ours(xf).backward(g)
    xr = xf.detach().clone().requires_grad_(True)
    ref(xr).backward(g)
    dx_truth = g.double() @ w.double()
    dx_err = _row_errors(xf.grad, dx_truth)
    assert float((dx_err / bound(_row_errors(xr.grad, dx_truth))).max()) <= 1, float(dx_err.max())
    dw_truth = g.double().t() @ xf.detach().double()

    def dw_error(dw):
        return (dw.double() - dw_truth).abs().max() / dw_truth.abs().max()

    dw_err = dw_error(ours.fc.weight.grad)
    assert float(dw_err / bound(dw_error(ref.fc.weight.grad))) <= 1, float(dw_err)


def test_the_weight_plane_follows_every_update(linear):
    """The weight's fp16 plane is made once per version and kept (binding: weight_plane): after an optimizer step,
    load_state_dict, an in-place write and whole-weight writes through .data (which bypass the version counter:
    the GPU's fingerprint of the weight catches them) the module's output is what a fresh plane gives, bit for bit
    (a stale plane would differ)."""
    ns, linear, _, K, N = linear
    torch.manual_seed(0)
    ours = linear.ModelNew(K, N).cuda()
    x = torch.randn(512, K, device="cuda")

    def fresh():
        linear.clear_weight_planes()
        with torch.no_grad():
            return ours(x)

    with torch.no_grad():
        first = ours(x)
    assert linear.clear_weight_planes() >= 1  # the forward kept one
    assert torch.equal(first, fresh())
    updates = {
        "optimizer.step": lambda: (ours(x).square().mean().backward(),
                                   torch.optim.SGD(ours.parameters(), lr=10.0).step()),
        "load_state_dict": lambda: ours.load_state_dict(ns.Model(K, N).state_dict()),
        "in-place write": lambda: torch.no_grad()(ours.fc.weight.mul_)(1.5),
        ".data.copy_": lambda: ours.fc.weight.data.copy_(ns.Model(K, N).fc.weight.data),
        ".data.mul_": lambda: ours.fc.weight.data.mul_(0.5),
        ".data.normal_": lambda: ours.fc.weight.data.normal_(0, 0.02),
    }
    for name, update in updates.items():
        with torch.no_grad():
            before = ours(x)  # (the plane of the current version, kept)
        update()
        with torch.no_grad():
            after = ours(x)
        assert not torch.equal(before, after), name
        assert torch.equal(after, fresh()), name
    version = ours.fc.weight._version
    ours.fc.weight.data[3, 5] += 1.0  # (one element: the version stays, the fingerprint likely misses it)
    assert ours.fc.weight._version == version
    assert torch.equal(fresh(), fresh())


def test_a_training_step_makes_x_planes_once(linear):
    """grad_weight reads the planes of x the forward GEMM made (kept by autograd beside x) rather than making them
    again: a step runs the row-plane kernel four times (x's planes, the weight's idle check in forward and in
    grad_input, dz's rows), not five. The gradients' accuracy with the kept planes is
    test_extreme_rows_match_the_reference's."""
    _, linear, _, K, N = linear
    torch.manual_seed(0)
    ours = linear.ModelNew(K, N).cuda()
    x, g = torch.randn(1024, K, device="cuda", requires_grad=True), torch.randn(1024, N, device="cuda")
    assert engine_ran(linear, 1024, K).startswith(linear.MAINLOOP), engine_ran(linear, 1024, K)

    def step():
        ours.zero_grad(set_to_none=True)
        x.grad = None
        ours(x).backward(g)

    step()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    launches = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    assert sum("scale_rows_kernel" in n for n in launches) == 4, sorted(set(launches))
