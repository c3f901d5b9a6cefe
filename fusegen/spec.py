"""What the user asks for: a Linear followed by a chain of stages, of given sizes. The short form is the
headline layer Linear -> GroupNorm -> LeakyReLU -> x + x (`stages` empty); `fusegen from-model` fills `stages`
and `interface` from a model file."""
import dataclasses
import math

from .dtypes import AUTOCAST_TYPES, ELEMENTS, FLOAT32, dtype as element_type
from .ops import COLUMN, FULL, ROW, WINDOW, op
from .ops.pool import pooled_width


# How the GEMMs multiply (see the README's precision table):
TF32X3 = "3xtf32"  # tensor cores, each fp32 operand split into two TF32 parts, 3 products: fp32-accurate
TF32 = "tf32"  # tensor cores, operands rounded to TF32: fastest, ~3e-4 relative error (fails allclose 1e-4)
FP32 = "fp32"  # plain fp32 FFMA: any GPU
PRECISIONS = (TF32X3, TF32, FP32)


@dataclasses.dataclass(frozen=True)
class Stage:
    """One element-wise stage (or the GroupNorm) after the Linear, as the front end read it from a model."""
    kind: str  # a key of fusegen.ops.OPS
    params: tuple = ()  # (name, value) pairs read from the traced module or call
    where: str = dataclasses.field(default="", compare=False, repr=False)  # file:line in the model file

    def param(self, name, default=None):
        return dict(self.params).get(name, default)

    @property
    def kinks(self) -> tuple:
        """Where this stage's derivative jumps: (position, slope below, slope above) each. An fp32 computation
        whose input lies within its rounding of a kink may take either side; the accuracy bar allows both."""
        return op(self.kind).kinks_of(self)


@dataclasses.dataclass(frozen=True)
class ModelInterface:
    """How a from-model ModelNew presents itself: the model file's constructor kept as written (same signature,
    same parameters created in the same order) and where the kernels' tensors live in it."""
    init_source: str  # `def __init__(...)` and its body, dedented, with super(Model, ...) renamed
    init_args: tuple  # (name, repr of the value) the model was traced with; ModelNew checks it gets the same
    imports: tuple  # import lines for the module-level names the constructor uses (torch, nn, F, math)
    weight: str  # qualified name of the Linear's weight
    bias: object  # qualified name of the Linear's bias, or None
    weight_in_out: bool  # the weight is stored (in, out) (x @ w) rather than nn.Linear's (out, in)
    source: str  # the model file's name, for the docstring


HEADLINE_KINDS = ("group_norm", "leaky_relu", "add_self")


class SpecError(ValueError):
    """A spec that no module can be generated for; the message says what was expected."""


@dataclasses.dataclass(frozen=True)
class Spec:
    input_size: int
    hidden_size: int
    num_groups: int
    eps: float = 1e-5
    negative_slope: float = 0.01
    precision: str = TF32X3
    # The chain after the Linear; empty: the headline chain GroupNorm(num_groups, eps) -> LeakyReLU(negative_slope)
    # -> x + x. A chain without GroupNorm has num_groups 1 (eps and negative_slope are then unused).
    stages: tuple = ()
    bias: bool = True  # the Linear adds its bias
    interface: object = None  # ModelInterface of a from-model layer; None: the headline module's constructor
    # What the tensors hold in memory (input, parameters, output, gradients; fusegen/dtypes.py ELEMENTS). The
    # epilogue computes in fp32 and its statistics in fp64 whatever it is; `precision` says how fp32 operands
    # multiply, so a bfloat16 or float16 spec leaves it at the default (its operands go to the tensor cores as
    # they are). (Out of the repr, which names and hashes modules: float32 modules keep their names.)
    dtype: str = dataclasses.field(default=FLOAT32.name, repr=False)
    # The layer as it runs under torch.autocast("cuda", dtype=<this>) ("": without autocast): float32 tensors, the
    # Linear on 16-bit operands of this type, each later op in the type autocast gives it (the ops' `autocast`).
    autocast: str = dataclasses.field(default="", repr=False)
    # Rewrites that removed stages, in words (the front end's identities, plan/algebra.py's folds): the plan and
    # the module's explanation name them. (Out of the repr and comparisons: the chain says what runs.)
    folds: tuple = dataclasses.field(default=(), repr=False, compare=False)

    @property
    def operand(self) -> str:
        """The element type the GEMMs multiply: the tensors' own, or autocast's for the Linear."""
        return self.autocast or self.dtype

    @property
    def arithmetic(self) -> str:
        """How the GEMM multiplies: `precision` for float32 operands, else their 16-bit type ("bf16", "f16"). The
        tuning table's key."""
        return element_type(self.operand).short or self.precision

    def __post_init__(self):
        for field in ("hidden_size", "num_groups", "input_size"):  # hidden first: --input defaults to it
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int):
                raise SpecError(f"{field} must be an int, got {value!r} ({type(value).__name__})")
            if value <= 0:
                raise SpecError(f"{field} must be a positive int, got {value}")
        pools = [i for i, s in enumerate(self.stages) if op(s.kind).reduces == WINDOW]
        if pools and pools != [0]:
            raise SpecError(f"stage {pools[-1]} ({op(self.stages[pools[-1]].kind).title}): a pool over the features "
                            "is generated right after the Linear, once; after other stages it is not yet")
        if pools and self.features < 1:
            raise SpecError(f"{op(self.stages[0].kind).title_of(self.stages[0])} makes no window of "
                            f"{self.hidden_size} features")
        if self.features % self.num_groups:
            raise SpecError(
                f"hidden_size ({self.features}) must be divisible by num_groups ({self.num_groups}); "
                f"divisors near it: {_near_divisors(self.features, self.num_groups)}")
        for field in ("eps", "negative_slope"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise SpecError(f"{field} must be a finite number, got {value!r}")
        if self.precision not in PRECISIONS:
            raise SpecError(f"precision must be one of {', '.join(PRECISIONS)}, got {self.precision!r}")
        if self.dtype not in ELEMENTS:
            raise SpecError(f"dtype must be one of {', '.join(ELEMENTS)}, got {self.dtype!r}")
        if self.dtype != FLOAT32.name and self.precision != TF32X3:
            raise SpecError(f"precision ({self.precision}) chooses how float32 operands multiply; a {self.dtype} "
                            "layer's operands go to the tensor cores as they are: leave it out")
        if self.autocast:
            if self.autocast not in AUTOCAST_TYPES:
                raise SpecError(f"autocast must be one of {', '.join(AUTOCAST_TYPES)}, got {self.autocast!r}")
            if self.dtype != FLOAT32.name:
                raise SpecError(f"autocast runs float32 layers on {self.autocast} operands; a {self.dtype} layer "
                                "has no autocast: leave --autocast out")
            if self.precision != TF32X3:
                raise SpecError(f"precision ({self.precision}) chooses how float32 operands multiply; under autocast "
                                f"the Linear multiplies {self.autocast} ones: leave it out")
            for i, st in enumerate(self.chain):
                if not op(st.kind).autocast:
                    raise SpecError(f"stage {i} ({op(st.kind).title_of(st)}): what autocast makes of it is not "
                                    "modelled yet; render the layer without --autocast")
        if self.eps <= 0:
            raise SpecError(f"eps must be positive, got {self.eps}")
        if self.stages:
            norms = [s for s in self.stages if s.kind == "group_norm"]
            if len(norms) > 1:
                raise SpecError(f"a chain holds at most one GroupNorm, got {len(norms)}")
            columns = [s for s in self.stages if op(s.kind).reduces == COLUMN]
            if len(columns) > 1:
                raise SpecError(f"a chain holds at most one BatchNorm, got {len(columns)}")
            groups = norms[0].param("num_groups") if norms else 1
            if self.num_groups != groups:
                raise SpecError(f"num_groups ({self.num_groups}) must be the chain's GroupNorm groups ({groups}), "
                                "or 1 without GroupNorm")
            self.value_shapes  # raises on a stage that gets the wrong shape of value

    @property
    def value_shapes(self) -> tuple:
        """The shape of each chain value (0: the Linear's output): FULL (batch, hidden) or ROW_VALUE."""
        shapes = [FULL]
        for i, s in enumerate(self.chain):
            o = op(s.kind)
            if o.takes not in ("any", shapes[-1]):
                raise SpecError(f"stage {i} ({o.title_of(s)}) reads a {o.takes} value, got a {shapes[-1]} one")
            if s.kind in ("residual", "row_combine") and not (0 <= s.param("src") <= i and
                                                            shapes[s.param("src")] == FULL):
                raise SpecError(f"stage {i} ({o.title_of(s)}) reads chain value {s.param('src')}: it must be an "
                                "earlier (batch, hidden) value")
            if s.kind in ("residual", "row_combine") and s.param("src") == 0 and self.feature_pool:
                raise SpecError(f"stage {i} ({o.title_of(s)}) reads the Linear's output from before the "
                                f"{op(self.stages[0].kind).title} (a residual across the pool): not generated")
            shapes.append(shapes[-1] if o.makes == "same" else o.makes)
        return tuple(shapes)

    @property
    def out_shape(self) -> str:
        """The layer's output: "full" (batch, hidden), "keepdim" (batch, 1) or "flat" (batch,)."""
        if self.value_shapes[-1] == FULL:
            return "full"
        last = [s for s in self.chain if s.kind == "row_reduce"][-1]
        return "keepdim" if last.param("keepdim") else "flat"

    @property
    def has_row_reduction(self) -> bool:
        return any(op(s.kind).reduces == ROW for s in self.chain)

    @property
    def column_norm(self) -> int:
        """The BatchNorm's stage index, -1: none."""
        return next((i for i, s in enumerate(self.chain) if op(s.kind).reduces == COLUMN), -1)

    @property
    def chain(self) -> tuple:
        """The stages after the Linear (the headline chain spelled out when `stages` is empty)."""
        if self.stages:
            return self.stages
        return (Stage("group_norm", (("num_groups", self.num_groups), ("eps", self.eps), ("affine", True),
                                     ("weight", "gn.weight"), ("bias", "gn.bias"))),
                Stage("leaky_relu", (("negative_slope", self.negative_slope),)), Stage("add_self"))

    @property
    def has_group_norm(self) -> bool:
        return any(s.kind == "group_norm" for s in self.chain)

    @property
    def group_width(self) -> int:
        """Channels in one group."""
        return self.features // self.num_groups

    @property
    def features(self) -> int:
        """The chain's width after the Linear: hidden_size, or what a pool right after it leaves of it."""
        if self.stages and op(self.stages[0].kind).reduces == WINDOW:
            p = dict(self.stages[0].params)
            return pooled_width(self.hidden_size, p["kernel_size"], p["stride"], p["padding"], p["ceil_mode"],
                                p.get("dilation", 1))
        return self.hidden_size

    @property
    def feature_pool(self) -> bool:
        """The chain starts with a pool over the features (the GEMM keeps hidden_size, the rest `features`; an
        average pool the planner runs on the weight leaves the chain first: plan/weight_pool.py)."""
        return bool(self.stages) and op(self.stages[0].kind).reduces == WINDOW


def _near_divisors(n, k):
    divisors = sorted({d for i in range(1, math.isqrt(n) + 1) if n % i == 0 for d in (i, n // i)},
                      key=lambda d: (abs(d - k), d))
    return sorted(divisors[:4])
