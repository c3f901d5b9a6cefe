"""The launchers' per-call schedules, run on the CPU: the generated CUDA's host code (schedule(), exact_for(),
dz_lo_readers(), scratch_floats()) compiled with a small driver and asked about a grid of sizes, checked against
the rules the planner documents, and dz_lo_readers (the binding allocates dz_lo by it) against the engines that
read dz_lo. No GPU is needed: without one, the SM count falls back to 132."""
import dataclasses
import itertools
import pathlib
import shutil
import subprocess

import pytest

import fusegen
from fusegen.frontend import model_spec

NVCC = shutil.which("nvcc") or (str(pathlib.Path("/usr/local/cuda/bin/nvcc"))
                                if pathlib.Path("/usr/local/cuda/bin/nvcc").exists() else None)

DRIVER = r"""
#include "kernels.cu"
#include <cstdio>
// For each "M N K" on stdin: the three GEMMs' (engine, split, slice), as the launchers decide them.
int main() {
  long long M, N, K;
  while (scanf("%lld %lld %lld", &M, &N, &K) == 3) {
    const fg::Schedule f = fg::schedule(M, N, K, K % 4 == 0, K % 4 == 0 ? fg::Few::Gemv : fg::Few::None);
    const fg::Schedule x = fg::grad_input_schedule(M, N, K, K % 4 == 0);
    const fg::Schedule w = fg::schedule(N, K, M, M > 0 && K % 4 == 0, fg::Few::Outer);
    bool lo_dx = false, lo_dw = false;
    fg::dz_lo_readers((int)M, (int)N, (int)K, &lo_dx, &lo_dw);
    printf("%d %d %d %d %d %d %d %d %d %lld %d %d\n", (int)f.engine, f.split, f.slice, (int)x.engine, x.split,
           x.slice, (int)w.engine, w.split, w.slice, fg::scratch_floats((int)M, (int)N, (int)K), lo_dx, lo_dw);
  }
  return 0;
}
"""

EXACT, MAIN, NARROW, WGMMA, GEMV, GEMV_T, OUTER, PLANES = 0, 1, 2, 3, 4, 5, 6, 7  # (the templates' enum Engine)
SIZES = [(1, 64, 64), (4, 4096, 4096), (5, 4096, 4096), (3, 4096, 4095), (5, 130, 64), (19, 130, 64), (1, 512, 512), (16, 1024, 1024), (64, 2048, 2048),
         (65, 2048, 2048), (256, 1024, 1024), (257, 1000, 1023), (1024, 8192, 8192), (4096, 512, 512),
         (1, 8192, 8192), (7, 200, 1), (1000, 48, 3), (3, 7302, 1), (128, 128, 256), (2048, 32, 64), (0, 64, 64)]
PLANS = {
    "wgmma-fragment": lambda: fusegen.plan(fusegen.Spec(1000, 1024, 64), fixed_sizes=False, arch=fusegen.WGMMA_ARCH),
    "mma-two-stage": lambda: fusegen.plan(fusegen.Spec(1000, 400, 2), fixed_sizes=False),  # (3xFP16: Planes)
    "mma-two-stage-planes-off": lambda: fusegen.plan(fusegen.Spec(1000, 400, 2), fixed_sizes=False,
                                                     scaled_planes=False),
    "tf32-tiny-groups": lambda: fusegen.plan(fusegen.Spec(1000, 300, 100, precision="tf32"), fixed_sizes=False),
    "fp32": lambda: fusegen.plan(fusegen.Spec(1000, 256, 8, precision="fp32"), fixed_sizes=False),
}


def _exact(plan, rows, cols, reduce):
    """The plan's rule for a compensated GEMM (rows x cols over reduce): at most exact_max_macs multiply-adds, or
    at most exact_max_tile_macs of them in whole SIMT tiles."""
    bm, bn = plan.simt_tile.block_m, plan.simt_tile.block_n
    tile_macs = -(-rows // bm) * bm * (-(-cols // bn) * bn) * reduce
    return (plan.exact_max_macs > 0 and rows * cols * reduce <= plan.exact_max_macs) or \
        tile_macs <= plan.exact_max_tile_macs


def _run_driver(p, d, sizes):
    """plan p's launchers compiled in folder d with DRIVER and asked about sizes (M, N, K): {size: the row}."""
    (d / "kernels.cu").write_text(fusegen.render_cuda(p))
    (d / "driver.cu").write_text(DRIVER)
    arch = "-gencode=arch=compute_90a,code=sm_90a" if p.wgmma else \
        "-gencode=arch=compute_80,code=sm_80"
    r = subprocess.run([NVCC, arch, "-O1", str(d / "driver.cu"), "-o", str(d / "driver")], cwd=d,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert r.returncode == 0, r.stdout[-4000:]
    out = subprocess.run([str(d / "driver")], input="".join(f"{m} {n} {k}\n" for m, n, k in sizes),
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.split("\n")
    return {s: tuple(int(v) for v in line.split()) for s, line in zip(sizes, out)}


@pytest.fixture(scope="module", params=sorted(PLANS))
def schedules(request, tmp_path_factory):
    p = PLANS[request.param]()
    sizes = SIZES + [(m, n, k) for m, n, k in itertools.product((1, 33, 200), (64, 640), (8, 9, 100, 4097))]
    return p, _run_driver(p, tmp_path_factory.mktemp(request.param), sizes)


@pytest.mark.skipif(NVCC is None, reason="nvcc not found")
def test_schedules_follow_the_rules(schedules):
    plan, table = schedules
    for (m, n, k), row in table.items():
        gemms = {"forward": (row[0:3], (m, n, k)), "grad_input": (row[3:6], (m, k, n)),
                 "grad_weight": (row[6:9], (n, k, m))}
        for name, ((engine, split, slice_), (rows, cols, reduce)) in gemms.items():
            where = f"{name} of batch {m}, hidden {n}, input {k} in {plan.kernel_uri}"
            assert engine in (EXACT, MAIN, NARROW, WGMMA, GEMV, GEMV_T, OUTER, PLANES), where
            if plan.mainloop == "simt_fp32":
                assert engine in (EXACT, MAIN), where
            if engine == NARROW:
                assert rows <= plan.narrow_max_rows, where
            if engine == GEMV:  # forward only (k-contiguous 16-byte rows), a few rows
                assert name == "forward" and rows <= plan.gemv_max_rows and reduce % 4 == 0, where
            if engine == GEMV_T:  # the backward GEMMs, a few rows
                assert name != "forward" and rows <= plan.gemv_max_rows, where
            outer = plan.gemv_max_rows and (reduce <= plan.gemv_max_rows or rows * cols * reduce <= 1 << 22)
            if engine == OUTER:  # grad_weight of a few batch rows or a tiny one: an outer product, unsplit
                assert name == "grad_weight" and outer and split == 1, where
            if name == "grad_weight" and outer:
                assert engine == OUTER, where
            elif engine != EXACT and rows <= plan.gemv_max_rows:  # a few rows: a few-rows engine where there is one
                few = GEMV if name == "forward" else GEMV_T
                assert engine == few or (name == "forward" and (reduce % 4 or cols == 0)), where
            if engine == WGMMA:
                assert plan.wgmma, where
            if engine == PLANES:  # the main tile's GEMMs of a 3xtf32 plan over planes on mma.sync
                assert plan.scaled_mma, where
            if plan.scaled_mma:
                assert engine != MAIN, where
            assert 1 <= split <= 16, where
            if split > 1:  # whole promotion intervals, every slice non-empty, together the whole reduction
                assert slice_ % 64 == 0 and (split - 1) * slice_ < reduce <= split * slice_, (where, split, slice_)
                assert engine != EXACT, where
            else:
                assert slice_ == reduce, where
        # the binding allocates dz_lo by dz_lo_readers: every compensated backward GEMM gets it (a missing one
        # reads null), and only an engine that reads it does (the outer product takes it too: it is compensated)
        lo_dx, lo_dw = row[10], row[11]
        assert lo_dx == (row[3] == EXACT), (m, n, k, row)
        assert (row[6] == EXACT) <= lo_dw <= (row[6] in (EXACT, OUTER)), (m, n, k, row)
        # and the compensated GEMMs are those the plan's documented rule names
        assert (row[0] == EXACT) == _exact(plan, m, n, k), (m, n, k, row)
        assert lo_dw == _exact(plan, n, k, m), (m, n, k, row)
        assert lo_dx == (_exact(plan, m, k, n) or (k <= plan.exact_dx_max_input and m * n * k <= 1 << 28)), row
        assert row[9] >= 0


@pytest.mark.skipif(NVCC is None, reason="nvcc not found")
def test_small_layers_leave_the_compensated_path(schedules):
    """Only tiny GEMMs (and, after a GroupNorm, grad_input of few inputs) stay compensated on tensor-core plans; a
    batch-1 or batch-64 layer of a real size runs on tensor cores, split to fill the GPU."""
    plan, table = schedules
    if plan.mainloop == "simt_fp32" or plan.exact_max_macs:
        pytest.skip("FFMA plans and tf32 with groups under 8 channels keep the compensated small GEMMs")
    assert table[(5, 130, 64)][0] == EXACT  # tiny: compensated (3xTF32 measured at 2-8x cuBLAS's error there)
    engine, split = table[(1, 8192, 8192)][0:2]  # a matrix-vector product: the few-rows engine
    assert engine == GEMV and split > 1, table[(1, 8192, 8192)]
    for m, n, k in [(16, 1024, 1024), (64, 2048, 2048)]:
        engine, split = table[(m, n, k)][0:2]
        assert engine == NARROW and split > 1, ((m, n, k), table[(m, n, k)])
    assert table[(1, 8192, 8192)][3] == GEMV_T  # grad_input: the backward few-rows engine
    assert table[(1, 8192, 8192)][6] == OUTER  # grad_weight: an outer product
    assert table[(256, 1024, 1024)][0] in (MAIN, WGMMA, PLANES) and table[(256, 1024, 1024)][1] > 1


RASTER_DRIVER = r"""
#include <cuda_runtime.h>
#include <cstdio>
%s
// For each "tiles_m tiles_n" on stdin: the row and column tile of every t in order, as the persistent kernels
// walk them.
int main() {
  int tiles_m, tiles_n;
  while (scanf("%%d %%d", &tiles_m, &tiles_n) == 2) {
    for (int t = 0; t < tiles_m * tiles_n; ++t) {
      const int2 at = raster(t, tiles_m, tiles_n);
      printf("%%d %%d ", at.x, at.y);
    }
    printf("\n");
  }
  return 0;
}
"""


@pytest.mark.skipif(NVCC is None, reason="nvcc not found")
def test_persistent_forward_shapes_run_unsplit_on_wgmma(tmp_path):
    """tests/test_gpu_dtypes.py's PERSISTENT_FORWARD_SHAPES reach the persistent 16-bit forward: their forward
    GEMM is scheduled on wgmma unsplit (the launcher's condition for the persistent kernel) in a bfloat16 module of
    the group strategy that stages out and z (the GPU tests' module, fixed_sizes off)."""
    from test_gpu_dtypes import PERSISTENT_FORWARD_SHAPES

    p = fusegen.plan(fusegen.Spec(1024, 1024, 64, dtype="bfloat16"), fixed_sizes=False, arch=fusegen.WGMMA_ARCH)
    assert p.forward_staged_stores
    table = _run_driver(p, tmp_path, [(batch, hidden, input_size)
                                      for batch, input_size, hidden, _ in PERSISTENT_FORWARD_SHAPES])
    for shape, row in zip(PERSISTENT_FORWARD_SHAPES, table.values()):
        assert row[0:2] == (WGMMA, 1), (shape, row)
        plan = fusegen.plan(fusegen.Spec(*shape[1:], dtype="bfloat16"), fixed_sizes=False, arch=fusegen.WGMMA_ARCH)
        assert plan.forward_staged_stores, shape


@pytest.mark.skipif(NVCC is None, reason="nvcc not found")
def test_persistent_tile_order_visits_every_tile_once(tmp_path):
    """The persistent GEMMs' tile order (raster() in the rendered launchers, compiled for the host): every output
    tile exactly once, in groups of RASTER_ROWS row tiles (the last group what is left), the row tile fastest
    within a group, for tile grids from 1 x 1 to past a group in each direction."""
    source = fusegen.render_cuda(PLANS["wgmma-fragment"]())
    start = source.index("constexpr int RASTER_ROWS")
    group = int(source[start:].split("=")[1].split(";")[0])
    function = source[start:source.index("\n}\n", start) + 3]
    (tmp_path / "raster.cu").write_text(RASTER_DRIVER % function)
    r = subprocess.run([NVCC, str(tmp_path / "raster.cu"), "-o", str(tmp_path / "raster")], cwd=tmp_path,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert r.returncode == 0, r.stdout[-4000:]
    grids = [(m, n) for m in (1, 2, group - 1, group, group + 1, 2 * group + 3, 64) for n in (1, 3, group + 1, 64)]
    out = subprocess.run([str(tmp_path / "raster")], input="".join(f"{m} {n}\n" for m, n in grids),
                         stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.split("\n")
    for (m, n), line in zip(grids, out):
        values = [int(v) for v in line.split()]
        order = list(zip(values[0::2], values[1::2]))
        expected = [(first + i % rows, i // rows) for first in range(0, m, group)
                    for rows in [min(group, m - first)] for i in range(rows * n)]
        assert order == expected, (m, n, order[:20])
        assert sorted(order) == [(i, j) for i in range(m) for j in range(n)], (m, n)


def test_persistent_forward_where_the_epilogue_keeps_to_registers():
    """The planner makes the unsplit wgmma forward persistent on the 16-bit engine where its epilogue keeps to
    registers (the GroupNorm on the fragments in every dtype, no GroupNorm, the row and column strategies), and the
    rendered launchers launch the persistent kernel only then (the split forward and the other plans keep one tile a
    block): the GroupNorms staged in shared memory would share it with the ring the producer fills for the next
    tile."""
    models = pathlib.Path(__file__).parent / "models"
    wgmma = fusegen.WGMMA_ARCH
    cases = {
        "3xtf32 fragment": (fusegen.Spec(8192, 8192, 512), {}, True),
        "tf32 fragment": (fusegen.Spec(8192, 8192, 512, precision="tf32"), {}, True),
        "bf16 fragment": (fusegen.Spec(8192, 8192, 512, dtype="bfloat16"), {}, True),
        "none": (model_spec(models / "relu_scale.py")[0], {}, True),
        "rows": (model_spec(models / "row_amax_tuple_dim.py")[0], {}, True),
        "cols": (model_spec(models / "bn_relu.py")[0], {}, True),
        "two-stage": (fusegen.Spec(8192, 8192, 2), {}, False),
        "tile-local": (fusegen.Spec(1024, 1024, 16), {"group_strategy": "tile_local"}, False),
        "sm_80": (fusegen.Spec(8192, 8192, 512), {"arch": (8, 0)}, False),
    }
    for label, (spec, kw, want) in cases.items():
        p = fusegen.plan(spec, fixed_sizes=False, **{"arch": wgmma, **kw})
        assert p.persistent_forward == want, (label, p.group_strategy, p.mainloop)
        source = fusegen.render_cuda(p)
        launches = source.count("wgmma_forward_persistent_kernel<Wgmma>, 1,")
        assert launches == (1 if want else 0), (label, launches)
        if p.wgmma:  # the split forward's one-tile-a-block kernel stays beside it
            assert "launch_wgmma<true>(wgmma_forward_kernel, sc.split" in source, label


def test_forward_stages_its_16_bit_outputs_where_persistent():
    """The persistent forward's fragment GroupNorm writes 16-bit out and z through the output stage (stmatrix, bulk
    tensor stores: Plan.forward_staged_stores) and keeps its fragment stores where an output or the elements are
    fp32 (3xtf32, tf32, autocast's fp32 tensors) or the forward is not the persistent fragment case; the rendered
    launcher then passes the kernel its stores' maps and falls back to one tile a block where the copy engine
    cannot write out or z."""
    models = pathlib.Path(__file__).parent / "models"
    wgmma = fusegen.WGMMA_ARCH
    cases = {
        "bf16 fragment": (fusegen.Spec(8192, 8192, 512, dtype="bfloat16"), {}, True),
        "fp16 fragment": (fusegen.Spec(1000, 264, 33, dtype="float16"), {}, True),
        "3xtf32 fragment": (fusegen.Spec(8192, 8192, 512), {}, False),
        "tf32 fragment": (fusegen.Spec(8192, 8192, 512, precision="tf32"), {}, False),
        "autocast bf16": (fusegen.Spec(8192, 8192, 512, autocast="bfloat16"), {}, False),
        "bf16 none": (model_spec(models / "relu_scale.py")[0], {"dtype": "bfloat16"}, False),
        "bf16 two-stage": (fusegen.Spec(8192, 8192, 2, dtype="bfloat16"), {}, False),
        "bf16 sm_80": (fusegen.Spec(8192, 8192, 512, dtype="bfloat16"), {"arch": (8, 0)}, False),
    }
    for label, (spec, kw, want) in cases.items():
        if "dtype" in kw:
            spec = dataclasses.replace(spec, dtype=kw.pop("dtype"))
        p = fusegen.plan(spec, fixed_sizes=False, **{"arch": wgmma, **kw})
        assert p.forward_staged_stores == want, (label, p.group_strategy, p.element.name, p.output.name)
        source = fusegen.render_cuda(p)
        assert source.count("err = forward_maps(&maps, a, &staged);") == (1 if want else 0), label
        assert ("const __grid_constant__ ForwardMaps maps" in source) == want, label
        if want:  # the fallback where the copy engine cannot write out or z
            assert "launch_wgmma<true>(wgmma_forward_kernel, sc.split" in source, label

