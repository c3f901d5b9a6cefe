"""The planner: decides the GEMM engine, tiles, the GroupNorm strategy and the epilogue chain for a Spec. Templates
only express a Plan."""
import dataclasses
import hashlib
from typing import Union

from .dtypes import FLOAT32, DType, dtype
from .ops import COLUMN, FULL, GROUP, ROW, ROW_VALUE, op
from .spec import TF32, TF32X3, Spec, SpecError
from .tuning import lookup

__all__ = ["GemmTile", "MmaTile", "WgmmaTile", "StagePlan", "Plan", "plan", "FRAGMENT", "TILE_LOCAL", "TWO_STAGE",
           "NO_NORM", "ROWS", "COLS", "WGMMA_ARCH"]

# GroupNorm strategies, cheapest first.
FRAGMENT = "fragment"  # a group lives in a few lanes' accumulator fragments: statistics are register adds + shuffles
TILE_LOCAL = "tile_local"  # a group fits in the output tile: statistics in the GEMM epilogue, output written once
TWO_STAGE = "two_stage"  # a group spans tiles: partial statistics in the epilogue, then a normalize kernel
NO_NORM = "none"  # no GroupNorm: the whole chain is element-wise, applied to each accumulator as it is stored
# Reductions over the row (softmax, logsumexp, sum, max...): the GEMM epilogue writes z, then a row kernel walks
# each row: one pass per reduction (recomputing the element-wise stages from z, cheap next to the GEMM), the
# output last. Backward: one pass per row sum its gradient needs, in reverse, then dz.
ROWS = "rows"
# A reduction over the batch (BatchNorm1d): the GEMM epilogue writes z, then a column kernel gives each block 32
# whole columns: a pass for the mean, one for the variance (exact two-pass, in double), one for the output; in
# training a one-block kernel then updates the running statistics. Backward likewise: a pass for the column sums
# of g and g x_hat, one for dz and the parameters' column sums. A block owns its columns: no partials cross
# blocks, no atomics.
COLS = "cols"
ROW_STATS = 2  # doubles each row reduction keeps per row for backward (its state, finished)
TINY_GROUP = 8  # 3xtf32 layers with narrower groups run on the fp32 FFMA engine (see plan())
WGMMA_ARCH = (9, 0)  # wgmma, setmaxnreg: sm_90a only (not forward-compatible to later architectures)
WGMMA_GENCODE = "-gencode=arch=compute_90a,code=sm_90a"


@dataclasses.dataclass(frozen=True)
class GemmTile:
    """SIMT engine: a thread block computes block_m x block_n outputs; each thread an 8x8 micro tile (two 4x4
    halves). Runs the fp32 precision and, in every precision, the compensated small GEMMs."""
    block_m: int = 128
    block_n: int = 128
    block_k: int = 8
    thread_m: int = 8
    thread_n: int = 8

    def __post_init__(self):
        if self.thread_m != 8 or self.thread_n != 8:
            raise ValueError("the SIMT mainloop is written for 8x8 micro tiles")
        for name in ("block_m", "block_n"):
            if getattr(self, name) % 16:
                raise ValueError(f"{name} must be a multiple of 16 (two 4-wide halves per thread)")
        loads = self.block_k * max(self.block_m, self.block_n)
        if loads % self.threads:
            raise ValueError("block_k * block_m and block_k * block_n must divide evenly among the threads")

    @property
    def threads(self) -> int:
        return (self.block_m // self.thread_m) * (self.block_n // self.thread_n)

    @property
    def name(self) -> str:
        return f"m{self.block_m}n{self.block_n}k{self.block_k}"


@dataclasses.dataclass(frozen=True)
class MmaTile:
    """Tensor-core engine (sm_80+, mma.sync m16n8k8 TF32): warps_m x warps_n warps share a block_m x block_n
    tile, each warp a grid of 16x8 mma tiles; block_k of the reduction per stage of a `stages`-deep cp.async
    pipeline."""
    block_m: int = 128
    block_n: int = 128
    block_k: int = 32
    warps_m: int = 2
    warps_n: int = 4
    stages: int = 3

    def __post_init__(self):
        if self.block_m % (16 * self.warps_m) or self.block_n % (8 * self.warps_n):
            raise ValueError(f"a warp's tile ({self.block_m}/{self.warps_m} x {self.block_n}/{self.warps_n}) must be "
                             f"a whole number of 16x8 mma tiles")
        if self.block_k % 8 or self.block_k <= 0:
            raise ValueError(f"block_k must be a positive multiple of 8 (the mma k), got {self.block_k}")
        if self.block_m % 32 or self.block_n % 32:
            raise ValueError("block_m and block_n must be multiples of 32 (conflict-free shared-memory strides)")
        if self.block_m * self.block_n > 128 * 128:
            # the compensated small GEMMs run on a SIMT engine of the same output tile, one 8x8 micro tile a
            # thread: more than 256 threads would cap it at 128 registers, and its 128 live sums spill there
            raise ValueError(f"block_m x block_n must be at most 128 x 128 outputs, got {self.block_m}x{self.block_n}")
        if self.stages < 2:
            raise ValueError(f"the pipeline needs at least 2 stages, got {self.stages}")
        for extent in (self.block_m, self.block_n):
            if (extent * self.block_k) % (4 * self.threads):
                raise ValueError("each operand tile must split into whole 16-byte loads per thread")

    @property
    def threads(self) -> int:
        return 32 * self.warps_m * self.warps_n

    @property
    def warp_m(self) -> int:
        return self.block_m // self.warps_m

    @property
    def warp_n(self) -> int:
        return self.block_n // self.warps_n

    @property
    def smem_bytes(self) -> int:
        """Pipeline buffers (the larger of the k-major and the m/n-major layout of each operand)."""
        per_stage = sum(max(e * (self.block_k + 4), self.block_k * (e + 8)) for e in (self.block_m, self.block_n))
        return 4 * self.stages * per_stage

    @property
    def name(self) -> str:
        return f"m{self.block_m}n{self.block_n}k{self.block_k}w{self.warps_m}x{self.warps_n}s{self.stages}"


@dataclasses.dataclass(frozen=True)
class WgmmaTile:
    """Hopper engine (sm_90a, wgmma TF32 + TMA): a block_m x block_n output tile, block_m rows from the pre-split
    operand (wgmma's n) and block_n columns from the raw one (64 per consumer warpgroup, wgmma's m); 32 of
    the reduction per stage of a `stages`-deep ring of bulk tensor copies. One producer warpgroup."""
    block_m: int = 128
    block_n: int = 128
    stages: int = 4
    block_k = 32  # one 128-byte swizzle row of fp32 (fixed by the layout)
    SMEM_LIMIT = 227 * 1024  # opt-in shared memory per block on sm_90

    def __post_init__(self):
        if self.block_n not in (64, 128):
            raise ValueError(f"block_n must be 64 or 128 (one or two consumer warpgroups), got {self.block_n}")
        if self.block_m % 32 or not 32 <= self.block_m <= 256:
            raise ValueError(f"block_m must be a multiple of 32 from 32 to 256 (wgmma's n), got {self.block_m}")
        if self.stages < 2:
            raise ValueError(f"the pipeline needs at least 2 stages, got {self.stages}")

    @property
    def threads(self) -> int:
        return 128 * (self.block_n // 64 + 1)

    def smem_bytes(self, split: bool) -> int:
        """Pipeline ring (plus alignment slack and barriers): the pre-split planes and the raw operand."""
        per_stage = 4 * self.block_k * ((2 if split else 1) * self.block_m + self.block_n)
        return 1024 + self.stages * per_stage + 16 * self.stages

    @property
    def name(self) -> str:
        return f"m{self.block_m}n{self.block_n}s{self.stages}"


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
    # "gnorm" (a GroupNorm beside row reductions: a reduction over each group of the row)
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
        prefix = {ROW: "reduce", GROUP: "reduce", COLUMN: "column"}.get(op(self.kind).reduces, "stage")
        return f"ops/{prefix}_{self.kind}.cuh.j2"

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
    if o.reduces == ROW:
        return "reduce" if o.makes == ROW_VALUE else "norm"
    if o.takes == ROW_VALUE:
        return "combine"
    if s.kind == "residual":
        return "residual"
    return "row_ew" if shapes[i] == ROW_VALUE else "ew"


def row_team(spec) -> int:
    """Row strategy: threads that walk one row (a warp for rows of up to 1024 values, else a block)."""
    return 32 if spec.hidden_size <= 1024 else 256


def _row_tail(roles, i) -> tuple:
    """The row-value stages right before stage i (back to their reduction), last first."""
    tail = []
    while roles[i - 1 - len(tail)] == "row_ew":
        tail.append(i - 1 - len(tail))
    return tuple(tail)


def plan_chain(spec: Spec):
    """(stages, gn_index, scalar_slots, chan_slots): the chain's element-wise stages (with a row reduction, every
    stage) with their argument slots, the GroupNorm's position (-1: none), and what fills the slots
    ((stage index, param name) each)."""
    stages, scalar_slots, chan_slots = [], [], []
    chain = spec.chain
    rows, cols = spec.has_row_reduction, spec.column_norm >= 0
    if cols and (rows or spec.has_group_norm):
        raise SpecError("a BatchNorm with a GroupNorm or a row reduction in one chain: not generated yet")
    # beside row reductions the GroupNorm is one of the row kernels' reductions (role gnorm), not the fused one
    gn_index = -1 if rows else next((i for i, s in enumerate(chain) if s.kind == "group_norm"), -1)
    roles = [_role(spec, i) for i in range(len(chain))] if rows or cols else []
    n_stats = n_sums = 0
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
        extra = dict(role=roles[i]) if cols else {}
        if rows:
            role = roles[i]
            tail = _row_tail(roles, i) if role == "combine" else ()
            extra = dict(role=role, tail=tail, row_of=(tail[-1] if tail else i) - 1 if role == "combine" else -1)
            if role == "gnorm":
                gw = spec.group_width
                extra.update(group_width=gw, group_lanes=row_team(spec) if gw >= 32 else min(32, _next_pow2(gw)))
        stage = StagePlan(s.kind, i, tuple((n, s.param(n)) for n in op(s.kind).choices), tuple(scalars), chan, src,
                          **extra)
        if stage.row_stats:
            stage, n_stats = dataclasses.replace(stage, stats_at=n_stats), n_stats + stage.row_stats
        if stage.row_sums:
            stage, n_sums = dataclasses.replace(stage, sums_at=n_sums), n_sums + stage.row_sums
        stages.append(stage)
    # the GroupNorm's per-group doubles after all the others
    stages = [dataclasses.replace(s, stats_at=n_stats, sums_at=n_sums) if s.role == "gnorm" else s for s in stages]
    return tuple(stages), gn_index, tuple(scalar_slots), tuple(chan_slots)


def _structure(stages, gn_index, gn_affine, bias, out_shape="full") -> tuple:
    return tuple((s.kind, s.index, s.choices, s.src) for s in stages) + ((gn_index, gn_affine, bias),) + \
        (() if out_shape == "full" else (out_shape,))


_HEADLINE_STRUCTURE = _structure(plan_chain(Spec(8, 8, 1))[0], 0, True, True)


@dataclasses.dataclass(frozen=True)
class Plan:
    spec: Spec
    mainloop: str  # template name of the main engine: engines/mainloop_<mainloop>.cuh.j2
    tile: Union[GemmTile, MmaTile, WgmmaTile]  # the main engine's tile: the forward GEMM and both backward GEMMs
    simt_tile: GemmTile  # the SIMT engine (compensated small GEMMs; the main engine too in fp32); same block_m/n
    # the mma.sync engine (tensor-core precisions): the main engine, or beside wgmma the one for operands the
    # copy engine cannot read (unaligned, strided); same block_m/n. None in fp32.
    mma_tile: Union[MmaTile, None]
    group_strategy: str  # FRAGMENT, TILE_LOCAL or TWO_STAGE
    promote_every_k: int  # add the running accumulators into a separate fp32 sum every this many k (0: never)
    # GEMMs of at most this many multiply-adds (checked at run time) are summed compensated (Dot2), with dz
    # carried as an fp32 pair into the backward GEMMs: for small GEMMs a few ill-conditioned values decide the
    # error, and fp32 sums (or an fp32-rounded dz) are one unlucky draw from 4x cuBLAS's.
    exact_max_macs: int
    lanes_per_group: int  # a sub-warp of this many lanes owns one (row, group) in the per-group stages
    pieces_per_group: int  # TWO_STAGE: most output tiles one group can touch (partial-statistics slots)
    fixed_sizes: bool  # input and hidden sizes are compile-time constants (the batch never is)
    fusegen_version: str
    stages: tuple = ()  # StagePlans of the element-wise stages, in chain order
    gn_index: int = -1  # the GroupNorm's position in the chain, -1: none
    scalar_slots: tuple = ()  # (chain index, param name) that fills each runtime scalar
    chan_slots: tuple = ()  # (chain index, param name) that fills each per-channel parameter pointer
    tuned_for: str = ""  # the GPU whose tuning-table entry chose `tile` ("": the heuristic or the caller chose)
    # Element types (fusegen/dtypes.py), the templates' elem_t, compute_t and stat_t: the tensors in memory (x,
    # W, bias, parameters, output, gradients), the epilogue's arithmetic (its ops' compute type) and the
    # reductions' states and statistics (their accumulate type).
    element: DType = FLOAT32
    compute: DType = FLOAT32
    statistics: DType = dtype("float64")

    @property
    def group_width(self) -> int:
        return self.spec.group_width if self.gn_index >= 0 else 1

    @property
    def pre(self) -> tuple:
        """Element-wise stages between the GEMM and the GroupNorm."""
        return tuple(s for s in self.stages if s.index < self.gn_index)

    @property
    def post(self) -> tuple:
        """Element-wise stages after the GroupNorm (all of them without one)."""
        return tuple(s for s in self.stages if s.index > self.gn_index)

    @property
    def post_first(self) -> int:
        """The chain value the post stages start from: the GroupNorm's output, or the Linear's."""
        return self.gn_index + 1 if self.gn_index >= 0 else 0

    @property
    def column_norm(self) -> int:
        """The BatchNorm's stage index (column strategy), -1: none."""
        return self.spec.column_norm

    @property
    def norm_affine(self) -> bool:
        """The chain's GroupNorm or BatchNorm has weight and bias (the kernels' gamma and beta)."""
        at = self.gn_index if self.gn_index >= 0 else self.column_norm
        return at >= 0 and bool(self.spec.chain[at].param("affine"))

    @property
    def row_stats(self) -> int:
        """Row strategy: doubles of statistics the forward keeps per row."""
        return sum(s.row_stats for s in self.stages)

    @property
    def row_sums(self) -> int:
        """Row strategy: doubles of backward row sums per row."""
        return sum(s.row_sums for s in self.stages)

    @property
    def row_team(self) -> int:
        return row_team(self.spec)

    @property
    def row_group_width(self) -> int:
        """Row strategy: the GroupNorm's group width (its 2 doubles a group follow the row's other statistics and
        row sums), 0: none."""
        return next((s.group_width for s in self.stages if s.role == "gnorm"), 0)

    @property
    def terminal_tail(self) -> tuple:
        """Row strategy with a row value as output: the row-value stages after the last reduction, last first."""
        if self.spec.out_shape == "full":
            return ()
        return _row_tail([s.role for s in self.stages] + ["end"], len(self.stages))

    @property
    def terminal_reduce(self) -> int:
        """Row strategy with a row value as output: the last reduction's stage index (-1: the output is full)."""
        if self.spec.out_shape == "full":
            return -1
        tail = self.terminal_tail
        return (tail[-1] if tail else len(self.stages)) - 1

    @property
    def full_values(self) -> tuple:
        """Indices of the chain values that are (batch, hidden) tensors."""
        return tuple(i for i, shape in enumerate(self.spec.value_shapes) if shape == FULL)

    @property
    def stats_per_row(self) -> int:
        """float64 values the forward keeps per row for backward: the group means (the rstds beside them), or the
        row reductions' statistics (with a GroupNorm among them, two a group after the others)."""
        return self.spec.num_groups if self.gn_index >= 0 else self.row_stats + 2 * self._row_groups

    @property
    def sums_per_row(self) -> int:
        """Row strategy: float64 row sums backward keeps per row (a GroupNorm's two a group after the others)."""
        return self.row_sums + 2 * self._row_groups

    @property
    def _row_groups(self) -> int:
        return self.spec.hidden_size // self.row_group_width if self.row_group_width else 0

    @property
    def needs_z(self) -> bool:
        """The forward writes z even when backward will not run: later kernels of the forward read it."""
        return self.group_strategy in (TWO_STAGE, ROWS, COLS)

    @property
    def gn_affine(self) -> bool:
        return self.gn_index >= 0 and bool(self.spec.chain[self.gn_index].param("affine"))

    @property
    def is_headline_chain(self) -> bool:
        """The kernels are the headline layer's (whatever the model file called its parameters)."""
        return self.chain_structure == _HEADLINE_STRUCTURE

    @property
    def chain_structure(self) -> tuple:
        """What of the chain shapes the emitted CUDA: stage kinds and choices, GroupNorm place and affine, bias."""
        return _structure(self.stages, self.gn_index, self.gn_affine, self.spec.bias, self.spec.out_shape)

    @property
    def chain_name(self) -> str:
        return "_".join(["lin"] + [op(s.kind).short for s in self.spec.chain])

    @property
    def precision(self) -> str:
        return self.spec.precision

    @property
    def summary(self) -> str:
        groups = {FRAGMENT: "group statistics on the accumulator fragments in registers (a group fits a few lanes)",
                  TILE_LOCAL: "group statistics in the GEMM epilogue (a group fits the tile)",
                  TWO_STAGE: f"two-stage: partial statistics in the GEMM epilogue, then a normalize kernel "
                             f"(a group of {self.group_width} spans up to {self.pieces_per_group} tiles)",
                  NO_NORM: "no GroupNorm: the element-wise chain on each accumulator as it is stored",
                  ROWS: f"row reductions: the GEMM epilogue writes z, a row kernel ({self.row_team} threads a row) "
                        f"makes one pass per reduction and one for the output",
                  COLS: "BatchNorm: the GEMM epilogue writes z, a column kernel (32 columns a block) makes a pass "
                        "for the mean, one for the variance and one for the output"}
        engine = self.mainloop + (f" (groups under {TINY_GROUP} channels: fp32 FFMA for accuracy)"
                                  if self.precision == TF32X3 and self.mainloop == "simt_fp32" else "")
        tuned = f", tuned on {self.tuned_for}" if self.tuned_for else ""
        chain = "" if self.is_headline_chain else f"chain {' -> '.join(s.kind for s in self.spec.chain)}; "
        width = "" if self.group_strategy in (NO_NORM, ROWS, COLS) else f"group width {self.group_width}: "
        return (f"{self.precision} {engine} GEMM, tile {self.tile.name} ({self.tile.threads} threads{tuned}); "
                f"{chain}{width}{groups[self.group_strategy]}")

    @property
    def kernel_uri(self) -> str:
        """Readable name of the compiled specialization; specs that share it share one build."""
        sizes = f"_i{self.spec.input_size}_h{self.spec.hidden_size}" if self.fixed_sizes else ""
        strategy = {FRAGMENT: "frag", TILE_LOCAL: "tile", TWO_STAGE: "2stage", NO_NORM: "ew",
                    ROWS: f"rows{self.row_team}", COLS: "cols"}[self.group_strategy]
        chain = "" if self.is_headline_chain else \
            f"_{self.chain_name}_{hashlib.sha256(repr(self.chain_structure).encode()).hexdigest()[:6]}"
        return (f"fg_{self.precision}_{self.mainloop}_{self.tile.name}p{self.promote_every_k}_gw{self.group_width}"
                f"_{strategy}{chain}{sizes}")

    @property
    def module_name(self) -> str:
        """Name of the generated Python module: the spec in words plus a hash over everything rendered."""
        s = self.spec
        digest = hashlib.sha256(repr(self).encode()).hexdigest()[:8]
        if not s.stages:
            return f"lin_gn_lrelu2_i{s.input_size}_h{s.hidden_size}_g{s.num_groups}_{digest}"
        return f"{self.chain_name}_i{s.input_size}_h{s.hidden_size}_g{s.num_groups}_{digest}"

    @property
    def variant_key(self) -> tuple:
        """The structural choices that change the shape of the emitted CUDA (not just its constants)."""
        return (self.precision, self.mainloop, self.tile, self.mma_tile, self.group_strategy, self.fixed_sizes,
                self.chain_structure)

    @property
    def arch_flags(self) -> tuple:
        """nvcc target flags the engine pins (empty: the build runtime picks the visible GPU's)."""
        return (WGMMA_GENCODE,) if self.mainloop == "wgmma_tf32" else ()


def _next_pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


ENGINES = {GemmTile: "simt_fp32", MmaTile: "mma_tf32", WgmmaTile: "wgmma_tf32"}  # tile type -> mainloop


def plan(spec: Spec, *, fixed_sizes: bool = True, tile: Union[GemmTile, MmaTile, WgmmaTile] = None, gpu: str = None,
         arch: tuple = None, batch: int = None) -> Plan:
    """Choose how to compute `spec`.

    fixed_sizes bakes input/hidden into the kernels (lets the compiler drop bounds checks); test suites turn it
    off so that many random shapes share one build per group width. `tile` overrides the heuristic and picks
    the engine: a GemmTile for fp32; an MmaTile (sm_80+) or a WgmmaTile (sm_90a) for the tensor-core
    precisions. Without it, `gpu` (a device name) looks the tile up in the tuning table (`fusegen tune`; the
    entry for `batch`, else the largest batch tuned), and else `arch` (the GPU's compute capability) decides:
    wgmma on sm_90, mma.sync elsewhere.
    """
    from . import __version__

    if not isinstance(spec, Spec):
        raise TypeError(f"plan() takes a fusegen.Spec, got {type(spec).__name__}")
    # Groups of fewer than 8 channels often have a variance near 0, where y amplifies z's rounding by up to
    # 1/sqrt(eps) and single elements can only match the fp32 reference if z is as exact as its own. 3xTF32's
    # products carry ~2^-23 relative error (the small parts' rounding) where an FFMA's are exact: measured, a
    # 3-channel layer (input 3001) missed allclose(1e-4) on 2 elements. Those layers stay on the FFMA engine.
    stages, gn_index, scalar_slots, chan_slots = plan_chain(spec)
    gw = spec.group_width if spec.has_group_norm else 1
    # (without a GroupNorm nothing amplifies the GEMM's rounding: tensor cores at any width)
    tensor_cores = spec.precision == TF32 or (spec.precision == TF32X3 and (gw >= TINY_GROUP or
                                                                            not spec.has_group_norm))
    allowed = (MmaTile, WgmmaTile) if tensor_cores else (GemmTile,)
    if tile is not None and not isinstance(tile, allowed):
        raise TypeError(f"precision {spec.precision} runs on {' or '.join(c.__name__ for c in allowed)}s, "
                        f"got a {type(tile).__name__}")
    tuned_for = ""
    if tile is None and gpu:
        found = lookup(spec, gpu, batch)
        tile = {mainloop: cls for cls, mainloop in ENGINES.items()}[found[0]](**found[1]) if found else None
        tile = tile if isinstance(tile, allowed) else None
        tuned_for = gpu if tile else ""
    if tile is None:
        tile = (WgmmaTile() if arch is not None and tuple(arch) == WGMMA_ARCH else MmaTile()) if tensor_cores \
            else GemmTile()
    mainloop = ENGINES[type(tile)]
    if isinstance(tile, WgmmaTile) and tile.smem_bytes(spec.precision != TF32) > tile.SMEM_LIMIT:
        raise ValueError(f"tile {tile.name} needs {tile.smem_bytes(spec.precision != TF32)} bytes of shared memory "
                         f"in {spec.precision}, over the {tile.SMEM_LIMIT} a block can have: fewer stages")
    # Compensated small GEMMs always run on the SIMT engine, on the same output tile (one group strategy).
    simt_tile = tile if not tensor_cores else GemmTile(block_m=tile.block_m, block_n=tile.block_n)
    mma_tile = None if not tensor_cores else (tile if isinstance(tile, MmaTile) else
                                              MmaTile(block_m=tile.block_m, block_n=tile.block_n))
    # FRAGMENT: mma.sync's fragment gives a quad of lanes a row's columns (a group must fit a warp's width);
    # wgmma's gives lanes 4 apart a row's 16 columns of a warp. Beside wgmma the mma.sync fallback must fit too.
    if spec.has_row_reduction:
        strategy, pieces = ROWS, 1
    elif spec.column_norm >= 0:
        strategy, pieces = COLS, 1
    elif gn_index < 0:
        strategy, pieces = NO_NORM, 1
    elif tensor_cores and gw & (gw - 1) == 0 and mma_tile.warp_n % gw == 0 and (mainloop == "mma_tf32" or gw <= 16):
        strategy, pieces = FRAGMENT, 1
    elif tile.block_n % gw == 0:
        strategy, pieces = TILE_LOCAL, 1
    else:
        strategy = TWO_STAGE
        # a run of gw columns starting anywhere inside a tile touches at most this many tiles
        pieces = (gw + 2 * tile.block_n - 2) // tile.block_n
    # Two-level summation: each thread's running sums restart every 64 of the reduction and are added into
    # separate fp32 totals. For fp32 FFMA the rounding error then grows with K/64 + 64 rather than K (at least
    # as accurate as cuBLAS's split reductions, ~5% more instructions). For 3xTF32 it is what makes the result
    # fp32-accurate at all: the tensor cores' own long accumulation loses bits (h200_baselines: 2.6e-4 over all
    # of K=8192, 4.7e-5 promoted every 64). TF32's own rounding (~3e-4) dwarfs it: no totals, fewer registers.
    promote = 0 if spec.precision == TF32 else 64
    for t in (tile, mma_tile):
        if promote and t is not None and promote % t.block_k:
            raise ValueError(f"block_k ({t.block_k}) must divide the promotion interval ({promote})")
    computes = {op(s.kind).compute for s in spec.chain} or {FLOAT32.name}
    accumulates = {op(s.kind).accumulate for s in spec.chain if op(s.kind).accumulate} or {"float64"}
    if len(computes) > 1 or len(accumulates) > 1:
        raise SpecError(f"the chain's ops compute in {sorted(computes)} and accumulate in {sorted(accumulates)}: "
                        "one epilogue computes in one type")
    return Plan(spec=spec, mainloop=mainloop, tile=tile, simt_tile=simt_tile, mma_tile=mma_tile,
                group_strategy=strategy, promote_every_k=promote, exact_max_macs=1 << 28,
                lanes_per_group=min(32, _next_pow2(gw)), pieces_per_group=pieces,
                fixed_sizes=fixed_sizes, fusegen_version=__version__, stages=stages, gn_index=gn_index,
                scalar_slots=scalar_slots, chan_slots=chan_slots, tuned_for=tuned_for,
                compute=dtype(computes.pop()), statistics=dtype(accumulates.pop()))
