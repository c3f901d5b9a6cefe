"""The accuracy bar shared by `fusegen check` and the GPU tests: a layer's output and its five gradients against
an fp64 truth, beside the fp32 PyTorch reference's own error on the same inputs."""
import torch
import torch.nn as nn

from .spec import TF32


class ReferenceLayer(nn.Module):
    """The layer fusegen replaces, in plain PyTorch (the user's reference `Model`, same parameter order)."""

    def __init__(self, input_size, hidden_size, num_groups, eps=1e-5, negative_slope=0.01):
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=hidden_size, eps=eps)
        self.leaky_relu = nn.LeakyReLU(negative_slope=negative_slope)

    def forward(self, x):
        x = self.leaky_relu(self.gn(self.fc(x)))
        return x + x


def rel_err(value: torch.Tensor, truth: torch.Tensor) -> float:
    """||value - truth|| / ||truth|| in float64 (absolute when truth is zero)."""
    diff = (value.double() - truth).norm().item()
    norm = truth.norm().item()
    return diff / norm if norm > 0 else diff


def run_layer(model, x, grad, dtype):
    """Forward and backward of `model` at `dtype`; returns out and the five gradients, in that order."""
    x = x.to(dtype).detach().requires_grad_()
    out = model(x)
    out.backward(grad.to(dtype))
    grads = [x.grad, model.fc.weight.grad, model.fc.bias.grad, model.gn.weight.grad, model.gn.bias.grad]
    return [out.detach()] + [g.detach() for g in grads]


NAMES = ("out", "grad_x", "grad_fc.weight", "grad_fc.bias", "grad_gn.weight", "grad_gn.bias")


def layer_fp64(x, W, b, gamma, beta, groups, eps, slope, positive):
    """The layer in float64 with LeakyReLU's branch given by the boolean tensor `positive` (y > 0 side).

    Returns out and the five gradients' leaves (x, W, b, gamma, beta), ready for backward.
    """
    leaves = [t.detach().double().requires_grad_() for t in (x, W, b, gamma, beta)]
    x, W, b, gamma, beta = leaves
    z = x @ W.t() + b
    zg = z.view(z.shape[0], groups, z.shape[1] // groups)
    mean = zg.mean(-1, keepdim=True)
    var = ((zg - mean) ** 2).mean(-1, keepdim=True)
    y = ((zg - mean) / torch.sqrt(var + eps)).view_as(z) * gamma + beta
    a = torch.where(positive, y, slope * y)
    return a + a, leaves


def kink_tolerance(x, W, b, gamma, groups, eps):
    """Per element of y: how far from 0 an fp32 computation's y can land on the other side of LeakyReLU's kink.

    An fp32 sum of K terms t_k in any order is off by about u * sqrt(K) * ||t||_2 (random-walk rounding of
    partial sums; a factor 8 of margin here), with t = x_k * W[n, k] and the bias; GroupNorm scales that by
    rstd * |gamma| and mixes the group's channels, so the largest in the group counts.
    """
    x, W, b, gamma = (t.double() for t in (x, W, b, gamma))
    z = x @ W.t() + b
    zg = z.view(z.shape[0], groups, z.shape[1] // groups)
    rstd = 1.0 / torch.sqrt(zg.var(-1, unbiased=False, keepdim=True) + eps)
    norm_t = torch.sqrt((x * x) @ (W * W).t() + b * b).view_as(zg).amax(-1, keepdim=True)
    u = 2.0 ** -24
    z_err = 8 * u * (x.shape[1] + 1) ** 0.5 * norm_t
    return (z_err * rstd).expand_as(zg).reshape(z.shape) * gamma.abs() + 8 * u


def truth_for(tested_out, y64, tol, fn, grad):
    """fp64 out and gradients with the kink resolved as `tested_out` resolved it, where that is within `tol`.

    Elements whose fp64 pre-activation lies within the fp32 rounding tolerance of the LeakyReLU kink have no
    well-defined side for an fp32 computation: either subgradient is right. Elsewhere the fp64 side is the truth.
    Returns the tensors and the number of such elements that took the other side.
    """
    fp64_side = y64 > 0
    tested_side = tested_out > 0
    ambiguous = (y64.abs() <= tol) & (tested_side != fp64_side)
    out, leaves = fn(torch.where(ambiguous, tested_side, fp64_side))
    out.backward(grad.double())
    return [out.detach()] + [t.grad for t in leaves], int(ambiguous.sum())


# TF32's documented tolerance: every tensor within TF32_REL_ERR (normwise, vs fp64) or, on ill-conditioned
# problems, within 4x the fp32 reference's own error scaled by the unit-roundoff ratio 2^-11 / 2^-24.
TF32_REL_ERR = 2e-3
TF32_ROUNDOFF_RATIO = 2.0 ** 13




def compare(model_new_cls, reference_cls, spec, batch, seed, device="cuda", strict_allclose=False):
    """ModelNew against the fp32 reference and fp64 on fresh random inputs (random GroupNorm affine too).

    Returns (report, problems): report maps each tensor name to (our rel. error vs fp64, the fp32 reference's),
    plus "max_out_diff", "kink_flips" and "allclose_exceptions"; problems lists what missed the bar, in words.
    The bar: output allclose(1e-4, 1e-4) to the fp32 reference; every tensor within max(4 x the fp32
    reference's own error, 1e-6) of fp64; nothing non-finite. An element whose pre-activation is within fp32
    rounding of LeakyReLU's kink is judged on the side the tested computation took (each of ours and the fp32
    reference gets its own fp64 truth). Unless strict_allclose, an output element outside allclose of the fp32
    reference passes where ours is the closer of the two to fp64 (a 3-channel group whose variance is near 0
    amplifies z's rounding by up to 1/sqrt(eps): there the fp32 reference alone can be off by more than 1e-4).
    TF32 is judged by its own documented tolerance (TF32_REL_ERR; no allclose).
    """
    tf32 = spec.precision == TF32
    args = (spec.input_size, spec.hidden_size, spec.num_groups)
    torch.manual_seed(seed)
    ref = reference_cls(*args).to(device)
    torch.manual_seed(seed)
    new = model_new_cls(*args).to(device)
    gen = torch.Generator().manual_seed(seed)
    gamma = (1 + 0.5 * torch.randn(spec.hidden_size, generator=gen)).to(device)
    beta = (0.5 * torch.randn(spec.hidden_size, generator=gen)).to(device)
    with torch.no_grad():
        for m in (ref, new):
            m.gn.weight.copy_(gamma)
            m.gn.bias.copy_(beta)
    x = torch.rand(batch, spec.input_size, generator=gen).to(device)
    grad = torch.randn(batch, spec.hidden_size, generator=gen).to(device)

    ours = run_layer(new, x, grad, torch.float32)
    fp32 = run_layer(ref, x, grad, torch.float32)

    eps, slope, groups = ref.gn.eps, ref.leaky_relu.negative_slope, spec.num_groups
    params = (ref.fc.weight, ref.fc.bias, ref.gn.weight, ref.gn.bias)

    def fn(positive):
        return layer_fp64(x, *params, groups, eps, slope, positive)

    with torch.no_grad():
        y64 = fn(torch.ones_like(x[:, :1].expand(batch, spec.hidden_size), dtype=torch.bool))[0] / 2
        tol = kink_tolerance(x, ref.fc.weight, ref.fc.bias, ref.gn.weight, groups, eps)
        if tf32:  # TF32 operands: pre-activations within TF32's (not fp32's) rounding of the kink are ambiguous
            tol = tol * TF32_ROUNDOFF_RATIO
    truth_ours, flips_ours = truth_for(ours[0], y64, tol, fn, grad)
    truth_fp32, flips_fp32 = truth_for(fp32[0], y64, tol, fn, grad)

    report, problems = {}, []
    where = f"({spec}, batch {batch}, seed {seed})"
    for name, a, r32, t_ours, t_fp32 in zip(NAMES, ours, fp32, truth_ours, truth_fp32):
        if a.shape != t_ours.shape or a.dtype != torch.float32:
            problems.append(f"{name}: {tuple(a.shape)} {a.dtype}, expected {tuple(t_ours.shape)} float32")
            continue
        if not torch.isfinite(a).all():
            problems.append(f"{name}: non-finite values (unwritten or overflowed) {where}")
        report[name] = (rel_err(a, t_ours), rel_err(r32, t_fp32))
    out_diff = (ours[0] - fp32[0]).abs().max().item() if ours[0].numel() else 0.0
    close = torch.isclose(ours[0], fp32[0], atol=1e-4, rtol=1e-4)
    ours_closer = (ours[0].double() - truth_ours[0]).abs() <= (fp32[0].double() - truth_ours[0]).abs()
    ok = close if strict_allclose else close | ours_closer
    if not tf32 and not bool(ok.all()):
        problems.append(f"output not allclose(1e-4) to the fp32 reference: max diff {out_diff:.3g}, "
                        f"{int((~ok).sum())} elements where the fp32 reference is also closer to fp64 {where}")
    for name, (e_ours, e_ref) in report.items():
        bar = max(4 * e_ref * TF32_ROUNDOFF_RATIO, TF32_REL_ERR) if tf32 else max(4 * e_ref, 1e-6)
        if not e_ours <= bar:
            problems.append(f"{name}: rel. error {e_ours:.3g} > bar {bar:.3g} {where}; kink flips taken: ours "
                            f"{flips_ours}, fp32 reference {flips_fp32}")
    report["max_out_diff"] = out_diff
    report["kink_flips"] = (flips_ours, flips_fp32)
    report["allclose_exceptions"] = int((~close & ours_closer).sum())
    return report, problems


def compare_models(model_new_cls, reference_cls, init_args, input_shape, seed, device="cuda"):
    """Any generated ModelNew against its model file's Model: the output and the gradients of the input and of
    every parameter, each against an fp64 run of the reference (same weights) beside the fp32 reference's own
    error. Parameters of one dimension (biases, GroupNorm affine, per-channel scales) are perturbed first, the
    same way in both models, so that their gradients are exercised away from their initial values.

    Returns (report, problems) like `compare`: the bar is the same (output allclose(1e-4, 1e-4) to the fp32
    reference, or closer to fp64 than it where the two differ; every tensor within max(4 x the fp32 reference's
    error, 1e-6) of fp64; everything finite).
    """
    torch.manual_seed(seed)
    ref = reference_cls(*init_args).to(device)
    torch.manual_seed(seed)
    new = model_new_cls(*init_args).to(device)
    gen = torch.Generator().manual_seed(seed)
    names = [n for n, _ in ref.named_parameters()]
    if names != [n for n, _ in new.named_parameters()]:
        return {}, [f"parameters differ: ModelNew has {[n for n, _ in new.named_parameters()]}, Model {names}"]
    with torch.no_grad():
        for (_, p), (_, q) in zip(ref.named_parameters(), new.named_parameters()):
            if not torch.equal(p, q):
                return {}, ["the same seed gave different initial parameters"]
            if p.dim() == 1:
                scale = 0.75 + 0.5 * torch.rand(p.shape, generator=gen)
                shift = 0.1 * torch.randn(p.shape, generator=gen)
                p.copy_(p.cpu() * scale + shift)
                q.copy_(p)
    x = torch.rand(*input_shape, generator=gen).mul_(2).sub_(1).to(device)
    ref64 = reference_cls(*init_args)
    ref64.load_state_dict(ref.state_dict())
    ref64 = ref64.to(device).double()
    with torch.no_grad():
        out_shape = ref(x).shape
    grad = torch.randn(*out_shape, generator=gen).to(device)

    def run(model, dtype):
        xin = x.to(dtype).detach().requires_grad_()
        model.zero_grad(set_to_none=True)
        out = model(xin)
        out.backward(grad.to(dtype))
        return [("out", out.detach()), ("grad_x", xin.grad)] + [
            (f"grad_{n}", p.grad) for n, p in model.named_parameters()]

    ours, fp32, truth = run(new, torch.float32), run(ref, torch.float32), run(ref64, torch.float64)
    report, problems = {}, []
    where = f"(batch {input_shape[0]}, seed {seed})"
    for (name, a), (_, r32), (_, t) in zip(ours, fp32, truth):
        if a is None or t is None:
            if (a is None) != (t is None):
                problems.append(f"{name}: {'missing' if a is None else 'unexpected'} gradient")
            continue
        if a.shape != t.shape or a.dtype != torch.float32:
            problems.append(f"{name}: {tuple(a.shape)} {a.dtype}, expected {tuple(t.shape)} float32")
            continue
        if not torch.isfinite(a).all():
            problems.append(f"{name}: non-finite values (unwritten or overflowed) {where}")
        report[name] = (rel_err(a, t), rel_err(r32, t))
    out, out32, out64 = ours[0][1], fp32[0][1], truth[0][1]
    close = torch.isclose(out, out32, atol=1e-4, rtol=1e-4)
    ours_closer = (out.double() - out64).abs() <= (out32.double() - out64).abs()
    if not bool((close | ours_closer).all()):
        problems.append(f"output not allclose(1e-4) to the fp32 reference: max diff "
                        f"{(out - out32).abs().max().item():.3g} {where}")
    for name, (e_ours, e_ref) in report.items():
        bar = max(4 * e_ref, 1e-6)
        if not e_ours <= bar:
            problems.append(f"{name}: rel. error {e_ours:.3g} > bar {bar:.3g} (fp32 reference {e_ref:.3g}) {where}")
    report["max_out_diff"] = (out - out32).abs().max().item() if out.numel() else 0.0
    return report, problems
