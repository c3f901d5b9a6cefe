"""GEMM engines on their own on the GPU (tests/engine_probe.py): the bf16 / fp16 mma.sync engine's mainloop over
every operand layout and both tiles against fp64, on awkward sizes (1, primes, not multiples of the tile or of
16 bytes where the layout allows) and several input distributions, the output NaN-filled first so an unwritten
element shows. The bar: fp32 accumulation of exact products, promoted every 64 of k: at most 2^-24 relative to
|A| |B| per addition on each of the K / 64 + 64 (+ 16 slack) additions a sum passes through, elementwise."""
import pytest
import torch

from engine_probe import BINDING, ENGINES, LAYOUTS, PLANES_ENGINE, probe_source
from helpers import gpu_available

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="needs a CUDA GPU and nvcc")]

DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16}
_BUILT = {}


def _probe(element):
    if element not in _BUILT:
        from torch.utils.cpp_extension import load_inline

        major, minor = torch.cuda.get_device_capability()
        _BUILT[element] = load_inline(f"fusegen_engine_probe_{element}", BINDING, cuda_sources=probe_source(element),
                                      functions=["run"], extra_cuda_cflags=["-O3", f"-arch=sm_{major}{minor}"])
    return _BUILT[element]


def _draw(shape, dist, gen):
    x = torch.randn(shape, generator=gen, dtype=torch.float64)
    if dist == "uniform":
        x = torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1
    elif dist == "lognormal":
        x = x.exp() * torch.sign(torch.randn(shape, generator=gen, dtype=torch.float64))
    elif dist == "row_scales":
        x = x * torch.exp2(torch.randint(-8, 9, (shape[0], 1), generator=gen).double())
    return x


@pytest.mark.parametrize("element", sorted(DTYPES))
@pytest.mark.parametrize("engine", range(len(ENGINES)), ids=ENGINES)
@pytest.mark.parametrize("layout", range(len(LAYOUTS)), ids=["A%s-B%s-%s" % (
    "k" if a else "m", "k" if b else "n", "vec" if v else "scalar") for a, b, v in LAYOUTS])
@pytest.mark.parametrize("dist", ["normal", "uniform", "lognormal", "row_scales"])
def test_half_engine_matches_fp64(element, engine, layout, dist):
    torch_dtype = DTYPES[element]
    a_kfast, b_kfast, vec = LAYOUTS[layout]
    # 16-byte copies need every contiguous row to start 16-byte aligned: multiples of 8 elements there
    sizes = [(64, 128, 64), (200, 136, 1032), (8, 256, 4096)] if vec else \
        [(1, 1, 1), (37, 131, 67), (129, 257, 130), (3, 7, 1001)]
    gen = torch.Generator().manual_seed(7 * layout + engine)
    for m, n, k in sizes:
        a = _draw((m, k), dist, gen).to(torch_dtype)
        w = _draw((n, k), dist, gen).to(torch_dtype)
        ref = a.double() @ w.double().t()
        bound = 2.0 ** -24 * (k / 64 + 80) * (a.double().abs() @ w.double().abs().t()) + 1e-30
        A = (a if a_kfast else a.t()).contiguous().cuda()
        B = (w if b_kfast else w.t()).contiguous().cuda()
        c = _probe(element).run(engine * len(LAYOUTS) + layout, A, B, m, n, k).double().cpu()
        assert not c.isnan().any(), f"unwritten outputs at {(m, n, k)}"
        err = (c - ref).abs()
        worst = (err / bound).max().item()
        assert worst <= 1.0, f"{element} {ENGINES[engine]} {LAYOUTS[layout]} {dist} {(m, n, k)}: error {worst:.2f}x the bar"


def _planes(x):
    """x (fp64) as fp16 hi and lo (lo the rest, rounded), stacked: (2, *x.shape), and the value they hold."""
    hi = x.half()
    lo = (x - hi.double()).half()
    return torch.stack([hi, lo]), hi.double() + lo.double()


@pytest.mark.parametrize("layout", range(len(LAYOUTS)), ids=["A%s-B%s-%s" % (
    "k" if a else "m", "k" if b else "n", "vec" if v else "scalar") for a, b, v in LAYOUTS])
@pytest.mark.parametrize("dist", ["normal", "uniform", "lognormal", "row_scales"])
def test_two_plane_engine_sums_three_products(layout, dist):
    """The 16-bit mma.sync engine's two-plane form (3xFP16 on sm_80+: tests/engine_probe.py's PLANES_ENGINE), every
    operand layout, awkward sizes: C = lo(A) hi(B) + hi(A) lo(B) + hi(A) hi(B). Against fp64 of the planes' values,
    less lo x lo (left out by design); the bar: the tensor cores' accumulation of three products a k16 step over
    each promotion interval and the totals' adds (as the one-plane test's, times three), plus lo x lo's size. A
    dropped or doubled small product misses it by ~2^-11 relative."""
    a_kfast, b_kfast, vec = LAYOUTS[layout]
    sizes = [(64, 128, 64), (200, 136, 1032), (8, 256, 4096)] if vec else \
        [(1, 1, 1), (37, 131, 67), (129, 257, 130), (3, 7, 1001)]
    gen = torch.Generator().manual_seed(11 * layout + 5)
    variant = len(ENGINES) * len(LAYOUTS) + layout
    for m, n, k in sizes:
        (ap, a), (wp, w) = _planes(_draw((m, k), dist, gen)), _planes(_draw((n, k), dist, gen))
        lo_lo = ap[1].double().abs() @ wp[1].double().abs().t()
        ref = a @ w.t() - ap[1].double() @ wp[1].double().t()
        bound = 2.0 ** -24 * 3 * (k / 64 + 80) * (a.abs() @ w.abs().t()) + lo_lo + 1e-30
        A = (ap if a_kfast else ap.transpose(1, 2)).contiguous().cuda()
        B = (wp if b_kfast else wp.transpose(1, 2)).contiguous().cuda()
        c = _probe("float16").run(variant, A, B, m, n, k).double().cpu()
        assert not c.isnan().any(), f"unwritten outputs at {(m, n, k)}"
        worst = ((c - ref).abs() / bound).max().item()
        assert worst <= 1.0, f"{PLANES_ENGINE} {LAYOUTS[layout]} {dist} {(m, n, k)}: error {worst:.2f}x the bar"


_WGMMA = {}


@pytest.mark.skipif(not gpu_available() or torch.cuda.get_device_capability() != (9, 0),
                    reason="needs an sm_90 GPU (wgmma) and nvcc")
@pytest.mark.parametrize("element", sorted(DTYPES))
@pytest.mark.parametrize("r_k_fast", [True, False], ids=["R-k-fast", "R-col-fast"])
@pytest.mark.parametrize("p_k_fast", [True, False], ids=["P-k-fast", "P-row-fast"])
@pytest.mark.parametrize("dist", ["normal", "lognormal", "row_scales"])
@pytest.mark.parametrize("block_m", [128, 256])
def test_wgmma_half_engine_matches_fp64(element, r_k_fast, p_k_fast, dist, block_m):
    """The 16-bit wgmma engine (tests/engine_probe.py's wgmma probe) against fp64, both layouts of R and of P (P
    row-contiguous is how dW reads dz: wgmma's B N-major), sizes from one row to several tiles and k tiles (K and
    the column-fast R's columns multiples of 8: the copy engine's 16-byte rows; a row-contiguous P's row stride
    padded to 8), the output NaN-filled first; tiles of 128 and of 256 P rows (wgmma n128, n256). The bar: the
    tensor cores' accumulation, truncating at worst (2^-23 an addition), over each promotion interval (none:
    all of k) and the totals' adds."""
    from torch.utils.cpp_extension import load_inline

    from engine_probe import wgmma_probe_plan, wgmma_probe_source

    key = (element, block_m)
    if key not in _WGMMA:
        _WGMMA[key] = load_inline(f"fusegen_wgmma_probe_{element}_m{block_m}", BINDING,
                                  cuda_sources=wgmma_probe_source(element, block_m), functions=["run"],
                                  extra_cuda_cflags=["-O3", "-gencode=arch=compute_90a,code=sm_90a"])
    promote = wgmma_probe_plan(element, block_m).promote_every_k
    torch_dtype = DTYPES[element]
    gen = torch.Generator().manual_seed(3 + r_k_fast + 2 * p_k_fast)
    for m, n, k in [(1, 8, 8), (37, 136, 1032), (129, 264, 200), (256, 256, 4096), (600, 136, 264)]:
        a = _draw((m, k), dist, gen).to(torch_dtype)
        w = _draw((n, k), dist, gen).to(torch_dtype)
        ref = a.double() @ w.double().t()
        interval = promote or k
        bound = 2.0 ** -23 * (k / interval + interval + 16) * (a.double().abs() @ w.double().abs().t()) + 1e-30
        R = (w if r_k_fast else w.t()).contiguous().cuda()
        P = a.contiguous() if p_k_fast else torch.zeros(k, (m + 7) // 8 * 8, dtype=torch_dtype)
        if not p_k_fast:
            P[:, :m] = a.t()
        variant = (0 if r_k_fast else 1) + (0 if p_k_fast else 2)
        c = _WGMMA[key].run(variant, P.cuda(), R, m, n, k).double().cpu()
        assert not c.isnan().any(), f"unwritten outputs at {(m, n, k)}"
        worst = ((c - ref).abs() / bound).max().item()
        assert worst <= 1.0, (f"{element} wgmma m{block_m} R k-fast={r_k_fast} P k-fast={p_k_fast} {dist} "
                              f"{(m, n, k)}: error {worst:.2f}x the bar")
