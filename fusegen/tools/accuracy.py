"""The accuracy bar shared by `fusegen check` and the GPU tests: a layer's output and its gradients against an
fp64 truth, beside the fp32 PyTorch reference's own error on the same inputs.

The bar, for the output and every gradient: nothing non-finite; the normwise error ||ours - truth|| / ||truth||
within max(4x the fp32 reference's, 1e-6); the element-wise error max|ours - truth| / max|truth| within
max(8x the fp32 reference's, 2e-6) (so one wrong element or tile fails); neither bar below what rounding the
GEMM output to fp32 alone causes (z_rounding_floor, x4 and x8: ill-conditioned tensors, where one draw of the
reference's error says little); the output allclose(1e-4, 1e-4) to the
fp32 reference, or where the two differ no farther from fp64 than it or than the GEMM's fp32 rounding bound carried
to that element (rounding_scale). Where an element's fp64 input to a kinked op
(ReLU, LeakyReLU, Hardtanh, clamp, min / max against a parameter: Stage.kinks) lies within fp32 rounding of a kink, either side is right: each
computation (ours, the fp32 reference) is judged against an fp64 truth that takes the side it took there.
"""
import copy

import torch
import torch.fx
import torch.nn as nn

from ..spec import TF32

U = 2.0 ** -24  # fp32's unit roundoff


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


def kink_tolerance_rounded_z(x, W, b, gamma, groups, eps, unit):
    """Per element of y: how far from 0 y can land on the other side of LeakyReLU's kink when the Linear's output z
    is rounded to a type of unit roundoff `unit` before the GroupNorm (a 16-bit layer, or one under autocast).

    Near the kink z is near its group's mean: its rounding moves it by about unit * |mean|, the mean by about
    unit * rms(z) / sqrt(group width); rstd * |gamma| carries both to y (rstd's own change multiplies a y near 0).
    A factor 2 of margin: emulated (benchmarks/emulate_half_rounding.py's rounding, 7 shapes of tests/
    test_gpu_dtypes.py in bf16 and fp16), all 320 flips lay within 0.48 of this, and 1 element in 10^3 inside it.
    """
    x, W, b, gamma = (t.double() for t in (x, W, b, gamma))
    z = x @ W.t() + b
    zg = z.view(z.shape[0], groups, z.shape[1] // groups)
    rstd = 1.0 / torch.sqrt(zg.var(-1, unbiased=False, keepdim=True) + eps)
    moves = zg.mean(-1, keepdim=True).abs() + zg.square().mean(-1, keepdim=True).sqrt() / zg.shape[-1] ** 0.5
    return (2 * unit * rstd * moves).expand_as(zg).reshape(z.shape) * gamma.abs() + 8 * U


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


def headline_truths(ref, x, grad, tested, tolerance):
    """For the headline layer `ref` (fc -> gn -> leaky_relu -> x + x): per tested output (name -> out), truth_for's
    fp64 out and gradients and its count, fp64's y ambiguous within tolerance(x, W, b, gamma, groups, eps) of the
    kink (kink_tolerance: fp32 rounding; kink_tolerance_rounded_z: a 16-bit z's)."""
    params = (ref.fc.weight, ref.fc.bias, ref.gn.weight, ref.gn.bias)
    groups, eps, slope = ref.gn.num_groups, ref.gn.eps, ref.leaky_relu.negative_slope

    def fn(positive):
        return layer_fp64(x, *params, groups, eps, slope, positive)

    with torch.no_grad():
        y64 = fn(torch.ones(x.shape[0], ref.fc.weight.shape[0], dtype=torch.bool, device=x.device))[0] / 2
        tol = tolerance(x, *params[:3], groups, eps)
    return {name: truth_for(out, y64, tol, fn, grad) for name, out in tested.items()}


# TF32's documented tolerance: every tensor within TF32_REL_ERR (normwise, vs fp64) or, on ill-conditioned
# problems, within 4x the fp32 reference's own error scaled by the unit-roundoff ratio 2^-11 / 2^-24.
TF32_REL_ERR = 2e-3
TF32_ROUNDOFF_RATIO = 2.0 ** 13


# Inputs: the public kernel benchmark's harness may draw from any of these (not only torch.rand); "row_scales" has
# rows whose magnitudes differ by up to 2^20.
DISTRIBUTIONS = ("rand", "uniform", "normal", "laplace", "exponential", "lognormal", "row_scales")


def draw_input(shape, dist, gen):
    """A float32 CPU tensor of `shape` from the named distribution (see DISTRIBUTIONS), drawn with `gen`."""
    shape = tuple(shape)
    if dist == "rand":
        return torch.rand(shape, generator=gen)
    if dist == "uniform":
        return torch.rand(shape, generator=gen).mul_(2).sub_(1)
    u = torch.rand(shape, generator=gen, dtype=torch.float64)
    if dist == "normal":
        v = torch.randn(shape, generator=gen, dtype=torch.float64)
    elif dist == "laplace":
        v = -torch.sign(u - 0.5) * torch.log((1 - 2 * (u - 0.5).abs()).clamp_min(1e-300))
    elif dist == "exponential":
        v = -torch.log1p(-u)
    elif dist == "lognormal":
        v = torch.exp(torch.randn(shape, generator=gen, dtype=torch.float64))
    elif dist == "row_scales":
        rows = torch.rand(shape[:-1] + (1,), generator=gen, dtype=torch.float64)
        v = torch.randn(shape, generator=gen, dtype=torch.float64) * torch.exp2(20 * rows - 10)
    else:
        raise ValueError(f"unknown input distribution {dist!r}; expected one of {', '.join(DISTRIBUTIONS)}")
    return v.float()


def max_err(value: torch.Tensor, truth: torch.Tensor) -> float:
    """max|value - truth| / max|truth| in float64 (absolute when truth is zero): one wrong element shows."""
    if not truth.numel():
        return 0.0
    diff = (value.double() - truth).abs().max().item()
    top = truth.abs().max().item()
    return diff / top if top > 0 else diff


def _judge(tensors, where, tf32=False, strict_allclose=False, out_rounding=None, floors=None):
    """The bar (see the module docstring) over (name, ours, fp32 reference, truth for ours, truth for the fp32
    reference) rows, the output first; `out_rounding`: rounding_scale's bound on each output element's fp32
    error (None: 0); `floors`: z_rounding_floor's errors, which no bar goes below. Returns (report, problems): report[name] = (our normwise error, the fp32
    reference's), report["elementwise"][name] the same for max_err, report["max_out_diff"] and
    report["allclose_exceptions"]."""
    report, problems, elementwise = {}, [], {}
    for name, a, r32, t, t32 in tensors:
        if a is None or t is None:
            if (a is None) != (t is None):
                problems.append(f"{name}: {'missing' if a is None else 'unexpected'} gradient")
            continue
        if a.shape != t.shape or a.dtype != torch.float32:
            problems.append(f"{name}: {tuple(a.shape)} {a.dtype}, expected {tuple(t.shape)} float32")
            continue
        if not torch.isfinite(a).all():
            problems.append(f"{name}: non-finite values (unwritten or overflowed) {where}")
        report[name] = (rel_err(a, t), rel_err(r32, t32))
        elementwise[name] = (max_err(a, t), max_err(r32, t32))
    for name, (e_ours, e_ref) in list(report.items()):
        f_norm, f_elem = (floors or {}).get(name, (0.0, 0.0))
        bar = max(4 * e_ref * TF32_ROUNDOFF_RATIO, TF32_REL_ERR) if tf32 else max(4 * e_ref, 1e-6, 4 * f_norm)
        if not e_ours <= bar:
            problems.append(f"{name}: rel. error {e_ours:.3g} > bar {bar:.3g} (fp32 reference {e_ref:.3g}, z's "
                            f"rounding alone {f_norm:.3g}) {where}")
        m_ours, m_ref = elementwise[name]
        bar = max(8 * m_ref * TF32_ROUNDOFF_RATIO, TF32_REL_ERR) if tf32 else max(8 * m_ref, 2e-6, 8 * f_elem)
        if not m_ours <= bar:
            problems.append(f"{name}: element-wise error {m_ours:.3g} > bar {bar:.3g} (max |ours - fp64| / max |fp64|;"
                            f" fp32 reference {m_ref:.3g}) {where}")
    name, out, out32, truth, _ = tensors[0]
    exceptions, out_diff = 0, 0.0
    if out is not None and name in report and out.numel():
        out_diff = (out - out32).abs().max().item()
        close = torch.isclose(out, out32, atol=1e-4, rtol=1e-4)
        ours = (out.double() - truth).abs()
        # where rounding alone can put two fp32 computations farther apart than the tolerance (rows of large
        # magnitude, cancellation), allclose to one of them is luck: there ours must be as close to fp64 as the
        # reference, or within the bound on the GEMM's fp32 rounding carried to that element
        fair = (ours <= (out32.double() - truth).abs()) | (ours <= (0 if out_rounding is None else out_rounding))
        ok = close if strict_allclose else close | fair
        exceptions = int((~close & fair).sum())
        if not tf32 and not bool(ok.all()):
            problems.append(f"output not allclose(1e-4) to the fp32 reference: max diff {out_diff:.3g}, "
                            f"{int((~ok).sum())} elements where ours is farther from fp64 than the fp32 reference "
                            f"and than the GEMM's rounding allows there {where}")
    report.update(elementwise=elementwise, max_out_diff=out_diff, allclose_exceptions=exceptions)
    return report, problems


def compare(model_new_cls, reference_cls, spec, batch, seed, device="cuda", strict_allclose=False, dist="rand"):
    """ModelNew of the headline layer against the fp32 reference and fp64 on fresh random inputs from `dist`
    (random GroupNorm affine too). Returns (report, problems): report as _judge's plus "kink_flips" (elements
    each computation took on the other side of LeakyReLU's kink than fp64, within its rounding); problems lists
    what missed the bar, in words. Unless strict_allclose, an output element outside allclose of the fp32
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
    x = draw_input((batch, spec.input_size), dist, gen).to(device)
    grad = torch.randn(batch, spec.hidden_size, generator=gen).to(device)

    ours = run_layer(new, x, grad, torch.float32)
    fp32 = run_layer(ref, x, grad, torch.float32)

    # TF32 operands: pre-activations within TF32's (not fp32's) rounding of the kink are ambiguous
    scale = TF32_ROUNDOFF_RATIO if tf32 else 1.0
    truths = headline_truths(ref, x, grad, {"ours": ours[0], "fp32": fp32[0]},
                             lambda *layer: kink_tolerance(*layer) * scale)
    (truth_ours, flips_ours), (truth_fp32, flips_fp32) = truths["ours"], truths["fp32"]
    where = f"({spec}, batch {batch}, seed {seed}, {dist} input); kink flips taken: ours {flips_ours}, " \
            f"fp32 reference {flips_fp32}"
    from ..frontend import trace_model

    ref64 = copy.deepcopy(ref).double()
    chain, graph = trace_model(ref64)
    x64 = x.double()
    scale = rounding_scale(ref64, graph, (chain,), x64, seed)
    floors = z_rounding_floor(ref64, graph, (chain,), x64, grad, _run_graph(ref64, graph, {}, x64, grad)[0], seed)
    report, problems = _judge(list(zip(NAMES, ours, fp32, truth_ours, truth_fp32)), where, tf32, strict_allclose,
                              scale, floors)
    report["kink_flips"] = (flips_ours, flips_fp32)
    return report, problems


# --------------------------------------------------------------------------------------------------------------
# Any model file's layer: the fp64 truth is the file's own Model in float64, run through its traced graph so
# that kinked stages can be probed (their inputs recorded) and told which side of a kink to take in backward.
# --------------------------------------------------------------------------------------------------------------
MAX_KINK_CANDIDATES = 64  # ambiguous elements tried for ours, nearest the kink first


class _Probe(torch.fx.Interpreter):
    """Runs a traced model; records the input of every kinked stage (node name -> its kinks) and, at the elements
    `forced[name]` marks (kink index -> bool mask), takes the other side of that kink than the input's own in
    backward. Forward values are unchanged: the kinked ops are continuous."""

    def __init__(self, module, graph, kinked, forced=None, perturb=None):
        """perturb: node name -> function of that node's value and its first input's that replaces the value
        (a GEMM output's rounding, which depends on the GEMM's input)."""
        super().__init__(torch.fx.GraphModule(module, graph))
        self.kinked, self.forced, self.inputs, self.perturb = kinked, forced or {}, {}, perturb or {}

    def run_node(self, n):
        if not n.meta.get("grad_enabled", True):  # made under torch.no_grad(), which the graph does not record
            with torch.no_grad():
                return self._run_node(n)
        return self._run_node(n)

    def _run_node(self, n):
        if n.name in self.perturb:
            return self.perturb[n.name](super().run_node(n), self.env[n.args[0]])
        if n.name not in self.kinked:
            return super().run_node(n)
        args = [a for a in list(n.args) + list(n.kwargs.values()) if isinstance(a, torch.fx.Node)]
        p = self.env[next(a for a in args if a.op != "get_attr")]  # the chain's value (a bound may come first)
        self.inputs[n.name] = p.detach().clone()
        masks = self.forced.get(n.name)
        lever = p.clone() if masks else None  # taken before an in-place op overwrites p
        out = super().run_node(n)
        if masks:
            slope, forced = torch.zeros_like(out.detach()), torch.zeros_like(out.detach(), dtype=torch.bool)
            bound_terms = 0
            for (k, below, above), mask in zip(self.kinked[n.name], masks):
                if mask is None:
                    continue
                if isinstance(k, str):  # a parameter's value: it takes the slope x leaves (1 - x's)
                    bound = next(self.env[a] for a in args if a.op == "get_attr" and a.target == k)
                    at = torch.broadcast_to(bound, out.shape)
                    other = torch.where(self.inputs[n.name] > at.detach(), below, above).to(out.dtype)
                    bound_terms = bound_terms + torch.where(mask, 1 - other, 0) * (at - at.detach())
                else:
                    other = torch.where(self.inputs[n.name] > k, torch.full_like(slope, below),
                                        torch.full_like(slope, above))
                slope, forced = torch.where(mask, other, slope), forced | mask
            # the forced elements keep their value and get the other side's slopes (lever - lever.detach() is 0)
            out = torch.where(forced, out.detach() + slope * (lever - lever.detach()) + bound_terms, out)
        return out


def _times(value, factor):
    """A fixed dropout: the value times its factor in the value's own type (as torch's x * (mask * scale))."""
    return value * factor.to(value.dtype)


def _run_graph(module, graph, kinked, x, grad, forced=None, perturb=None):
    """(tensors, probed inputs): out, grad_x and every parameter's gradient of one forward+backward."""
    module.zero_grad(set_to_none=True)
    probe = _Probe(module, graph, kinked, forced, perturb)
    xin = x.detach().requires_grad_()
    out = probe.run(xin)
    out.backward(grad.to(out.dtype))
    tensors = [("out", out.detach()), ("grad_x", xin.grad)] + [
        (f"grad_{n}", None if p.grad is None else p.grad.clone()) for n, p in module.named_parameters()]
    return tensors, probe.inputs


def rounding_scale(m64, graph, chains, x64, seed, draws=3):
    """Per output element, how far fp32 rounding of the GEMMs alone can move it: the model run in float64 with
    each GEMM's output z perturbed by standard normal draws times a bound on an fp32 sum's error (u sqrt(K+1)
    ||terms||, the terms x_k W[n, k] and the bias, x the GEMM's own input; a factor 8 of margin), the largest move
    over `draws` draws. This carries the rounding through every later op (cancellation, GroupNorm's amplification
    of small variances; normal rather than sign draws, so that a narrow group's difference of two perturbations
    is rarely 0). m64, graph, chains: the reference in float64 and its trace (frontend.trace_layers)."""
    def bound(chain, xin):
        w = m64.get_parameter(chain.weight).detach()
        w = w.t() if chain.weight_in_out else w  # (out, in)
        sq = (xin * xin) @ (w * w).t()
        if chain.bias_name:
            b = m64.get_parameter(chain.bias_name).detach()
            sq = sq + b * b
        return 8 * U * (xin.shape[-1] + 1) ** 0.5 * sq.sqrt()

    gen = torch.Generator().manual_seed(seed)

    def moved_by_draws(chain):
        def move(z, xin):
            b = bound(chain, xin.detach())
            return z + torch.randn(b.shape, generator=gen, dtype=torch.float64).to(b.device) * b
        return move

    with torch.no_grad():
        base = _Probe(m64, graph, {}).run(x64)
        scale = torch.zeros_like(base)
        for _ in range(draws):
            moved = _Probe(m64, graph, {}, perturb={c.value_nodes[0]: moved_by_draws(c) for c in chains}).run(x64)
            scale = torch.maximum(scale, (moved - base).abs())
    return scale


def z_rounding_floor(m64, graph, chains, x64, grad, truth, seed, draws=2):
    """Per tensor, (normwise, element-wise) error that rounding each GEMM output z to fp32 alone causes: the fp64
    truth again with z moved by u|z| times standard normal draws (the largest over `draws`). Every fp32 layer
    rounds z once; where GroupNorm amplifies it (small variances) or a gradient cancels, no fp32 computation
    can be expected closer to fp64 than this."""
    gen = torch.Generator().manual_seed(seed)
    floors = {}
    for _ in range(draws):
        def round_z(z, xin):
            draw = torch.randn(z.shape, generator=gen, dtype=torch.float64).to(z.device)
            return z + U * z.detach().abs() * draw
        moved = _run_graph(m64, graph, {}, x64, grad, perturb={c.value_nodes[0]: round_z for c in chains})[0]
        for (name, a), (_, t) in zip(moved, truth):
            if a is not None and t is not None:
                old = floors.get(name, (0.0, 0.0))
                floors[name] = (max(old[0], rel_err(a, t)), max(old[1], max_err(a, t)))
    return floors


def _local_rms(t):
    """Per element, the larger RMS of its row and of its column: the scale of a value's rounding where
    statistics are per row (GroupNorm, a softmax) or per column (BatchNorm's rstd amplifies one channel's)."""
    rows = t.pow(2).mean(-1, keepdim=True).sqrt()
    return torch.maximum(rows, t.pow(2).mean(0, keepdim=True).sqrt()) if t.dim() > 1 else rows


def perturb_parameter(p, q, gen):
    """A parameter of one dimension (biases, GroupNorm affine, per-channel scales) moved from its initial value,
    the same in the reference (p) and in ours (q), so that its gradient is exercised away from it; others kept."""
    if p.dim() == 1:
        scale = 0.75 + 0.5 * torch.rand(p.shape, generator=gen)
        shift = 0.1 * torch.randn(p.shape, generator=gen)
        p.copy_(p.cpu() * scale + shift)
        q.copy_(p)


def _sq_error(tensors, truth) -> float:
    """Sum over tensors of the squared normwise error, each capped at 1: what a choice of kink sides is scored by.
    (A gradient whose truth cancels to rounding noise, as a Linear's bias before a BatchNorm, has relative errors
    of 1e8 that move at random with the truth's noise: uncapped, it would choose the sides.)"""
    return sum(min(rel_err(a, t), 1.0) ** 2 for (_, a), (_, t) in zip(tensors, truth) if a is not None and
               t is not None and a.shape == t.shape and bool(torch.isfinite(a).all()))


def compare_models(model_new_cls, reference_cls, init_args, input_shape, seed, device="cuda", dist="uniform",
                   x=None, setup=None, fixed=None):
    """Any generated ModelNew against its model file's Model: the output and the gradients of the input and of
    every parameter, each against an fp64 run of the reference (same weights) beside the fp32 reference's own
    error. Parameters of one dimension (biases, GroupNorm affine, per-channel scales) are perturbed first, the
    same way in both models, so that their gradients are exercised away from their initial values. The input
    is drawn from `dist` (see DISTRIBUTIONS) unless `x` is given. setup(ref, new), when given, runs after that:
    e.g. loads trained buffers into both and switches them to eval (the fp64 run copies the state and the mode).
    fixed, for layers that draw random numbers (dropout): called after ModelNew's forward, {traced node name:
    factor}, each such node replaced in every reference run by its input times the factor (the mask ours drew
    over 1 - p), so that the references drop what ours dropped.

    Kinks: an element whose fp64 input to a kinked stage lies within 8x the fp32 reference's rounding there
    (the RMS of |p32 - p64| over its row or its column, the larger, plus 8 ulps of that RMS of p64) may sit on
    either side. The fp32
    reference's truth takes the side its own fp32 input took; ours takes, element by element (the nearest first,
    at most MAX_KINK_CANDIDATES), the side whose fp64 gradients are closer to ours, and only when ours misses the
    bar against fp64's own sides. Returns (report, problems) as compare (report["kink_flips"]: the elements each
    computation took on the other side, of report["kink_candidates"] within the tolerance).
    """
    from ..frontend import trace_layers  # the front end reads which stages are kinked and where they are

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
            perturb_parameter(p, q, gen)
    if setup is not None:
        setup(ref, new)
    x = (draw_input(input_shape, dist, gen) if x is None else x).to(device)
    ref64 = reference_cls(*init_args)
    ref64.load_state_dict(ref.state_dict())
    ref64 = ref64.to(device).double().train(ref.training)
    with torch.no_grad():
        out_shape = ref(x).shape
    grad = torch.randn(*out_shape, generator=gen).to(device)

    new.zero_grad(set_to_none=True)  # ModelNew runs as a user runs it: its own forward, autograd through our kernels
    xin = x.detach().requires_grad_()
    out = new(xin)
    out.backward(grad)
    ours = [("out", out.detach()), ("grad_x", xin.grad)] + [(f"grad_{n}", p.grad) for n, p in new.named_parameters()]

    chains, graph = trace_layers(ref64)  # (a model of several Linears: every layer's kinks and GEMM)
    if fixed is not None:
        factors = fixed()
        for n in graph.nodes:
            if n.name in factors:
                n.op, n.target, n.args, n.kwargs = "call_function", _times, (n.args[0], factors.pop(n.name)), {}
        if factors:
            return {}, [f"no traced node {sorted(factors)} to fix the mask of"]
    kinked = {node: s.kinks for chain in chains for node, s in zip(chain.value_nodes[1:], chain.stages) if s.kinks}
    fp32, p32 = _run_graph(ref, graph, kinked, x, grad)
    truth, p64 = _run_graph(ref64, graph, kinked, x.double(), grad)

    # the elements within rounding of a kink, and the side the fp32 reference took there
    candidates, ref_forced, n_candidates = [], {}, 0
    for node, kinks in kinked.items():
        a, b = p64[node], p32[node].double()
        tol = 8 * (_local_rms(b - a) + 8 * U * _local_rms(a))
        masks = []
        for i, (k, _, _) in enumerate(kinks):
            if isinstance(k, str):  # a parameter's value, the same in both references
                k = torch.broadcast_to(ref64.get_parameter(k).detach(), a.shape)
            near = ((a - k).abs() <= tol) & (a != k)  # an exact tie is no rounding: torch's side is the truth
            flipped = near & ((b > k) != (a > k))
            masks.append(flipped if bool(flipped.any()) else None)
            where_near = near.nonzero()
            gap = (a - k)[near].abs()
            n_candidates += len(gap)
            for j in gap.argsort()[:MAX_KINK_CANDIDATES].tolist():  # the nearest of this kink
                candidates.append((gap[j].item(), node, i, tuple(where_near[j].tolist())))
        if any(m is not None for m in masks):
            ref_forced[node] = masks
    truth_fp32 = _run_graph(ref64, graph, kinked, x.double(), grad, ref_forced)[0] if ref_forced else truth
    flips_fp32 = sum(int(m.sum()) for ms in ref_forced.values() for m in ms if m is not None)

    where = f"(batch {input_shape[0]}, seed {seed}, {dist} input)"
    rows = lambda t_ours: [(n, a, r, t, t32) for (n, a), (_, r), (_, t), (_, t32)  # noqa: E731
                           in zip(ours, fp32, t_ours, truth_fp32)]
    scale = rounding_scale(ref64, graph, chains, x.double(), seed)
    floors = z_rounding_floor(ref64, graph, chains, x.double(), grad, truth, seed)
    report, problems = _judge(rows(truth), where, out_rounding=scale, floors=floors)
    truth_ours, forced, flips_ours = truth, {}, 0
    if problems and candidates:  # which sides explain ours best, one ambiguous element at a time
        best = _sq_error(ours, truth)
        for _, node, i, e in sorted(candidates)[:MAX_KINK_CANDIDATES]:
            trial = {n: list(ms) for n, ms in forced.items()}
            masks = trial.setdefault(node, [None] * len(kinked[node]))
            mask = torch.zeros_like(p64[node], dtype=torch.bool) if masks[i] is None else masks[i].clone()
            mask[e] = True
            masks[i] = mask
            t = _run_graph(ref64, graph, kinked, x.double(), grad, trial)[0]
            score = _sq_error(ours, t)
            if score < best:
                best, forced, truth_ours, flips_ours = score, trial, t, flips_ours + 1
        if flips_ours:
            report, problems = _judge(rows(truth_ours), where, out_rounding=scale, floors=floors)
    if problems:
        problems[-1] += f"; kink flips taken: ours {flips_ours}, fp32 reference {flips_fp32} of {n_candidates}"
    report["kink_flips"] = (flips_ours, flips_fp32)
    report["kink_candidates"] = n_candidates
    return report, problems
