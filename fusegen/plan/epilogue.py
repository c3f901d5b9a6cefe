"""The epilogue's planning: the chain after the GEMM as the templates express it, one StagePlan a stage (its argument
slots; with row or column reductions its role in their kernels, its places in the per-row statistics and sums)."""
import dataclasses

from ..ops import COLUMN, GROUP, ROW, ROW_VALUE, SAME, WINDOW, op
from ..spec import Spec, SpecError

ROW_STATS = 2  # doubles each row reduction keeps per row for backward (its state, finished)


@dataclasses.dataclass(frozen=True)
class StagePlan:
    """An element-wise stage as the templates express it: struct S<index> reads chain value v<index> and makes
    v<index + 1> (v0 is the Linear's output, the GroupNorm takes one index too)."""
    kind: str
    index: int
    choices: tuple = ()  # (name, value) baked in: gelu's form, an arithmetic op
    scalars: tuple = ()  # (name, slot): runtime scalars, StageArgs::scalar[slot]
    chan: int = -1  # slot of its per-channel parameter (StageArgs::chan), -1: none
    src: int = -1  # residual, row_combine: the earlier (batch, hidden) chain value it reads
    # Row and column strategies. role: how their kernels run it: "ew" (element-wise on the tensor), "residual",
    # "row_ew" (element-wise on a row value: once a row), "reduce" (tensor -> row value), "norm" (a row reduction
    # back onto the tensor: softmax), "combine" (a row value against the tensor), "cnorm" (the BatchNorm),
    # "gnorm" (a GroupNorm beside row reductions: a reduction over each group of the row), "pool" (a MaxPool1d
    # right after the Linear: the row kernels read its windows' maxima of z as the chain's first value)
    role: str = "ew"
    # reduce, norm: its ROW_STATS doubles in the per-row statistics; gnorm: 2 a group, after every other's
    stats_at: int = -1
    # reduce, norm, combine: its backward row sum (reduce: its value's gradient) per row; gnorm: 2 a group, last
    sums_at: int = -1
    tail: tuple = ()  # combine: the row-value stages between it and its reduction, last first (backward's order)
    row_of: int = -1  # combine: the reduction whose row value it reads
    # gnorm: channels a group, and lanes that walk one group (a power of two up to 32 for narrow groups, so
    # that one team walks several groups at once; the whole team for wider ones). Its groups' doubles follow
    # the other reductions' in a row (their count depends on the run-time width). With affine its weight is
    # StageArgs::chan[chan], its bias chan[chan + 1].
    group_width: int = 0
    group_lanes: int = 0
    # The device function that rounds its value as the reference holds it: as_elem (the tensors' type), or as_op
    # (the Linear's operand type: under autocast, until an op turns the chain float32; autocast_values)
    rounds: str = dataclasses.field(default="as_elem", repr=False)  # (autocast modules' names say so)

    @property
    def row_stats(self) -> int:
        """Doubles it keeps per row at fixed places: ROW_STATS for a row reduction."""
        return ROW_STATS if self.role in ("reduce", "norm") else 0

    @property
    def row_sums(self) -> int:
        """Doubles its backward keeps per row at fixed places: one row sum."""
        return 1 if self.role in ("reduce", "norm", "combine") else 0

    @property
    def template(self) -> str:
        """Its device code: a reduce_ struct for a row reduction, a stage_ struct otherwise (the residual has
        none: the chain adds it)."""
        if self.kind == "residual":
            return ""
        prefix = {ROW: "reduce", GROUP: "reduce", COLUMN: "column", WINDOW: "pool"}.get(op(self.kind).reduces, "stage")
        return f"ops/{prefix}_{self.kind}.cuh.j2"

    @property
    def chan_at(self) -> str:
        """C index, in its parameter, of the value column `col` reads: its own, or a scalar parameter's one."""
        return "0" if dict(self.choices).get("scalar") else "col"

    @property
    def grad_to_src(self) -> bool:
        """residual: whether backward adds its gradient into src's (not where src was detached)."""
        return not dict(self.choices).get("detached")

    def slot(self, name) -> int:
        return dict(self.scalars)[name]

    def choice(self, name):
        return dict(self.choices)[name]


def _role(spec, i) -> str:
    s, shapes = spec.chain[i], spec.value_shapes
    o = op(s.kind)
    if o.reduces == COLUMN:
        return "cnorm"
    if o.reduces == GROUP:
        return "gnorm"
    if o.reduces == WINDOW:
        return "pool"
    if o.reduces == ROW:
        return "reduce" if o.makes == ROW_VALUE else "norm"
    if o.takes == ROW_VALUE:
        return "combine"
    if s.kind == "residual":
        return "residual"
    return "row_ew" if shapes[i] == ROW_VALUE else "ew"


def row_team(spec) -> int:
    """Row strategy: threads that walk one row (a warp for rows of up to 1024 values, else a block)."""
    return 32 if spec.features <= 1024 else 256


def runs_on_rows(spec) -> bool:
    """The chain runs in the row kernels (the row strategy): a reduction over the row, or a pool over the features
    (the rows read z's windows)."""
    return spec.has_row_reduction or spec.feature_pool


def _row_tail(roles, i) -> tuple:
    """The row-value stages right before stage i (back to their reduction), last first."""
    tail = []
    while roles[i - 1 - len(tail)] == "row_ew":
        tail.append(i - 1 - len(tail))
    return tuple(tail)


def autocast_values(spec: Spec) -> tuple:
    """Per chain value (0: the Linear's output), whether it is held in the operand type: under autocast, the
    Linear's output and each later value until an op on autocast's float32 list or a float32 tensor operand
    (Op.autocast) turns the chain float32; without autocast none (the operand type is the tensors' own)."""
    held, half = [], bool(spec.autocast)
    for s in (None,) + tuple(spec.chain):
        half = half and (s is None or op(s.kind).autocast == SAME)
        held.append(half)
    return tuple(held)


def plan_chain(spec: Spec):
    """(stages, gn_index, scalar_slots, chan_slots): the chain's element-wise stages (with a row reduction, every
    stage) with their argument slots, the GroupNorm's position (-1: none), and what fills the slots
    ((stage index, param name) each)."""
    stages, scalar_slots, chan_slots = [], [], []
    chain = spec.chain
    rows, cols = runs_on_rows(spec), spec.column_norm >= 0
    if cols and spec.feature_pool:
        raise SpecError(f"a BatchNorm after a {op(chain[0].kind).title} over the features: not generated yet (after a "
                        "Linear it is)")
    if cols and (rows or spec.has_group_norm):
        raise SpecError("a BatchNorm with a GroupNorm or a row reduction in one chain: not generated yet")
    # beside row reductions the GroupNorm is one of the row kernels' reductions (role gnorm), not the fused one
    gn_index = -1 if rows else next((i for i, s in enumerate(chain) if s.kind == "group_norm"), -1)
    roles = [_role(spec, i) for i in range(len(chain))] if rows or cols else []
    n_stats = n_sums = 0
    half_values = autocast_values(spec)
    for i, s in enumerate(chain):
        if s.kind == "group_norm" and not rows:
            continue
        scalars = []
        for name in op(s.kind).scalars:
            scalars.append((name, len(scalar_slots)))
            scalar_slots.append((i, name))
        chan = -1
        if s.kind == "channel":
            chan = len(chan_slots)
            chan_slots.append((i, "param"))
        if s.kind == "group_norm" and s.param("affine"):
            chan = len(chan_slots)
            chan_slots += [(i, "weight"), (i, "bias")]
        src = s.param("src", -1) if s.kind in ("residual", "row_combine") else -1
        if s.kind == "residual" and not (0 <= src <= i and (gn_index < 0 or (src <= gn_index) == (i < gn_index))):
            raise SpecError(f"stage {i} (residual) adds chain value {src}: it must be an earlier value on the same "
                             f"side of the GroupNorm (at {gn_index})")
        if s.kind == "input_residual" and spec.feature_pool:
            raise SpecError(f"stage {i} adds the layer's input after a {op(chain[0].kind).title} over the features: "
                            "not generated yet")
        if s.kind == "input_residual" and spec.input_size != spec.hidden_size:
            raise SpecError(f"stage {i} adds the layer's input ({spec.input_size} features) to {spec.hidden_size}: "
                            "torch adds them element-wise only when equal")
        if s.kind == "input_residual" and not s.param("detached") and 0 <= gn_index and i < gn_index:
            # (the fused GroupNorm's backward runs the pre stages' backward twice, once on dz's rounding remainder)
            raise SpecError(f"stage {i} adds the layer's input before the GroupNorm (at {gn_index}): generated after it")
        extra = dict(role=roles[i]) if cols else {}
        if rows:
            role = roles[i]
            tail = _row_tail(roles, i) if role == "combine" else ()
            extra = dict(role=role, tail=tail, row_of=(tail[-1] if tail else i) - 1 if role == "combine" else -1)
            if role == "gnorm":
                gw = spec.group_width
                extra.update(group_width=gw, group_lanes=row_team(spec) if gw >= 32 else min(32, _next_pow2(gw)))
        stage = StagePlan(s.kind, i, tuple((n, s.param(n)) for n in op(s.kind).choices), tuple(scalars), chan, src,
                          rounds="as_op" if half_values[i + 1] else "as_elem", **extra)
        if stage.row_stats:
            stage, n_stats = dataclasses.replace(stage, stats_at=n_stats), n_stats + stage.row_stats
        if stage.row_sums:
            stage, n_sums = dataclasses.replace(stage, sums_at=n_sums), n_sums + stage.row_sums
        stages.append(stage)
    # the GroupNorm's per-group doubles after all the others
    stages = [dataclasses.replace(s, stats_at=n_stats, sums_at=n_sums) if s.role == "gnorm" else s for s in stages]
    return tuple(stages), gn_index, tuple(scalar_slots), tuple(chan_slots)


def _next_pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p
