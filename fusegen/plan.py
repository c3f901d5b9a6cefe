"""The planner: decides GEMM tiles and the GroupNorm strategy for a Spec. Templates only express a Plan."""
import dataclasses
import hashlib

from .spec import Spec

__all__ = ["GemmTile", "Plan", "plan", "TILE_LOCAL", "TWO_STAGE"]

TILE_LOCAL = "tile_local"  # a group fits in the output tile: statistics in the GEMM epilogue, output written once
TWO_STAGE = "two_stage"  # a group spans tiles: partial statistics in the epilogue, then a normalize kernel


@dataclasses.dataclass(frozen=True)
class GemmTile:
    """A thread block computes block_m x block_n outputs; each thread an 8x8 micro tile (two 4x4 halves)."""
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
class Plan:
    spec: Spec
    mainloop: str  # template name: mainloop_<mainloop>.cuh.j2
    tile: GemmTile  # used by the forward GEMM and both backward GEMMs
    group_strategy: str  # TILE_LOCAL or TWO_STAGE
    promote_every_k: int  # add the running accumulators into a separate fp32 sum every this many k (0: never)
    # GEMMs of at most this many multiply-adds (checked at run time) are summed compensated (Dot2), with dz
    # carried as an fp32 pair into the backward GEMMs: for small GEMMs a few ill-conditioned values decide the
    # error, and fp32 sums (or an fp32-rounded dz) are one unlucky draw from 4x cuBLAS's.
    exact_max_macs: int
    lanes_per_group: int  # a sub-warp of this many lanes owns one (row, group) in the per-group stages
    pieces_per_group: int  # TWO_STAGE: most output tiles one group can touch (partial-statistics slots)
    fixed_sizes: bool  # input and hidden sizes are compile-time constants (the batch never is)
    fusegen_version: str

    @property
    def group_width(self) -> int:
        return self.spec.group_width

    @property
    def summary(self) -> str:
        groups = ("group statistics in the GEMM epilogue (a group fits the tile)" if self.group_strategy == TILE_LOCAL
                  else f"two-stage: partial statistics in the GEMM epilogue, then a normalize kernel "
                       f"(a group of {self.group_width} spans up to {self.pieces_per_group} tiles)")
        return (f"{self.mainloop} GEMM, tile {self.tile.block_m}x{self.tile.block_n}x{self.tile.block_k} "
                f"({self.tile.threads} threads); group width {self.group_width}: {groups}")

    @property
    def kernel_uri(self) -> str:
        """Readable name of the compiled specialization; specs that share it share one build."""
        sizes = f"_i{self.spec.input_size}_h{self.spec.hidden_size}" if self.fixed_sizes else ""
        strategy = "tile" if self.group_strategy == TILE_LOCAL else "2stage"
        return f"fg_{self.mainloop}_{self.tile.name}p{self.promote_every_k}_gw{self.group_width}_{strategy}{sizes}"

    @property
    def module_name(self) -> str:
        """Name of the generated Python module: the spec in words plus a hash over everything rendered."""
        s = self.spec
        digest = hashlib.sha256(repr(self).encode()).hexdigest()[:8]
        return f"lin_gn_lrelu2_i{s.input_size}_h{s.hidden_size}_g{s.num_groups}_{digest}"

    @property
    def variant_key(self) -> tuple:
        """The structural choices that change the shape of the emitted CUDA (not just its constants)."""
        return (self.mainloop, self.tile, self.group_strategy, self.fixed_sizes)


def _next_pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def plan(spec: Spec, *, fixed_sizes: bool = True, tile: GemmTile = None) -> Plan:
    """Choose how to compute `spec`.

    fixed_sizes bakes input/hidden into the kernels (lets the compiler drop bounds checks); test suites turn it
    off so that many random shapes share one build per group width.
    """
    from . import __version__

    if not isinstance(spec, Spec):
        raise TypeError(f"plan() takes a fusegen.Spec, got {type(spec).__name__}")
    tile = tile or GemmTile()
    gw = spec.group_width
    if tile.block_n % gw == 0:
        strategy, pieces = TILE_LOCAL, 1
    else:
        strategy = TWO_STAGE
        # a run of gw columns starting anywhere inside a tile touches at most this many tiles
        pieces = (gw + 2 * tile.block_n - 2) // tile.block_n
    # Two-level summation: each thread's FMA chain restarts every PROMOTE_K of the reduction and is added into
    # a total kept in shared memory. The rounding error then grows with K/64 + 64 rather than K, which keeps our
    # fp32 GEMM at least as accurate as cuBLAS's (split) reductions at every K, for ~5% more instructions.
    promote = 64 if 64 % tile.block_k == 0 else 0
    return Plan(spec=spec, mainloop="simt_fp32", tile=tile, group_strategy=strategy, promote_every_k=promote,
                exact_max_macs=1 << 28,
                lanes_per_group=min(32, _next_pow2(gw)), pieces_per_group=pieces,
                fixed_sizes=fixed_sizes, fusegen_version=__version__)
