"""The GEMM engines: a tile class for each (its shape, the checks it must pass, its threads and shared memory) and
ENGINES, tile type -> mainloop template (templates/engines/mainloop_<mainloop>.cuh.j2)."""
import dataclasses

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
        """Pipeline buffers of fp32 operands (the larger of the k-major and the m/n-major layout of each)."""
        per_stage = sum(max(e * (self.block_k + 4), self.block_k * (e + 8)) for e in (self.block_m, self.block_n))
        return 4 * self.stages * per_stage

    def half_smem_bytes(self) -> int:
        """The same for the 16-bit engine (its k-major rows padded by 8 elements)."""
        per_stage = sum(max(e * (self.block_k + 8), self.block_k * (e + 8)) for e in (self.block_m, self.block_n))
        return 2 * self.stages * per_stage

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

    def plane_smem_bytes(self, pieces: int) -> int:
        """The same for the 16-bit engine over `pieces` planes of each operand (64 of k a stage, 2 bytes each)."""
        return 1024 + self.stages * pieces * 2 * 64 * (self.block_m + self.block_n) + 16 * self.stages

    @property
    def name(self) -> str:
        return f"m{self.block_m}n{self.block_n}s{self.stages}"


ENGINES = {GemmTile: "simt_fp32", MmaTile: "mma_tf32", WgmmaTile: "wgmma_tf32"}  # tile type -> mainloop
