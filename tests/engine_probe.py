"""A GEMM engine on its own: the engine's template rendered with the plan's constants and a probe kernel that runs
its mainloop over every operand layout and stores the accumulator fragment, so an engine can be compiled (CPU)
and checked against fp64 (GPU) before any module uses it. Used by test_compile and test_gpu_engines."""
import dataclasses

import fusegen
from fusegen.codegen.render import _environment
from fusegen.dtypes import dtype

# (A k-fast, B k-fast, 16-byte copies): the forward (both k-fast), grad_input (dz k-fast, W n-fast) and
# grad_weight (both k-slow) layouts, each with and without 16-byte copies where the engine has them
LAYOUTS = ((True, True, True), (True, False, True), (False, False, True), (True, True, False),
           (True, False, False), (False, False, False), (False, True, False))
ENGINES = ("Mma", "MmaNarrow")  # the engine template's names for its two tiles
# The half template's two-plane form on the plan's tile (3xFP16: each operand hi and lo, stacked: lo's plane
# follows hi's), probed after ENGINES (variant len(ENGINES) * len(LAYOUTS) + layout)
PLANES_ENGINE = "Mma3"

PROBE = r"""
namespace fg {
{planes_engine}
template <class E, class = void> constexpr int PLANES_OF = 1;  // (the fp32 engine has no PLANES)
template <class E> constexpr int PLANES_OF<E, std::void_t<decltype(E::PLANES)>> = E::PLANES;
// C (M x N, row-major fp32) = A B with A(m, k) = A[m a_sm + k a_sk], B(k, n) = B[k b_sk + n b_sn]: A is M x K
// row-major when k-fast, else K x M; B is N x K row-major (nn.Linear's weight) when k-fast, else K x N.
template <class E, bool AK, bool BKF, bool VEC>
__global__ void __launch_bounds__(E::THREADS) probe(const elem_t* A, const elem_t* B, float* C, int M, int N, int K) {
  extern __shared__ float smem[];
  float acc[E::ACC_M][E::ACC_N];
  const int m0 = blockIdx.x * E::TILE_M, n0 = blockIdx.y * BN;
  E::template mainloop<AK, BKF, false, false, VEC>(acc, smem, A, AK ? K : 1, AK ? 1 : M, B, BKF ? 1 : N,
                                                   BKF ? K : 1, M, N, K, m0, n0);
  for (int i = 0; i < E::ACC_M; ++i)
    for (int j = 0; j < E::ACC_N; ++j) {
      const int r = m0 + E::row(i), c = n0 + E::col(j);
      if (r < M && c < N) C[(long long)r * N + c] = acc[i][j];
    }
}

// (a probe of a two-plane engine takes A and B as their planes stacked: lo's plane follows hi's)
template <class E, bool AK, bool BKF, bool VEC>
__global__ void __launch_bounds__(E::THREADS) probe_planes(const elem_t* A, const elem_t* B, float* C, int M, int N,
                                                           int K) {
  extern __shared__ float smem[];
  float acc[E::ACC_M][E::ACC_N];
  const int m0 = blockIdx.x * E::TILE_M, n0 = blockIdx.y * BN;
  E::template mainloop<AK, BKF, false, false, VEC>(acc, smem, A, AK ? K : 1, AK ? 1 : M, B, BKF ? 1 : N,
                                                   BKF ? K : 1, M, N, K, m0, n0, (long long)M * K, (long long)N * K);
  for (int i = 0; i < E::ACC_M; ++i)
    for (int j = 0; j < E::ACC_N; ++j) {
      const int r = m0 + E::row(i), c = n0 + E::col(j);
      if (r < M && c < N) C[(long long)r * N + c] = acc[i][j];
    }
}

template <class E, class Kernel>
static const char* launch_probe(Kernel kernel, const void* A, const void* B, float* C, int M, int N, int K) {
  const int bytes = E::SMEM_FLOATS * 4;
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (e != cudaSuccess) return cudaGetErrorString(e);
  const dim3 grid((M + E::TILE_M - 1) / E::TILE_M, (N + BN - 1) / BN);
  kernel<<<grid, E::THREADS, bytes>>>(static_cast<const elem_t*>(A), static_cast<const elem_t*>(B), C, M, N, K);
  e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

template <class E, bool AK, bool BKF, bool VEC>
static const char* run(const void* A, const void* B, float* C, int M, int N, int K) {
  if constexpr (PLANES_OF<E> == 2) return launch_probe<E>(probe_planes<E, AK, BKF, VEC>, A, B, C, M, N, K);
  else return launch_probe<E>(probe<E, AK, BKF, VEC>, A, B, C, M, N, K);
}
}  // namespace fg

// variant = engine * LAYOUTS + layout (tests/engine_probe.py's order)
const char* fg_probe_run(int variant, const void* A, const void* B, float* C, int M, int N, int K) {
  switch (variant) {
{cases}
  }
  return "no such probe variant";
}
"""


def probe_plan(element: str):
    """The plan whose constants the engine is rendered with: a tensor-core plan (BN 128, promotion every 64),
    the element swapped in (the engine's own tile: the 16-bit plans' k64 default is tested through the modules).
    scaled_planes=False: the 3xtf32 plan's fp32 operands, as a 16-bit plan's are (sm_80's default reads planes)."""
    half = dtype(element)
    base = fusegen.plan(fusegen.Spec(1024, 1024, 32), arch=(8, 0), scaled_planes=False)
    return dataclasses.replace(base, element=half, operand=half, output=half)


def _probe_cases(engines) -> str:
    cases = []
    for e, engine in enumerate(engines):
        for k, (ak, bk, vec) in enumerate(LAYOUTS):
            flags = ", ".join("true" if f else "false" for f in (ak, bk, vec))
            cases.append(f"    case {e * len(LAYOUTS) + k}: return fg::run<fg::{engine}, {flags}>(A, B, C, M, N, K);")
    return "\n".join(cases)


def probe_source(element: str) -> str:
    """The 16-bit mma.sync engine: its two tiles (ENGINES), then its two-plane form on the plan's tile
    (PLANES_ENGINE)."""
    env = _environment()
    p = probe_plan(element)
    t = p.mma_tile
    planes = (f"using {PLANES_ENGINE} = MmaHalfEngine<{t.block_m}, {t.warps_m}, {t.warps_n}, {t.block_k}, "
              f"{t.stages}, 2>;")
    return "\n".join(["#include <cuda_runtime.h>", "#include <cstring>", "#include <type_traits>",
                      env.get_template("types.h.j2").render(plan=p), env.get_template("common.cuh.j2").render(plan=p),
                      env.get_template("engines/mainloop_mma_half.cuh.j2").render(plan=p),
                      PROBE.replace("{planes_engine}", planes).replace("{cases}",
                                                                       _probe_cases(ENGINES + (PLANES_ENGINE,)))])


def tf32_probe_source() -> str:
    """The fp32 mma.sync engine of the 3xtf32 plan for sm_80 (3xTF32: each operand split in registers), its two
    tiles (ENGINES): the baseline a two-plane fp16 engine is measured against."""
    env = _environment()
    p = fusegen.plan(fusegen.Spec(1024, 1024, 32), arch=(8, 0), scaled_planes=False)
    assert p.mainloop == "mma_tf32" and p.precision == "3xtf32", p.summary
    return "\n".join(["#include <cuda_runtime.h>", "#include <cstring>", "#include <type_traits>",
                      env.get_template("types.h.j2").render(plan=p), env.get_template("common.cuh.j2").render(plan=p),
                      env.get_template("engines/mainloop_mma_tf32.cuh.j2").render(plan=p),
                      PROBE.replace("{planes_engine}", "").replace("{cases}", _probe_cases(ENGINES))])


BINDING = r"""
#include <torch/extension.h>

#include <limits>

const char* fg_probe_run(int variant, const void* A, const void* B, float* C, int M, int N, int K);
torch::Tensor run(int64_t variant, torch::Tensor A, torch::Tensor B, int64_t M, int64_t N, int64_t K) {
  torch::Tensor C = torch::full({M, N}, std::numeric_limits<float>::quiet_NaN(), A.options().dtype(torch::kFloat));
  const char* err = fg_probe_run((int)variant, A.data_ptr(), B.data_ptr(), C.data_ptr<float>(), (int)M, (int)N, (int)K);
  TORCH_CHECK(err == nullptr, "probe failed: ", err);
  return C;
}
"""


WGMMA_PROBE = r"""
namespace fg {
// C (rows x cols, row-major fp32) = P R^T with P rows x K row-major (P_K_FAST) or K x rows row-major (row stride
// rows rounded up to 8), and R cols x K row-major (R_K_FAST) or K x cols row-major: the 16-bit wgmma engine's
// mainloop alone, its fragment stored through row() / col().
template <bool R_K_FAST, bool P_K_FAST>
__global__ void __launch_bounds__(Wgmma::THREADS, 1) wgmma_probe(const __grid_constant__ CUtensorMap p,
                                                                 const __grid_constant__ CUtensorMap r, float* C,
                                                                 int rows, int cols, int K) {
  extern __shared__ __align__(16) float smem[];
  const int m0 = blockIdx.x * Wgmma::TILE_M, n0 = blockIdx.y * BN;
  const Wgmma::Ring q = Wgmma::ring(smem);
  if (threadIdx.x >= Wgmma::EPI_THREADS) {
    Wgmma::produce<R_K_FAST, P_K_FAST>(q, p, p, r, 0, K, m0, n0);
  } else {
    float acc[Wgmma::ACC_M][Wgmma::ACC_N];
    Wgmma::consume<R_K_FAST, P_K_FAST>(q, acc, K);
    for (int i = 0; i < Wgmma::ACC_M; ++i)
      for (int j = 0; j < Wgmma::ACC_N; ++j) {
        const int m = m0 + Wgmma::row(i), n = n0 + Wgmma::col(j);
        if (m < rows && n < cols) C[(long long)m * cols + n] = acc[i][j];
      }
  }
}

template <bool R_K_FAST, bool P_K_FAST>
static const char* wgmma_run(const elem_t* P, const elem_t* R, float* C, int rows, int cols, int K) {
  CUtensorMap maps[2];
  if (const char* err = P_K_FAST ? tensor_map(&maps[0], P, rows, K, K, Wgmma::TILE_M)
                                 : tensor_map(&maps[0], P, K, rows, (rows + 7) / 8 * 8, Wgmma::BK)) return err;
  if (const char* err = R_K_FAST ? tensor_map(&maps[1], R, cols, K, K, BN) : tensor_map(&maps[1], R, K, cols, cols, Wgmma::BK))
    return err;
  const int bytes = Wgmma::SMEM_FLOATS * 4;
  cudaError_t e = cudaFuncSetAttribute(wgmma_probe<R_K_FAST, P_K_FAST>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       bytes);
  if (e != cudaSuccess) return cudaGetErrorString(e);
  const dim3 grid((rows + Wgmma::TILE_M - 1) / Wgmma::TILE_M, (cols + BN - 1) / BN);
  wgmma_probe<R_K_FAST, P_K_FAST><<<grid, Wgmma::THREADS, bytes>>>(maps[0], maps[1], C, rows, cols, K);
  e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}
}  // namespace fg

// variant bit 0: R column-fast (else k-fast); bit 1: P row-contiguous, K x M (else k-fast)
const char* fg_probe_run(int variant, const void* A, const void* B, float* C, int M, int N, int K) {
  const auto* P = static_cast<const fg::elem_t*>(A);
  const auto* R = static_cast<const fg::elem_t*>(B);
  switch (variant) {
    case 0: return fg::wgmma_run<true, true>(P, R, C, M, N, K);
    case 1: return fg::wgmma_run<false, true>(P, R, C, M, N, K);
    case 2: return fg::wgmma_run<true, false>(P, R, C, M, N, K);
    default: return fg::wgmma_run<false, false>(P, R, C, M, N, K);
  }
}
"""


def wgmma_probe_plan(element: str, block_m: int = 128):
    """The plan whose constants the wgmma probe takes: a tile of block_m P rows x 128 R columns."""
    p = fusegen.plan(fusegen.Spec(1024, 1024, 32, dtype=element), tile=fusegen.WgmmaTile(block_m=block_m))
    assert p.wgmma_template == "wgmma_half", p.summary
    return p


def wgmma_probe_source(element: str, block_m: int = 128) -> str:
    """The 16-bit wgmma engine's mainloop alone (sm_90a), with a plan's constants (wgmma_probe_plan), P and R each
    in either layout, through the same tensor maps the launchers build."""
    env = _environment()
    p = wgmma_probe_plan(element, block_m)
    return "\n".join(["#include <cuda_runtime.h>", "#include <cstring>",
                      env.get_template("types.h.j2").render(plan=p), env.get_template("common.cuh.j2").render(plan=p),
                      env.get_template("engines/wgmma_pipeline.cuh.j2").render(plan=p),
                      env.get_template("engines/mainloop_wgmma_half.cuh.j2").render(plan=p), WGMMA_PROBE])
