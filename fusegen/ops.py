"""The op registry: every op that can follow the GEMM, declared once. The front end, the planner, the renderer and
the accuracy bar read it instead of keeping tables of their own. An op's device code is its template:
- element-wise: `templates/ops/stage_<kind>.cuh.j2`, a struct with `fwd` and `bwd`;
- a reduction over the row: `templates/ops/reduce_<kind>.cuh.j2`, a struct with the reduction's state (`init`,
  `add`, `merge`), what the forward keeps per row (`finish`), its forward (`apply`, or `value` for a reduction
  to one value a row) and backward (`bwd`, with `bwd_add`: the row sums its backward needs);
- a reduction over the batch (a column of the output): `templates/ops/column_<kind>.cuh.j2`, a struct with what
  a column keeps (`Col`), the forward (`fwd`) and backward (`bwd`, with `bwd_add`: the column sums it needs);
- the GroupNorm: its fused epilogues per strategy and its backward kernel (templates/epilogue); beside row
  reductions, one of the row kernels' reductions: `templates/ops/reduce_group_norm.cuh.j2` (per group: forward,
  `bwd_add` for the group sums its backward needs, `bwd`).

Adding an element-wise op: one entry here, one template, and its spellings in the front end's reader. Adding a row
reduction: one entry, one reduce_ template, its spellings.
"""
import dataclasses

ELEMENTWISE = "element-wise"
GROUP = "group"  # a reduction over a group of channels of a row (GroupNorm)
ROW = "row"  # a reduction over the whole row (the hidden features): softmax, logsumexp, sum, max...
COLUMN = "column"  # a reduction over the batch, one per channel (BatchNorm1d)

# The shape of a chain value: the (batch, hidden) tensor, or one value a row ((batch, 1) or (batch,)).
FULL, ROW_VALUE = "full", "row"
# Row reductions to one value, torch's words for them.
REDUCTIONS = ("sum", "mean", "max", "min", "amax", "amin", "logsumexp")

_SIGNS = {"mul": "*", "div": "/", "add": "+", "sub": "-"}


@dataclasses.dataclass(frozen=True)
class Op:
    kind: str  # the Stage kind
    title: str  # its words in plans, module titles and explanations
    short: str  # its piece of a module's readable name
    spellings: str  # how the front end recognizes it (messages, the README table)
    reduces: str = ELEMENTWISE  # ELEMENTWISE, or what it reduces over (GROUP, ROW)
    takes: str = "any"  # the shape of value it reads: FULL, ROW_VALUE or "any" (element-wise ops: either)
    makes: str = "same"  # the shape of value it makes: FULL, ROW_VALUE or "same" (as it reads)
    scalars: tuple = ()  # the Stage params it reads at run time (kernel arguments: one build serves any value)
    # values read from the layer's module at each call rather than fixed at trace time: name -> Python of its
    # value, `{m}` standing for the module (BatchNorm: train or eval, its momentum for the running statistics)
    live: tuple = ()
    buffers: tuple = ()  # the Stage params naming buffers its kernels update (BatchNorm's running statistics)
    choices: tuple = ()  # the Stage params baked into its template (they change the emitted CUDA)
    kinks: object = None  # Stage -> ((position, slope below, slope above), ...): where its derivative jumps
    describe: object = None  # Stage -> its title with the constants that matter (default: `title`)
    # Element types (fusegen/dtypes.py): what its arithmetic runs in, whatever the tensors' element type (the
    # epilogue is fp32 throughout), and what a reduction's state and statistics accumulate in.
    compute: str = "float32"
    accumulate: str = ""  # reductions: their state's type

    def title_of(self, stage) -> str:
        return self.describe(stage) if self.describe else self.title

    def live_expr(self, name, module_expr):
        """Python reading scalar `name` from the module at call time, or None (fixed at trace time)."""
        return dict(self.live)[name].format(m=module_expr) if name in dict(self.live) else None

    def kinks_of(self, stage) -> tuple:
        return self.kinks(stage) if self.kinks else ()


def _bounds(lo, hi):
    """The kinks of a clamp to [lo, hi] (either bound may be None)."""
    return tuple(k for k in ((lo, 0.0, 1.0) if lo is not None else None,
                             (hi, 1.0, 0.0) if hi is not None else None) if k)


def _reduce_title(s):
    keep = ", keepdim" if s.param("keepdim") else ""
    return f"{s.param('how')}(dim=1{keep})"


_COMBINE = {"add": "x + r", "sub": "x - r", "rsub": "r - x", "mul": "x * r", "div": "x / r", "rdiv": "r / x"}


def _scalar_title(s):
    how, c = s.param("op"), s.param("value")
    return f"{c!r} - x" if how == "rsub" else f"x {_SIGNS[how]} {c!r}"


OPS = {op.kind: op for op in (
    Op("group_norm", "GroupNorm", "gn", "nn.GroupNorm, F.group_norm (at most one, over the Linear's out features)",
       reduces=GROUP, accumulate="float64", takes=FULL, makes=FULL, choices=("affine", "eps")),
    Op("leaky_relu", "LeakyReLU", "lrelu", "nn.LeakyReLU, F.leaky_relu", scalars=("negative_slope",),
       kinks=lambda s: ((0.0, s.param("negative_slope"), 1.0),)),
    Op("relu", "ReLU", "relu", "nn.ReLU, F.relu, torch.relu, x.relu()", kinks=lambda s: ((0.0, 0.0, 1.0),)),
    Op("gelu", "GELU", "gelu", "nn.GELU, F.gelu (approximate 'none' or 'tanh')", choices=("approximate",),
       describe=lambda s: "GELU (tanh)" if s.param("approximate") == "tanh" else "GELU"),
    Op("silu", "SiLU", "silu", "nn.SiLU, F.silu, x * torch.sigmoid(x)"),
    Op("sigmoid", "Sigmoid", "sigm", "nn.Sigmoid, torch.sigmoid, F.sigmoid, x.sigmoid()"),
    Op("tanh", "Tanh", "tanh", "nn.Tanh, torch.tanh, x.tanh()"),
    Op("mish", "Mish", "mish", "nn.Mish, F.mish"),
    Op("hardtanh", "Hardtanh", "htanh", "nn.Hardtanh, nn.ReLU6, F.hardtanh, F.relu6", scalars=("min_val", "max_val"),
       kinks=lambda s: _bounds(s.param("min_val"), s.param("max_val"))),
    Op("clamp", "clamp", "clamp",
       "torch.clamp, torch.clip, x.clamp(), x.clamp_min(), x.clamp_max() (constant bounds)", scalars=("min", "max"),
       kinks=lambda s: _bounds(s.param("min"), s.param("max"))),
    Op("add_self", "x + x", "x2", "x + x, torch.add(x, x), x.add(x)"),
    Op("scalar", "scalar", "s",
       "x * c, x / c, x + c, x - c, c - x, -x, torch.mul/div/add/sub, x.mul()/div()/add()/sub() (a constant c)",
       scalars=("value",), choices=("op",), describe=_scalar_title),
    Op("channel", "per-channel", "c", "x * p, x / p, x + p, x - p (p an nn.Parameter of shape (hidden,) or (1, hidden))",
       takes=FULL, choices=("op",), describe=lambda s: f"x {_SIGNS[s.param('op')]} {s.param('param')}"),
    Op("residual", "residual add", "res", "x + y (y an earlier value of the chain, e.g. the Linear's output)",
       takes=FULL),
    Op("softmax", "softmax", "smax", "nn.Softmax(dim=1), F.softmax, torch.softmax, x.softmax() (over the features)",
       reduces=ROW, accumulate="float64", takes=FULL, makes=FULL),
    Op("log_softmax", "log_softmax", "lsmax",
       "nn.LogSoftmax(dim=1), F.log_softmax, torch.log_softmax, x.log_softmax() (over the features)",
       reduces=ROW, accumulate="float64", takes=FULL, makes=FULL),
    Op("row_reduce", "row reduction", "rred",
       "x.sum/mean/amax/amin/logsumexp(dim=1), torch.sum/mean/amax/amin/logsumexp, x.max/min(dim=1) (.values or "
       "[0]), keepdim or not (over the features; again over the size-1 dim: an identity)",
       reduces=ROW, accumulate="float64", takes=FULL, makes=ROW_VALUE, choices=("how",), describe=_reduce_title),
    Op("batch_norm", "BatchNorm1d", "bn",
       "nn.BatchNorm1d over the Linear's out features (training: batch statistics and running statistics updated, "
       "momentum or None; eval: the running statistics; affine and track_running_stats on or off)",
       reduces=COLUMN, accumulate="float64", takes=FULL, makes=FULL, scalars=("batch_stats",), choices=("affine",),
       live=(("momentum", "(-1.0 if {m}.momentum is None else float({m}.momentum))"),
             # torch's rule: batch statistics in training, or in eval without running statistics
             ("batch_stats", "float({m}.training or {m}.running_mean is None)")),
       buffers=("running_mean", "running_var", "num_batches_tracked"),
       describe=lambda s: "BatchNorm1d" + ("" if s.param("affine") else " (no affine)")),
    Op("row_combine", "row value against the tensor", "rcomb",
       "x - r, x + r, x * r, x / r, r - x, r / x (r a (batch, 1) row reduction of x or of an earlier value)",
       takes=ROW_VALUE, makes=FULL, choices=("op",), describe=lambda s: _COMBINE[s.param("op")]),
)}


def op(kind: str) -> Op:
    """The registered op of a stage kind."""
    try:
        return OPS[kind]
    except KeyError:
        raise KeyError(f"no op {kind!r} in the registry (fusegen/ops.py); known: {', '.join(OPS)}") from None


def chain_title(chain) -> str:
    """A layer in words: "Linear -> GroupNorm -> LeakyReLU -> x + x"."""
    return " -> ".join(["Linear"] + [op(s.kind).title_of(s) for s in chain])
