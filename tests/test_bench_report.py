"""benchmarks/bench.py's per-GEMM report on the CPU: each engine's ceiling (its tensor cores' peak over its products
a multiply-add) and the split of a profiled call into its GEMM kernel and the operands' kernels."""
from helpers import load_script


def _bench():
    return load_script("bench")


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


def test_a_profile_folds_into_each_kernels_time_a_rep():
    """kernel_times.kernel_totals (bench.py's call_kernels and the step tables): device time under either of
    torch's attribute names, per rep, launches counted; the host's sync entry and zero-time rows left out."""
    import types

    bench = _bench()

    def event(key, us, count, name="device_time_total"):
        e = types.SimpleNamespace(key=key, count=count, device_time_total=None, cuda_time_total=0.0)
        setattr(e, name, us)
        return e

    averages = [event("wgmma_forward_kernel", 5720.0, 10), event("scale_rows_kernel", 630.0, 20, "cuda_time_total"),
                event("cudaDeviceSynchronize", 50.0, 1), event("cudaLaunchKernel", 0.0, 30)]
    assert bench.kernel_totals(averages, 10) == {"wgmma_forward_kernel": (572.0, 1.0), "scale_rows_kernel": (63.0, 2.0)}


def test_a_synchronized_call_splits_into_host_lead_idle_and_kernels():
    """step_gaps.split_calls: each GPU activity belongs to the last call started before it; overlapping
    activities count once; a call that ran nothing is left out."""
    gaps = load_script("step_gaps")
    starts = [0.0, 1000.0, 2000.0]
    gpu = [(30.0, 60.0), (70.0, 100.0), (90.0, 110.0),  # call 0: lead 30, busy 30 + 40, idle 10
           (1020.0, 1100.0), (1100.0, 1150.0),          # call 1: lead 20, busy 130, idle 0
           (2050.0, 2060.0), (2200.0, 2260.0)]          # call 2: lead 50, busy 70, idle 140
    assert gaps.split_calls(starts, gpu) == (30.0, 10.0, 70.0)
    assert gaps.split_calls([0.0, 500.0], [(10.0, 20.0)]) == (10.0, 0.0, 10.0)
    assert gaps.parse_mode("float32:tf32") == ("float32:tf32", {"dtype": "float32", "precision": "tf32"})
    assert gaps.parse_mode("bfloat16") == ("bfloat16", {"dtype": "bfloat16"})
