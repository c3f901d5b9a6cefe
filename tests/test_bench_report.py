"""benchmarks/bench.py's per-GEMM report on the CPU: each engine's ceiling (its tensor cores' peak over its products
a multiply-add) and the split of a profiled call into its GEMM kernel and the operands' kernels."""
import importlib.util
import pathlib

REPO = pathlib.Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("fusegen_bench", REPO / "benchmarks" / "bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_engine_has_its_ceiling():
    bench = _bench()
    assert bench.ceiling("3xtf32", "wgmma_3xf16s") == 330  # three fp16 products
    assert bench.ceiling("tf32", "wgmma_f16s") == 989  # one
    assert bench.ceiling("3xtf32", "wgmma_tf32") == 165 and bench.ceiling("tf32", "mma_tf32") == 495
    assert bench.ceiling("fp32", "simt_fp32") == 67


def test_a_call_splits_into_its_gemm_and_the_rest():
    bench = _bench()
    assert bench.split_gemm({"wgmma_forward_kernel": 572.0, "scale_rows_kernel": 31.5, "memset": 1.0}) == (572.0, 32.5)
    assert bench.split_gemm({}) == (0.0, 0.0)
