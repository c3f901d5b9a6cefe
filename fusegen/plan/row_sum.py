"""The row-sum rewrite (algebra that removes work): a chain that sums or averages each row right after the GEMM,
through stages affine per channel, is a GEMV.

    v_ij = alpha_j * (x_i . W_j) + beta_j          (the Linear's output through the head stages: scalar and
                                                    per-channel multiplies, divides, adds, x + x)
    sum_j v_ij = x_i . w_eff + b_eff,   w_eff = sum_j alpha_j W_j,   b_eff = sum_j beta_j

w_eff (one pass over W) depends on the parameters only: the module caches it by their version counters, so a call
with unchanged weights reads x once instead of running the GEMM. Everything sums in double (w_eff, b_eff, each
row's dot product), so the value is nearer fp64 than the reference's fp32 GEMM and fp32 sum. The chain after the
reduction (the tail: element-wise ops on the row value) runs on it as the row kernels run it.

Backward: with gz the row value's gradient, dx_i = gz_i w_eff, dW_j = alpha_j (x^T gz) (dense, as the
reference's), and each head parameter's gradient from d/dalpha_j = W_j . (x^T gz) and d/dbeta_j = sum_i gz_i
through the head in reverse (templates/row_sum/kernels.cu.j2)."""
import dataclasses
import hashlib

from ..dtypes import FLOAT32, DType, dtype
from ..ops import op
from ..spec import Spec
from .epilogue import plan_chain

# Head stages: affine in their input per channel (their constants and per-channel parameters read at run time).
HEAD_KINDS = ("identity", "scalar", "add_self", "channel")
HEAD_CHANNEL_OPS = ("mul", "div", "add", "sub")
REDUCTIONS = ("sum", "mean")
# Tail stages: element-wise on the row value, no parameters (a per-channel parameter against a row value is a
# (batch, hidden) tensor again), no random ones (the general plan's kernels take the seed).
TAIL_EXCLUDED = ("channel", "residual", "row_combine", "identity")


def find_row_sum(spec: Spec):
    """The chain's reduction index if `spec` fits the rewrite, else None: a layer without autocast (its tensors
    of any element type: the sums are double whatever they hold), a row sum or mean whose head is affine per
    channel (each parameter once; per-channel or scalar ones) and whose tail is element-wise on its row value."""
    if spec.autocast or not spec.stages:
        return None
    chain = spec.chain
    at = next((i for i, s in enumerate(chain) if s.kind == "row_reduce"), -1)
    if at < 0 or chain[at].param("how") not in REDUCTIONS:
        return None
    head, tail = chain[:at], chain[at + 1:]
    for s in head:
        if s.kind not in HEAD_KINDS:
            return None
        if s.kind == "channel" and s.param("op") not in HEAD_CHANNEL_OPS:
            return None
    params = [s.param("param") for s in head if s.kind == "channel"]
    if len(set(params)) != len(params):
        return None
    if spec.interface is not None and (spec.interface.weight in params or spec.interface.bias in params):
        return None
    for s in tail:
        o = op(s.kind)
        if s.kind in TAIL_EXCLUDED or o.reduces != "element-wise" or o.takes not in ("any",) or o.random:
            return None
    return at


@dataclasses.dataclass(frozen=True)
class RowSumPlan:
    """How a layer the rewrite fits is computed: the head's affine map per channel, w_eff and b_eff cached by the
    parameters' versions, a GEMV a call, the tail on each row's value. (The attributes the module and binding
    templates share with Plan: spec, stages and their slots, the element types, fixed_sizes.)"""
    spec: Spec
    stages: tuple  # the chain's StagePlans (plan_chain): the head, the reduction at reduce_index, the tail
    reduce_index: int
    scalar_slots: tuple
    chan_slots: tuple
    fixed_sizes: bool
    fusegen_version: str
    element: DType = FLOAT32
    compute: DType = FLOAT32
    statistics: DType = dtype("float64")
    operand: DType = dataclasses.field(default=FLOAT32, repr=False)
    output: DType = dataclasses.field(default=FLOAT32, repr=False)
    mainloop: str = "row_sum_gemv"
    tuned_for: str = ""
    gn_index: int = -1

    # what Plan's readers ask of any plan
    converts = False
    scaled = False  # (its GEMV reads the fp32 operands: no scaled planes)
    keeps_x_planes = False
    scaled_mma = False
    plane = None
    wgmma = False
    arch_flags = ()
    column_norm = -1
    norm_affine = False
    weight_pool = None  # (an average pool runs on a GEMM layer's weight: plan/weight_pool.py)
    seeded = False  # (no random stage is rewritten: find_row_sum)
    row_pool = None  # (a pool the row kernels read runs in a GEMM layer)

    @property
    def precision(self) -> str:
        """How it multiplies: in double whatever the spec's precision asked of a GEMM (there is none)."""
        return "fp64"

    @property
    def scalar_chan_slots(self) -> tuple:
        """The per-channel slots a scalar parameter fills (read at index 0; its gradient the sum of its shares)."""
        return tuple(k for k, (i, _) in enumerate(self.chan_slots) if self.spec.chain[i].param("scalar"))

    @property
    def head(self) -> tuple:
        return self.stages[:self.reduce_index]

    @property
    def tail(self) -> tuple:
        return self.stages[self.reduce_index + 1:]

    @property
    def mean(self) -> bool:
        return self.spec.chain[self.reduce_index].param("how") == "mean"

    @property
    def head_scales_by_param(self) -> bool:
        """A per-channel parameter multiplies or divides in the head: its gradient needs W_j . (x^T gz), a pass
        over W in backward."""
        return any(s.kind == "channel" and s.choice("op") in ("mul", "div") for s in self.head)

    @property
    def rewrites(self) -> tuple:
        """What fired, in words (the plan's summary and the explanation say it)."""
        how = self.spec.chain[self.reduce_index].param("how")
        return (f"row {how} after the GEMM -> a GEMV with the weight pre-reduced over its outputs "
                f"(x . sum_j alpha_j W_j), cached by the parameters' versions",) + self.spec.folds

    @property
    def chain_name(self) -> str:
        return "_".join(["lin"] + [op(s.kind).short for s in self.spec.chain])

    @property
    def chain_structure(self) -> tuple:
        return tuple((s.kind, s.index, s.choices) for s in self.stages) + ((self.spec.bias, self.spec.out_shape),)

    @property
    def kernel_uri(self) -> str:
        digest = hashlib.sha256(repr(self.chain_structure).encode()).hexdigest()[:6]
        kind = f"{self.element.short}_" if self.element.short else ""
        return f"fg_rowsum_gemv_{kind}{self.chain_name}_{digest}"

    @property
    def module_name(self) -> str:
        s = self.spec
        digest = hashlib.sha256(repr(self).encode()).hexdigest()[:8]
        kind = f"_{self.element.short}" if self.element.short else ""
        return f"{self.chain_name}_gemv_i{s.input_size}_h{s.hidden_size}{kind}_{digest}"

    @property
    def summary(self) -> str:
        return (f"rewrite: {self.rewrites[0]}; chain {' -> '.join(op(s.kind).title_of(s) for s in self.spec.chain)}"
                f"; sums in double")


def plan_row_sum(spec: Spec, at: int, fixed_sizes: bool, version: str) -> RowSumPlan:
    stages, _, scalar_slots, chan_slots = plan_chain(spec)
    element = dtype(spec.dtype)  # (x, W, the parameters, the output and every gradient; the sums are double)
    return RowSumPlan(spec=spec, stages=stages, reduce_index=at, scalar_slots=scalar_slots, chan_slots=chan_slots,
                      fixed_sizes=fixed_sizes, fusegen_version=version, element=element, operand=element,
                      output=element)
