"""The element-wise ops (templates/ops/stage_<kind>.cuh.j2, a struct with `fwd` and `bwd`), in registry order."""
from .op import FULL, PROMOTES, SAME, Op

_SIGNS = {"mul": "*", "div": "/", "add": "+", "sub": "-"}


def _bounds(lo, hi):
    """The kinks of a clamp to [lo, hi] (either bound may be None)."""
    return tuple(k for k in ((lo, 0.0, 1.0) if lo is not None else None,
                             (hi, 1.0, 0.0) if hi is not None else None) if k)


# The per-channel stage's operations: x against its parameter p, in words ("pfmax": torch.fmax(p, x), whose ties go
# to p; the symmetric maximum / minimum split a tie's gradient between the two, as torch does).
_CHANNEL = {"mul": "x * {p}", "div": "x / {p}", "add": "x + {p}", "sub": "x - {p}", "maximum": "maximum(x, {p})",
            "minimum": "minimum(x, {p})", "fmax": "fmax(x, {p})", "fmin": "fmin(x, {p})", "pfmax": "fmax({p}, x)",
            "pfmin": "fmin({p}, x)", "clamp_min": "clamp(x, min={p})", "clamp_max": "clamp(x, max={p})"}
CHANNEL_OPS = tuple(_CHANNEL)
# x's slope below and above p where the op takes x on one side of p and p on the other (p's slope is 1 minus it)
_CHANNEL_KINKS = {"maximum": (0.0, 1.0), "fmax": (0.0, 1.0), "pfmax": (0.0, 1.0), "clamp_min": (0.0, 1.0),
                  "minimum": (1.0, 0.0), "fmin": (1.0, 0.0), "pfmin": (1.0, 0.0), "clamp_max": (1.0, 0.0)}


def _channel_kinks(s):
    """A min / max against the parameter: a kink at the parameter's value, named by the parameter."""
    slopes = _CHANNEL_KINKS.get(s.param("op"))
    return ((s.param("param"),) + slopes,) if slopes else ()


def _scalar_title(s):
    how, c = s.param("op"), s.param("value")
    return f"{c!r} - x" if how == "rsub" else f"x {_SIGNS[how]} {c!r}"


ELEMENTWISE_OPS = (
    Op("identity", "no stage", "id", "a Linear with nothing after it (an MLP's last Linear, say)", autocast=SAME),
    Op("leaky_relu", "LeakyReLU", "lrelu", "nn.LeakyReLU, F.leaky_relu", scalars=("negative_slope",),
       kinks=lambda s: ((0.0, s.param("negative_slope"), 1.0),), autocast=SAME),
    Op("relu", "ReLU", "relu", "nn.ReLU, F.relu, torch.relu, x.relu()", kinks=lambda s: ((0.0, 0.0, 1.0),),
       autocast=SAME),
    Op("gelu", "GELU", "gelu", "nn.GELU, F.gelu (approximate 'none' or 'tanh')", choices=("approximate",),
       describe=lambda s: "GELU (tanh)" if s.param("approximate") == "tanh" else "GELU", autocast=SAME),
    Op("silu", "SiLU", "silu", "nn.SiLU, F.silu, x * torch.sigmoid(x)", autocast=SAME),
    Op("sigmoid", "Sigmoid", "sigm", "nn.Sigmoid, torch.sigmoid, F.sigmoid, x.sigmoid()", autocast=SAME),
    Op("tanh", "Tanh", "tanh", "nn.Tanh, torch.tanh, x.tanh()", autocast=SAME),
    Op("mish", "Mish", "mish", "nn.Mish, F.mish", autocast=SAME),
    Op("hardtanh", "Hardtanh", "htanh", "nn.Hardtanh, nn.ReLU6, F.hardtanh, F.relu6", scalars=("min_val", "max_val"),
       kinks=lambda s: _bounds(s.param("min_val"), s.param("max_val")), autocast=SAME),
    Op("clamp", "clamp", "clamp",
       "torch.clamp, torch.clip, x.clamp(), x.clamp_min(), x.clamp_max() (constant bounds)", scalars=("min", "max"),
       kinks=lambda s: _bounds(s.param("min"), s.param("max")), autocast=SAME),
    Op("add_self", "x + x", "x2", "x + x, torch.add(x, x), x.add(x)", autocast=SAME),
    Op("scalar", "scalar", "s",
       "x * c, x / c, x + c, x - c, c - x, -x, torch.mul/div/add/sub, x.mul()/div()/add()/sub() (a constant c)",
       scalars=("value",), choices=("op",), describe=_scalar_title, autocast=SAME),
    Op("channel", "per-channel", "c",
       "x * p, x / p, x + p, x - p, torch.maximum / minimum / fmax / fmin / max / min(x, p), torch.clamp(x, min=p) "
       "or (max=p), x.clamp_min(p), x.clamp_max(p) (p an nn.Parameter of shape (hidden,) or (1, hidden), or a "
       "scalar one: shape (), (1,) or (1, 1))",
       takes=FULL, choices=("op", "scalar"), describe=lambda s: _CHANNEL[s.param("op")].format(p=s.param("param")),
       kinks=_channel_kinks, autocast=PROMOTES),
    Op("residual", "residual add", "res",
       "x + y (y an earlier value of the chain, e.g. the Linear's output; also detached: y = h.detach(), "
       "h.clone().detach(), h.clone() under torch.no_grad(), whose gradient stops there)",
       takes=FULL, choices=("detached",), autocast=SAME,
       describe=lambda s: "residual add of a detached value" if s.param("detached") else "residual add"),
    # The layer's own input x added to a (batch, hidden) value (in == hidden: torch's broadcast is element-wise
    # then). Its gradient goes to x beside the GEMM's (dx = dz W + g), unless detached. Under autocast x stays
    # float32 (autocast casts only the Linear's operands), so a 16-bit v + x promotes: the sum is float32.
    Op("input_residual", "residual add of the layer's input", "xres",
       "v + x, torch.add(v, x), x + v (x the layer's input, in features == out features; also x.detach(), "
       "x.clone().detach(): no gradient to x through it)",
       takes=FULL, choices=("detached",), autocast=PROMOTES,
       describe=lambda s: "+ x (detached)" if s.param("detached") else "+ x"),
    # p as traced while the module it follows trains, 0 in eval (the identity), read at each call; "module" names
    # that module (an nn.Dropout; "": the Model itself, as F.dropout(x, p, self.training)), None: it always drops
    # (F.dropout's default training=True). The mask is fusegen's own (Philox), not torch's bits.
    Op("dropout", "Dropout", "drop",
       "nn.Dropout, F.dropout, torch.dropout (0 <= p < 1; in training a mask from fusegen's own Philox stream, "
       "seeded from torch's generator: torch.manual_seed repeats it, torch's own bits it cannot; in eval the identity)",
       scalars=("p",), live=(("p", "({p} if {m}.training else 0.0)"),), random=True, autocast=SAME,
       describe=lambda s: f"Dropout(p={s.param('p')!r})"),
)
