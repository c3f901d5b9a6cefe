"""The planner: decides the GEMM engine, tiles, the GroupNorm strategy and the epilogue chain for a Spec. Templates
only express a Plan. (The engines' tiles: plan/engines.py; the epilogue chain's StagePlans: plan/epilogue.py.)"""
import dataclasses
import hashlib
from typing import Union

from ..dtypes import FLOAT16, FLOAT32, DType, dtype
from ..ops import FULL, op
from ..spec import TF32, TF32X3, Spec, SpecError
from .engines import ENGINES, WGMMA_ARCH, WGMMA_GENCODE, GemmTile, MmaTile, WgmmaTile
from .epilogue import _next_pow2, _row_tail, autocast_values, plan_chain, row_team, runs_on_rows
from .algebra import fold
from .row_sum import find_row_sum, plan_row_sum
from .weight_pool import WeightPool, split_weight_pool
from .tuning import lookup, tuned_mainloop

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
NARROW_ROWS = 32  # the narrow mma.sync tile's rows
FALLBACK_MAX_ROWS = 128  # the SIMT and mma.sync tiles' rows at most (beside a taller wgmma tile)
# The 16-bit engine's tile without a tuned one: k tiles of 64 (four k16 steps a barrier) were the fastest of 12
# candidates on the H200 at 1024 x 8192 -> 8192 (fusegen tune, session 14: 0.63 / 2.20 ms against 0.82 / 2.77
# for the fp32 engines' k32)
HALF_TILE = MmaTile(block_k=64)
# 16-bit wgmma: 256-row tiles (wgmma n256, 128 accumulators a consumer thread) read a quarter fewer operand bytes
# a flop than 128 x 128 ones; measured on the H200 at the headline, bf16: 0.993 against 1.148 ms forward+backward
# (tests/gpu-results/h200-2026-11-25-s16, run 17). The default where the tuning table has no entry.
HALF_WGMMA_TILE = WgmmaTile(block_m=256, block_n=128, stages=4)
# tf32 on sm_90: the wgmma GEMMs read fp16 planes of the fp32 operands, each row of a plane divided by a power of
# two (Plan.plane): the same 11-bit significand as TF32, the range fp32's, at the 16-bit engine's rate (k16 a
# wgmma, twice TF32's k8).
SCALED_PLANE = FLOAT16
# 3xtf32 on sm_90 may run the same engine over two planes an operand (hi and lo, one scale: "3xfp16", three
# products a k16 step): fp32-accurate at fp16's rate. THREE_FP16 makes it the default there; plan(scaled_planes=)
# picks either engine. Its tile: 128 x 128 (a consumer's accumulators and fp32 totals beside two planes'
# fragments), three stages of four 16 KB plane tiles.
THREE_FP16 = True
THREE_FP16_TILE = WgmmaTile(block_m=128, block_n=128, stages=3)
# 3xtf32 on mma.sync (sm_80 / 86 / 89) over the same two planes: the 16-bit engine's two-plane form (engine Planes,
# beside the fp32 engines that keep small and unaligned GEMMs). Its GEMMs measured 1.7-1.8x the 3xTF32 engine's on
# an H100's mma.sync, more accurate (benchmarks/mma_3xfp16.py; session 31 run 7); the headline module's step 0.58x
# the 3xTF32 module's (session 32 run 2). The default there; plan(scaled_planes=False) / --planes off keeps 3xTF32.
THREE_FP16_MMA = True


def _three_fp16(spec: Spec, half: bool, scaled_planes, default: bool) -> bool:
    """Whether 3xtf32's fp32 operands go to a 16-bit engine as two scaled fp16 planes: as plan(scaled_planes=)
    asks, else the engine family's default (THREE_FP16 on wgmma, THREE_FP16_MMA on mma.sync)."""
    return spec.precision == TF32X3 and not half and (default if scaled_planes is None else scaled_planes)


def _plane_count(precision: str, scaled: bool) -> int:
    """Planes an operand of a scaled plan: 2 for 3xtf32's accuracy (hi and lo, three products: lo x hi, hi x lo,
    hi x hi), 1 for tf32; 0 where the plan is not scaled."""
    return 0 if not scaled else 2 if precision == TF32X3 else 1
GEMV_ROWS = 4  # forward GEMMs of at most this many rows run on the few-rows FFMA engine (tensor-core plans)
EXACT_DX_MAX_INPUT = 8  # see Plan.exact_dx_max_input
EXACT_MAX_TILE_MACS = 1 << 23  # see Plan.exact_max_tile_macs
TINY_GROUP = 8  # 3xtf32 layers with narrower groups run on the fp32 FFMA engine (see plan())


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
    # the mma.sync engine's narrow tile (tensor-core precisions): GEMMs of at most narrow_max_rows output rows
    # (small batches) run on it, a 128-row tile would spend its tensor-core work on padding. None in fp32.
    narrow_tile: Union[MmaTile, None]
    narrow_max_rows: int
    group_strategy: str  # FRAGMENT, TILE_LOCAL or TWO_STAGE
    promote_every_k: int  # add the running accumulators into a separate fp32 sum every this many k (0: never)
    # GEMMs of at most this many multiply-adds (checked at run time; 0: none) are summed compensated (Dot2) on
    # the SIMT engine, with dz carried as an fp32 pair into the backward GEMMs. Every other GEMM picks its
    # engine and split-K slices at run time from its sizes (launchers.cuh: schedule()).
    exact_max_macs: int
    # grad_input runs compensated too (with dz as a pair) when the layer has at most this many inputs (0: never)
    # and the GEMM has at most 2^28 multiply-adds: after a GroupNorm, dz is orthogonal to each group's xhat,
    # which for so few inputs lies in the span of W's columns, so dx = dz W cancels (fully for one input) and
    # tensor-core products (3xTF32: ~2^-22 relative each) leave an error the cancellation magnifies.
    exact_dx_max_input: int
    # Tiny GEMMs run compensated too: those whose work in whole SIMT tiles (rows and columns rounded up to the
    # tile) is at most this many multiply-adds (0: none). There 3xTF32's product rounding (~2^-22 relative,
    # an FFMA's is exact) is not averaged out by a long sum: measured 2-8x cuBLAS's error at batch 5-20 x 64 x
    # 130 (H200 chains run, session 10), and 7x at batch 8 x 100 -> 320 with rows scaled 2^-10..2^10 (4.9M
    # multiply-adds in whole tiles, H100, session 26); the Dot2 mainloop costs little at this size.
    exact_max_tile_macs: int
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
    # op_t and out_t: what the GEMMs multiply (x and W as the engines read them, dz) and what the output holds
    # (and its gradient). Both the element type but under autocast: the Linear's 16-bit type, and the output's
    # type as autocast leaves the chain (float32 after an op on its float32 list).
    # (out of the repr, which names and hashes modules: the modules from before autocast keep their names; an
    # autocast module's name says so)
    operand: DType = dataclasses.field(default=FLOAT32, repr=False)
    output: DType = dataclasses.field(default=FLOAT32, repr=False)
    # An average pool right after the Linear, run as the Linear with its weight and bias pooled alike
    # (plan/weight_pool.py); `spec` is then the pooled Linear's and the stages after the pool. None: no pool.
    # (out of the repr, which names and hashes modules: module_name adds it where there is one)
    weight_pool: Union[WeightPool, None] = dataclasses.field(default=None, repr=False)
    # The layer's output feeds another fused layer of the same model (codegen/layers.py). Under autocast it is then
    # handed on in float32 holding the values autocast rounds to 16 bits (the next layer, a float32 module under
    # autocast, converts them back exactly); its gradient comes back in float32 too. (Out of the repr: module_name
    # says so where it changes the module.)
    feeds_layer: bool = dataclasses.field(default=False, repr=False)
    # The wgmma engine's operands, where they are not op_t: 16-bit planes of the fp32 operands made per call (x,
    # dz; the weight once per version), each row of a plane divided by a power of two so that its largest element
    # lands in the 16-bit type's top binade; the GEMMs' outputs multiplied back by the scales. The mma.sync and
    # SIMT engines beside it read the fp32 operands (TF32). None: the engines read op_t. (Out of the repr: the
    # mainloop's name says so, and module_name adds it where set.)
    plane: Union[DType, None] = dataclasses.field(default=None, repr=False)

    @property
    def scaled(self) -> bool:
        """The wgmma GEMMs read scaled 16-bit planes (Plan.plane)."""
        return self.plane is not None

    @property
    def scaled_mma(self) -> bool:
        """The scaled planes are read by mma.sync (sm_80+: engine Planes, the 16-bit engine's two-plane form), not
        wgmma; the fp32 mma.sync engines (Main, Narrow) keep the GEMMs it does not take."""
        return self.scaled and not self.wgmma

    @property
    def keeps_x_planes(self) -> bool:
        """Training keeps x's planes, made for the forward GEMM, for grad_weight's, which reads the same ones (x's rows
        scaled): a pass over x fewer a step, for their memory held from forward to backward (autograd's saved
        tensors)."""
        return self.scaled

    @property
    def pieces(self) -> int:
        """Planes an operand of a scaled plan (_plane_count)."""
        return _plane_count(self.precision, self.scaled)

    @property
    def converts(self) -> bool:
        """x and W are converted to the operand type (into scratch planes) before the GEMMs read them: autocast."""
        return self.operand != self.element

    @property
    def group_width(self) -> int:
        return self.spec.group_width if self.gn_index >= 0 else 1

    @property
    def gemv_max_rows(self) -> int:
        """Forward GEMMs of at most this many rows (16-byte rows of x and W) run on the few-rows engine
        (engines/mainloop_gemv_fp32): matrix-vector products, bound by streaming W, where the narrow tile's
        3xTF32 work is mostly padding (measured: 1 x 8192 x 8192 forward 142 us on it vs cuBLAS's GEMV 95 us);
        so do the backward GEMMs of this many rows, and grad_weight of this many batch rows (an outer product,
        bound by writing dW: 134 us on wgmma at 1 x 8192 x 8192). Tensor-core plans; 0: none."""
        return GEMV_ROWS if self.narrow_tile and self.operand == FLOAT32 else 0  # (they read fp32 operands)

    @property
    def mma_template(self) -> str:
        """The mma.sync engine's template (templates/engines/mainloop_<this>.cuh.j2): TF32 for fp32 operands,
        m16n8k16 for bf16 / fp16 ones; both give the same accumulator fragment, so the epilogues are shared."""
        return "mma_tf32" if self.operand == FLOAT32 else "mma_half"

    @property
    def simt_forward_blocks(self) -> int:
        """Blocks per SM the SIMT forward kernel is compiled for on sm_90 (a 128-register cap at two): the
        two-stage epilogue after the split-K reduction spills 40-48 bytes under the cap, so it gets one."""
        return 1 if self.group_strategy == TWO_STAGE else 2

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
    def row_pool(self):
        """The pool over the features right after the Linear that the row kernels read (its StagePlan: a MaxPool1d,
        or an AvgPool1d of a 16-bit layer; they read its windows of z), or None."""
        return next((s for s in self.stages if s.role == "pool"), None)

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
        return self.spec.features // self.row_group_width if self.row_group_width else 0

    @property
    def gn_backward_one_pass(self) -> bool:
        """The GroupNorm backward is one pass over z and grad_out (a thread a channel, a group's two sums by
        shuffles, the parameters' column sums per chunk of rows): groups of a power of two up to 32 channels,
        whose lanes share a warp. Other widths keep the per-group and the per-column kernels (two passes)."""
        gw = self.group_width
        return self.group_strategy in (FRAGMENT, TILE_LOCAL, TWO_STAGE) and gw <= 32 and gw & (gw - 1) == 0

    @property
    def gn_backward_channels(self) -> int:
        """Adjacent channels of one group a thread of the one-pass GroupNorm backward owns, z, grad_out and dz moving
        as one vector of them: 8 (16 bytes) where z is 16-bit and the statistics fp32, so a row's statistics' loads,
        conversions, addresses and shuffles serve 8 values; 2 otherwise: fp32 z, float64 statistics (their
        registers), or stages with per-channel parameters (each adds a gradient a channel to a thread's registers
        and to the block's shared column sums, 8 KB a parameter at 8 channels). At most the group width. bf16
        headline, H200 (session 45 run 5), the kernel and its combine with the batch in one wave of chunks: 2
        channels 23.7 + 1.4 us, 4 (4 blocks an SM, one row in flight) 20.9 + 1.7, 8 19.4 + 1.6."""
        if not self.gn_backward_one_pass:
            return 1
        wide = self.statistics == FLOAT32 and self.operand.bytes == 2 and not self.chan_slots
        return min(8 if wide else 2, self.group_width)

    @property
    def gn_backward_rows(self) -> int:
        """Rows a thread of the one-pass GroupNorm backward loads at once (and the next ones while these are
        computed): 2, or 1 at 4 channels a thread, whose 2 spill at the 64-register cap of 4 blocks an SM."""
        return 1 if self.gn_backward_channels == 4 else 2

    @property
    def gn_backward_blocks(self) -> int:
        """Blocks an SM the one-pass GroupNorm backward is compiled for (__launch_bounds__: its register cap). It is
        bound by latency (loads, shuffles), not bytes: with fp32 statistics 4 blocks (64 registers, two rows in
        flight a thread) against 2 (102 registers, four rows): bf16 headline 43.4 -> 34.9 us, tf32 45.6 -> 41.8
        (H100; 3 blocks with 2-4 rows 36.8-37.7 and 45.0-45.7). float64 statistics keep 2: at 3 they spill (3xtf32
        47.4 -> 53.3 us; tests/gpu-results/h100-2026-11-28-s39, runs 1 and 3). 8 channels a thread take ~125
        registers: 2 (ptxas -v; at 3 blocks with one row in flight 12-116 bytes spill)."""
        if self.statistics != FLOAT32 or self.gn_backward_channels == 8:
            return 2
        return 4

    @property
    def stats_only_for_backward(self) -> bool:
        """The forward's statistics are written for backward alone (a fused GroupNorm's mean and rstd: its epilogue
        normalizes with values it holds), so a call that keeps nothing for backward skips them: at the bf16 headline
        their stores are 16 us of the forward's 231 (benchmarks/epilogue_variants.py). Row reductions and BatchNorm
        read theirs in the forward (a later pass, the running statistics)."""
        return self.group_strategy in (FRAGMENT, TILE_LOCAL, TWO_STAGE)

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
        pool = [op("avg_pool").short] if self.weight_pool else []
        return "_".join(["lin"] + pool + [op(s.kind).short for s in self.spec.chain])

    @property
    def rewrites(self) -> tuple:
        """The rewrites that removed stages, in words (Spec.folds)."""
        return self.spec.folds

    @property
    def precision(self) -> str:
        """How the GEMMs multiply: the spec's precision for fp32 operands, else the element type's own word."""
        return self.spec.arithmetic

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
        folded = f"; folded: {len(self.rewrites)} rewrite(s), see the explanation" if self.rewrites else ""
        return (f"{self.precision} {engine} GEMM, tile {self.tile.name} ({self.tile.threads} threads{tuned}); "
                f"{chain}{width}{groups[self.group_strategy]}{folded}")

    @property
    def seeded(self) -> bool:
        """A stage draws random numbers (dropout): the kernels read the call's seed, two 24-bit words (exact as
        float) in the runtime scalars after the stages' own (StageArgs::scalar[SEED_AT], [SEED_AT + 1])."""
        return any(op(s.kind).random for s in self.spec.chain)

    @property
    def input_residual(self) -> bool:
        """A stage adds the layer's input x: the kernels read x beside z (StageArgs::x)."""
        return any(s.kind == "input_residual" for s in self.spec.chain)

    @property
    def input_grad(self) -> bool:
        """...and some such add is not detached: backward's chain writes its gradient (StageArgs::dres, (M, N)
        float32), which the binding adds into dx after the grad_input GEMM."""
        return any(s.kind == "input_residual" and not s.param("detached") for s in self.spec.chain)

    @property
    def n_scalars(self) -> int:
        """Runtime scalars the kernels take: the stages' constants, then the seed's two words where seeded."""
        return len(self.scalar_slots) + (2 if self.seeded else 0)

    @property
    def scalar_chan_slots(self) -> tuple:
        """The per-channel parameter slots a scalar parameter fills (one value, read by every column; its
        gradient is the sum of its column sums)."""
        return tuple(k for k, (i, _) in enumerate(self.chan_slots) if self.spec.chain[i].param("scalar"))

    @property
    def float_grad_slots(self) -> tuple:
        """The per-channel slots whose column sums the kernels write in float32 rather than the element type: a
        scalar parameter's in a 16-bit layer, whose column sums are summed again (sum_columns), as the reference
        sums its products once and rounds once."""
        return self.scalar_chan_slots if self.element.bytes == 2 else ()

    @property
    def float_grad_mask(self) -> int:
        """float_grad_slots as the kernels' bit mask (bit k: slot k)."""
        return sum(1 << k for k in self.float_grad_slots)

    @property
    def kernel_uri(self) -> str:
        """Readable name of the compiled specialization; specs that share it share one build."""
        sizes = f"_i{self.spec.input_size}_h{self.spec.hidden_size}" if self.fixed_sizes else ""
        strategy = {FRAGMENT: "frag", TILE_LOCAL: "tile", TWO_STAGE: "2stage", NO_NORM: "ew",
                    ROWS: f"rows{self.row_team}", COLS: "cols"}[self.group_strategy]
        chain = "" if self.is_headline_chain else \
            f"_{self.chain_name}_{hashlib.sha256(repr(self.chain_structure).encode()).hexdigest()[:6]}"
        autocast = "ac" if self.converts else ""  # (float32 tensors, 16-bit operands: their own kernels)
        chain += "_apool" if self.weight_pool and self.is_headline_chain else ""  # (the pool's kernels)
        return (f"fg_{autocast}{self.precision}_{self.mainloop}_{self.tile.name}p{self.promote_every_k}_gw{self.group_width}"
                f"_{strategy}{chain}{sizes}")

    @property
    def module_name(self) -> str:
        """Name of the generated Python module: the spec in words plus a hash over everything rendered."""
        s = self.spec
        digest = hashlib.sha256((repr(self) + (repr(self.weight_pool) if self.weight_pool else "") +
                                 (repr(self.plane) if self.plane else "")).encode()).hexdigest()[:8]
        # (float32: names from before dtypes; autocast: "ac" and its type)
        kind = f"_ac{self.operand.short}" if self.converts else f"_{self.element.short}" if self.element.short else ""
        kind += "_f32out" if self.feeds_layer and self.converts else ""
        if not s.stages:
            return f"lin_gn_lrelu2_i{s.input_size}_h{s.hidden_size}_g{s.num_groups}{kind}_{digest}"
        return f"{self.chain_name}_i{s.input_size}_h{s.hidden_size}_g{s.num_groups}{kind}_{digest}"

    @property
    def schedule_engines(self) -> tuple:
        """Names of the launchers' schedule engines, in their enum's order: compensated SIMT, the main tile, the
        narrow tile, wgmma, the few-rows engines: forward, backward, grad_weight's outer product (names of engines
        the plan lacks are never reported)."""
        mma = self.mma_template.replace("half", self.operand.short) if self.wgmma or self.scaled_mma else self.mainloop
        main = f"{mma} {self.mma_tile.name}" if self.mma_tile else f"{self.mainloop} {self.tile.name}"
        narrow = f"{mma} narrow {self.narrow_tile.name}" if self.narrow_tile else "(no narrow tile)"
        wgmma = f"{self.mainloop} {self.tile.name}" if self.wgmma else "(no wgmma)"
        few = tuple(f"{name}_fp32 m{self.gemv_max_rows}" if self.gemv_max_rows else "(no few-rows engine)"
                    for name in ("gemv", "gemv_t", "outer"))
        planes = f"{self.mainloop} {self.mma_tile.name}" if self.scaled_mma else "(no planes engine)"
        return ("simt_fp32 compensated", main, narrow, wgmma) + few + (planes,)

    @property
    def variant_key(self) -> tuple:
        """The structural choices that change the shape of the emitted CUDA (not just its constants)."""
        return (self.precision, self.mainloop, self.tile, self.mma_tile, self.narrow_tile, self.group_strategy,
                self.fixed_sizes, self.chain_structure, self.converts)

    @property
    def arch_flags(self) -> tuple:
        """nvcc target flags the engine pins (empty: the build runtime picks the visible GPU's)."""
        return (WGMMA_GENCODE,) if self.wgmma else ()

    @property
    def wgmma(self) -> bool:
        """The plan's main engine is Hopper's wgmma (built for sm_90a only)."""
        return self.mainloop.startswith("wgmma")

    @property
    def persistent_forward(self) -> bool:
        """The unsplit wgmma forward runs persistent, a block an SM walking the output tiles through one ring, as the
        backward GEMMs do: the 16-bit engine's (the TF32 one runs a tile a block), with an epilogue that keeps to
        registers (none, rows, columns, the GroupNorm on the fragments). The tile-local and two-stage GroupNorms
        stage the tile in the ring's shared memory, which the producer is filling for the next tile."""
        return (self.wgmma and self.wgmma_template == "wgmma_half"
                and self.group_strategy not in (TILE_LOCAL, TWO_STAGE))

    @property
    def forward_staged_stores(self) -> bool:
        """The persistent forward's GroupNorm on the fragments writes its 16-bit out and z through the consumers'
        output buffers (stmatrix) and bulk tensor stores, a pass of rows at a time, where the copy engine can write
        them: from the fragments a warp store writes 2-byte pieces of 4 rows. fp32 outputs keep the fragment stores
        (staged by per-value stores in session 38 they ran no faster)."""
        return (self.persistent_forward and self.group_strategy == FRAGMENT
                and self.element.bytes == self.operand.bytes == self.output.bytes == 2)

    @property
    def wgmma_template(self) -> str:
        """The wgmma engine's template (templates/engines/mainloop_<this>.cuh.j2): TF32 for fp32 operands, k16
        for bf16 / fp16 ones; both give the same accumulator fragment."""
        return "wgmma_tf32" if self.operand == FLOAT32 and not self.scaled else "wgmma_half"


def plan(spec: Spec, *, fixed_sizes: bool = True, tile: Union[GemmTile, MmaTile, WgmmaTile] = None, gpu: str = None,
         arch: tuple = None, batch: int = None, group_strategy: str = None, rewrite: bool = True,
         feeds_layer: bool = False, scaled_planes: bool = None):
    """Choose how to compute `spec`.

    fixed_sizes bakes input/hidden into the kernels (lets the compiler drop bounds checks); test suites turn it
    off so that many random shapes share one build per group width. `tile` overrides the heuristic and picks
    the engine: a GemmTile for fp32; an MmaTile (sm_80+) or a WgmmaTile (sm_90a) for the tensor-core
    precisions. Without it, `gpu` (a device name) looks the tile up in the tuning table (`fusegen tune`; the
    entry for `batch`, else the largest batch tuned), and else `arch` (the GPU's compute capability) decides:
    wgmma on sm_90, mma.sync elsewhere. `group_strategy` forces a GroupNorm strategy (FRAGMENT, TILE_LOCAL,
    TWO_STAGE) where it can hold the groups, for benchmarks comparing them.

    The chain is folded first (plan/algebra.py: x + x and scales merged into one multiply). An average pool
    right after the Linear makes the Linear's weight and bias pooled alike (plan/weight_pool.py). A chain that sums or
    averages each row right after the GEMM through per-channel affine stages gets a RowSumPlan instead
    (plan/row_sum.py: a GEMV with the weight pre-reduced), unless a tile or group strategy is asked for (those
    choose the GEMM's engine). rewrite=False plans the chain as written. feeds_layer: the output is the next fused
    layer's input (a model of several GEMMs): under autocast it is handed on in float32 (Plan.feeds_layer).
    scaled_planes: for 3xtf32 on wgmma, True runs the 16-bit engine over two scaled fp16 planes an operand
    (3xfp16), False the TF32 engine; None: THREE_FP16 decides. (tf32 on wgmma always reads scaled planes.) On
    mma.sync (sm_80+), True gives 3xtf32's big GEMMs to engine Planes (3xfp16 on mma.sync); None: THREE_FP16_MMA.
    """
    from .. import __version__

    if not isinstance(spec, Spec):
        raise TypeError(f"plan() takes a fusegen.Spec, got {type(spec).__name__}")
    spec = fold(spec) if rewrite else spec
    # (not optional: an average pool over the features is generated only as the pooled Linear)
    pool, spec = split_weight_pool(spec)
    at = find_row_sum(spec) if rewrite and tile is None and group_strategy is None and pool is None else None
    if at is not None:
        return plan_row_sum(spec, at, fixed_sizes, __version__)
    # Groups of fewer than 8 channels often have a variance near 0, where y amplifies z's rounding by up to
    # 1/sqrt(eps) and single elements can only match the fp32 reference if z is as exact as its own. 3xTF32's
    # products carry ~2^-23 relative error (the small parts' rounding) where an FFMA's are exact: measured, a
    # 3-channel layer (input 3001) missed allclose(1e-4) on 2 elements. Those layers stay on the FFMA engine.
    element, operand = dtype(spec.dtype), dtype(spec.operand)
    half = operand != FLOAT32  # bf16 / fp16 operands: the m16n8k16 / k16 engines of their own type
    stages, gn_index, scalar_slots, chan_slots = plan_chain(spec)
    gw = spec.group_width if spec.has_group_norm else 1
    # (without a GroupNorm nothing amplifies the GEMM's rounding: tensor cores at any width; half-precision
    # operands are already rounded, and their products are exact in fp32)
    tensor_cores = half or spec.precision == TF32 or (spec.precision == TF32X3 and (gw >= TINY_GROUP or
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
    three_fp16 = _three_fp16(spec, half, scaled_planes, THREE_FP16)
    wgmma_tile = HALF_WGMMA_TILE if half or spec.precision == TF32 else THREE_FP16_TILE if three_fp16 else WgmmaTile()
    if tile is None:
        sm90 = arch is not None and tuple(arch) == WGMMA_ARCH
        tile = (wgmma_tile if sm90 else HALF_TILE if half else MmaTile()) if tensor_cores else GemmTile()
    # tf32 on wgmma: scaled fp16 planes (SCALED_PLANE), on the 16-bit engine's tile unless one was tuned for them
    # (an entry timed on the TF32 engine's mainloop does not carry over); 3xtf32 too where three_fp16: two
    # planes an operand
    three_fp16_mma = _three_fp16(spec, half, scaled_planes, THREE_FP16_MMA)
    scaled = not half and ((spec.precision == TF32 or three_fp16) and isinstance(tile, WgmmaTile) or
                           three_fp16_mma and type(tile) is MmaTile)
    plane = SCALED_PLANE if scaled else None
    mainloop = ENGINES[type(tile)]
    if half:  # the engine of the operands' own type (a 16-bit stage is the fp32 engine's size in bytes)
        mainloop = mainloop.replace("tf32", operand.short)
    if plane is not None:  # (s: scaled; 3x: two planes, three products)
        mainloop = mainloop.replace("tf32", ("3x" if spec.precision == TF32X3 else "") + plane.short + "s")
    # A tuned wgmma tile timed on another mainloop does not carry over ("": an entry from before tune recorded it,
    # timed on the unscaled engines)
    timed_on = tuned_mainloop(spec, gpu, batch) if tuned_for else ""
    if tuned_for and isinstance(tile, WgmmaTile) and timed_on != mainloop and (timed_on or plane is not None):
        tile, tuned_for = wgmma_tile, ""
    planes = _plane_count(spec.precision, scaled)  # (Plan.pieces)
    split = spec.precision != TF32 and not half  # (the 3xTF32 wgmma engine stages two planes of its operand)
    need = (tile.plane_smem_bytes(planes) if planes else tile.smem_bytes(split)) if isinstance(tile, WgmmaTile) else 0
    if planes == 2 and tile.block_m > 128:
        raise ValueError(f"tile {tile.name}: the 3xfp16 engine holds its accumulators and their fp32 totals in "
                         f"registers, {tile.block_m // 2} of each a thread at {tile.block_m} rows: at most 128 rows")
    if isinstance(tile, WgmmaTile) and need > tile.SMEM_LIMIT:
        raise ValueError(f"tile {tile.name} needs {need} bytes of shared memory "
                         f"in {spec.precision}, over the {tile.SMEM_LIMIT} a block can have: fewer stages")
    # Compensated small GEMMs always run on the SIMT engine, on tiles as wide (one group strategy: groups lie
    # along the columns). The fallbacks' tiles hold at most 128 x 128 outputs; a wgmma tile may have more rows
    # (wgmma's n up to 256: 256 x 128 reads a quarter fewer operand bytes a flop than 128 x 128).
    rows = min(tile.block_m, FALLBACK_MAX_ROWS)
    simt_tile = tile if not tensor_cores else GemmTile(block_m=rows, block_n=tile.block_n)
    mma_tile = None if not tensor_cores else (tile if isinstance(tile, MmaTile) else
                                              MmaTile(block_m=rows, block_n=tile.block_n,
                                                      block_k=HALF_TILE.block_k if half else MmaTile.block_k))
    # Small batches: 32-row tiles (two m16 mma rows a warp) of the same width and warp columns, so a row's
    # columns sit in the same lanes (the fragment GroupNorm fits both) and BN is shared by every engine.
    narrow_tile = None if not tensor_cores else MmaTile(block_m=NARROW_ROWS, block_n=mma_tile.block_n,
                                                        block_k=mma_tile.block_k, warps_m=1,
                                                        warps_n=mma_tile.warps_n, stages=mma_tile.stages)
    # FRAGMENT: mma.sync's fragment gives a quad of lanes a row's columns (a group must fit a warp's width);
    # wgmma's gives lanes 4 apart a row's 16 columns of a warp. Beside wgmma the mma.sync fallback must fit too.
    if runs_on_rows(spec):
        strategy, pieces = ROWS, 1
    elif spec.column_norm >= 0:
        strategy, pieces = COLS, 1
    elif gn_index < 0:
        strategy, pieces = NO_NORM, 1
    else:
        fits = {FRAGMENT: tensor_cores and gw & (gw - 1) == 0 and mma_tile.warp_n % gw == 0 and
                (not isinstance(tile, WgmmaTile) or gw <= 16),
                TILE_LOCAL: tile.block_n % gw == 0, TWO_STAGE: True}
        strategy = group_strategy or next(s for s in (FRAGMENT, TILE_LOCAL, TWO_STAGE) if fits[s])
        if not fits.get(strategy):
            raise ValueError(f"group strategy {strategy!r} cannot hold groups of {gw} channels on tile {tile.name}; "
                             f"these can: {', '.join(s for s, ok in fits.items() if ok)}")
        # TWO_STAGE: a run of gw columns starting anywhere inside a tile touches at most this many tiles
        pieces = (gw + 2 * tile.block_n - 2) // tile.block_n if strategy == TWO_STAGE else 1
    if group_strategy and group_strategy != strategy:
        raise ValueError(f"group strategy {group_strategy!r} is for GroupNorm chains; this one plans {strategy!r}")
    # Two-level summation: each thread's running sums restart every 64 of the reduction and are added into
    # separate fp32 totals. For fp32 FFMA the rounding error then grows with K/64 + 64 rather than K (at least
    # as accurate as cuBLAS's split reductions, ~5% more instructions). For 3xTF32 it is what makes the result
    # fp32-accurate at all: the tensor cores' own long accumulation loses bits (h200_baselines: 2.6e-4 over all
    # of K=8192, 4.7e-5 promoted every 64). TF32's own rounding (~3e-4) dwarfs it: no totals, fewer registers.
    # 16-bit operands on wgmma: their rounding (~2^-9 a product's inputs) dwarfs the long accumulation's as
    # TF32's does, and eager's cuBLAS accumulates on the same tensor cores: no totals, and no wait for the products
    # at each promotion (the bar, the fp64 error no more than 1.5x eager's, is tests/test_gpu_dtypes).
    promote = 0 if spec.precision == TF32 or (half and isinstance(tile, WgmmaTile)) else 64
    for t in (tile, mma_tile, narrow_tile):
        if promote and t is not None and promote % t.block_k:
            raise ValueError(f"block_k ({t.block_k}) must divide the promotion interval ({promote})")
    computes = {op(s.kind).compute for s in spec.chain} or {FLOAT32.name}
    accumulates = {op(s.kind).accumulate for s in spec.chain if op(s.kind).accumulate} or {"float64"}
    if len(computes) > 1 or len(accumulates) > 1:
        raise SpecError(f"the chain's ops compute in {sorted(computes)} and accumulate in {sorted(accumulates)}: "
                        "one epilogue computes in one type")
    # The GroupNorm's statistics and backward projection in fp32 where the GEMMs read 16-bit operands: z and dz
    # are rounded to 8 or 11 bits, which dwarfs fp32's rounding of a group's sums (PyTorch's own 16-bit GroupNorm
    # accumulates in fp32), while in double they bound the forward's epilogue and the backward's pass (shuffles,
    # conversions and fp64 arithmetic: 40 us a tile of 256 x 128 at the headline; docs/perf-notes.md v0.15).
    # fp32 layers keep double: their backward's projection needs it (templates/epilogue/gn_backward.cuh.j2); but
    # tf32 on scaled fp16 planes, whose z carries TF32's 11-bit rounding as fp16's does, computes them in fp32 too.
    statistics = FLOAT32 if half or planes == 1 else dtype(accumulates.pop())
    # Tensor-core plans sum every GEMM on tensor cores: 3xTF32 with fp32 totals every 64 of K and split-K
    # partials added in a fixed order meet the accuracy bar at every size (docs/perf-notes.md v0.8, measured);
    # the FFMA plans (fp32, 3xtf32 groups under TINY_GROUP) and tf32 plans with such groups (TF32's rounding of
    # z, amplified by a near-constant group, missed even tf32's bar at batch 1) keep the compensated mainloop
    # for GEMMs up to 2^28.
    # Half-precision plans have none: their operands are rounded to 8 or 11 bits already (the reference's own
    # GEMM rounds the same way), so compensating the fp32 sums would buy nothing measurable.
    tiny_groups = spec.has_group_norm and gw < TINY_GROUP and not half
    exact_max_macs = 0 if tensor_cores and not tiny_groups else 1 << 28
    exact_dx_max_input = EXACT_DX_MAX_INPUT if tensor_cores and spec.has_group_norm and not half else 0
    exact_max_tile_macs = EXACT_MAX_TILE_MACS if tensor_cores and not tiny_groups and not half else 0
    return Plan(spec=spec, mainloop=mainloop, tile=tile, simt_tile=simt_tile, mma_tile=mma_tile,
                narrow_tile=narrow_tile, narrow_max_rows=2 * NARROW_ROWS if tensor_cores else 0,
                exact_dx_max_input=exact_dx_max_input, exact_max_tile_macs=exact_max_tile_macs,
                group_strategy=strategy, promote_every_k=promote, exact_max_macs=exact_max_macs,
                lanes_per_group=min(32, _next_pow2(gw)), pieces_per_group=pieces,
                fixed_sizes=fixed_sizes, fusegen_version=__version__, stages=stages, gn_index=gn_index,
                scalar_slots=scalar_slots, chan_slots=chan_slots, tuned_for=tuned_for,
                element=element, compute=dtype(computes.pop()), statistics=statistics, operand=operand,
                output=operand if autocast_values(spec)[-1] and not feeds_layer else element, weight_pool=pool,
                feeds_layer=feeds_layer, plane=plane)
