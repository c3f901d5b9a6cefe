"""Every distinct CUDA source the planner can emit compiles (sm_80 and sm_90) with no register spills, and the C++
binding compiles against the CPU torch headers. Runs the real compilers; no GPU needed.

The planner's variant_key names the structural choices (strategy, tile, fixed sizes); within one key the emitted
code still changes shape with the sub-warp width (LANES: the shuffle trees) and, with fixed sizes, with whether K
is a multiple of the k slice (the forward mainloop drops its k bounds checks). One representative is compiled per
(variant_key, lanes_per_group, even K): each distinct shape once.
"""
import os
import pathlib
import re
import shutil
import subprocess
import sysconfig

import pytest

from helpers import HEADLINE

import fusegen
from fusegen.plan import FRAGMENT, TILE_LOCAL, TWO_STAGE
from fusegen.plan.tuning import load_table, with_arithmetic
from fusegen.spec import PRECISIONS

pytestmark = pytest.mark.slow

ARCHS = ("-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=sm_90")

GROUP_WIDTHS = sorted({1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 96, 100, 127, 128, 129,
                       200, 255, 256, 257, 384, 512, 1000, 1023, 1024, 2048, 4095, 4096})
GROUPS = (64, 8, 3, 1)
INPUTS = (8192, 4096, 1000, 4095, 7, 1)


def _find_nvcc():
    found = shutil.which("nvcc")
    if found:
        return found
    fallback = pathlib.Path("/usr/local/cuda/bin/nvcc")
    return str(fallback) if fallback.is_file() and os.access(str(fallback), os.X_OK) else None


NVCC = _find_nvcc()


WGMMA_GROUP_WIDTHS = (3, 16, 128, 200, 1000)  # wgmma plans: every strategy and sub-warp width, fewer builds


def _shape_key(p):
    # EVEN_K drops the SIMT forward's k checks (that engine runs in every plan: the compensated small GEMMs);
    # a 3xtf32 plan on the SIMT engine (tiny groups) emits the fp32 plan's code.
    even_k = p.fixed_sizes and p.spec.input_size % p.simt_tile.block_k == 0
    key = p.variant_key if p.mainloop != "simt_fp32" else ("fp32",) + p.variant_key[1:]
    lanes = p.lanes_per_group if p.group_strategy != FRAGMENT else 0  # the register epilogue uses no sub-warps
    return (key, lanes, even_k)


def _all_plans():
    for gw in GROUP_WIDTHS:
        for groups in GROUPS:
            for input_size in INPUTS:
                for fixed in (False, True):
                    for precision in PRECISIONS:
                        spec = fusegen.Spec(input_size, gw * groups, groups, precision=precision)
                        yield fusegen.plan(spec, fixed_sizes=fixed)
                        if gw in WGMMA_GROUP_WIDTHS:
                            yield fusegen.plan(spec, fixed_sizes=fixed, arch=fusegen.WGMMA_ARCH)
    # every tile the tuning table holds (what `render` would emit on those GPUs)
    for gpu, by_precision in load_table().items():
        for precision in by_precision:
            yield fusegen.plan(with_arithmetic(HEADLINE, precision), gpu=gpu)


def _representatives():
    reps = {}
    for p in _all_plans():
        reps.setdefault(_shape_key(p), p)
    return reps


REPRESENTATIVES = _representatives()


def _case_id(p):
    if p == fusegen.plan(HEADLINE, gpu="NVIDIA H200"):
        return "headline"
    sizes = (f"fixed-i{p.spec.input_size}-h{p.spec.hidden_size}" if p.fixed_sizes else "dynamic")
    tuned = f"-{p.tile.name}" if p.tuned_for else ""
    return f"{p.precision}-{p.mainloop}-{p.group_strategy}-lanes{p.lanes_per_group}-gw{p.group_width}-{sizes}{tuned}"


# plus the committed headline module's own source (what ships), if its representative is another spec, the
# 3xTF32 engines (3xtf32's where plan(scaled_planes=False) asks for them: wgmma on sm_90, mma.sync on sm_80)
CASES = sorted(REPRESENTATIVES.values(), key=_case_id)
for _extra in (fusegen.plan(HEADLINE, gpu="NVIDIA H200"), fusegen.plan(HEADLINE, arch=(9, 0), scaled_planes=False),
               fusegen.plan(HEADLINE, arch=(8, 0), scaled_planes=False)):
    if _extra not in CASES:
        CASES.append(_extra)


def test_variant_grid_covers_every_structure():
    # variant_key: (precision, mainloop, tile, mma_tile, narrow_tile, strategy, fixed_sizes, chain structure, converts)
    keys = {k[0] for k in REPRESENTATIVES}
    assert len(keys) >= 4, keys
    for precision in PRECISIONS:
        strategies = {FRAGMENT, TILE_LOCAL, TWO_STAGE} if precision != "fp32" else {TILE_LOCAL, TWO_STAGE}
        assert {(k[5], k[6]) for k in keys if k[0] == precision} >= {(s, f) for s in strategies for f in (False, True)}
        if precision != "fp32":  # the Hopper engine, each strategy, both size modes
            assert {(k[5], k[6]) for k in keys if k[0] == precision and k[1].startswith("wgmma")} >= \
                {(s, f) for s in strategies for f in (False, True)}
    for strategy in (TILE_LOCAL, TWO_STAGE):
        lanes = {p.lanes_per_group for p in CASES if p.group_strategy == strategy}
        assert 32 in lanes and min(lanes) < 32, (strategy, lanes)
    # the headline's shape is among those compiled
    assert _shape_key(fusegen.plan(HEADLINE)) in REPRESENTATIVES


def _ptxas_report(stderr):
    """[(function, arch, stack, spill stores, spill loads)] from `-Xptxas -v` output."""
    rows = []
    current = None
    for line in stderr.splitlines():
        m = re.search(r"Compiling entry function '(\S+)' for '(sm_\d+a?)'", line)
        if m:
            current = m.groups()
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            rows.append((current,) + tuple(int(x) for x in m.groups()))
    return rows


def compiles_without_spills(spec, tmp_path, tolerated=lambda function, stores, loads: False, fixed_sizes=True):
    """spec's kernels rendered for sm_80 (mma.sync) and sm_90a (wgmma) and compiled with ptxas -v under torch's
    nvcc flags: no error, no spill but sm_80's known one and what `tolerated` accepts. Returns
    [(rendered source, ptxas output)], one an arch. fixed_sizes: as plan()'s (False: the sizes the tests build)."""
    from test_chains import TORCH_NVCC_FLAGS

    cu, built = tmp_path / "kernels.cu", []
    for plan_arch, arch in (((8, 0), "-arch=sm_80"), ((9, 0), "-arch=sm_90a")):
        cu.write_text(fusegen.render_cuda(fusegen.plan(spec, arch=plan_arch, fixed_sizes=fixed_sizes)))
        r = subprocess.run([NVCC, arch, "-O3", "-c", str(cu), "-o", str(tmp_path / "k.o"), "-Xptxas", "-v",
                            *TORCH_NVCC_FLAGS], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        assert r.returncode == 0, r.stdout[-4000:]
        bad = [row for row in _ptxas_report(r.stdout) if any(row[1:]) and not _known_small_spill(
            row[0][0], row[0][1], *row[2:]) and not tolerated(row[0][0], *row[2:])]
        assert not bad, r.stdout[-3000:]
        built.append((cu.read_text(), r.stdout))
    return built


def _known_small_spill(function, arch, stores, loads):
    """The spills we accept, both sm_80's ptxas: 16 bytes of the compensated (Dot2, 128 live sums) grad_weight
    kernel in local memory (it runs only GEMMs of <= 2^28 multiply-adds, where that costs nothing measurable), and
    4 bytes of the scaled plans' row-plane kernel in its 16-byte form (a row's held steps, at the 64 registers ptxas gives it:
    one 4-byte store and load beside each row's 32 KB of loads; sm_90 holds them all). Anywhere else a spill fails
    the test."""
    if arch == "sm_80" and "scale_rows_kernelILb1E" in function:
        return stores <= 4 and loads <= 4
    return arch == "sm_80" and "grad_weight_kernelINS_4SimtELb1" in function and stores <= 16 and loads <= 16


@pytest.mark.skipif(NVCC is None, reason="nvcc not found (PATH or /usr/local/cuda/bin/nvcc)")
@pytest.mark.parametrize("p", CASES, ids=_case_id)
def test_cuda_source_compiles_without_spills(p, tmp_path):
    source = fusegen.render_cuda(p)
    cu = tmp_path / "kernels.cu"
    cu.write_text(source)
    archs = p.arch_flags or ARCHS  # the wgmma engine pins sm_90a; the others build for what the GPU is
    # one nvcc per arch, side by side (nvcc is single-threaded; separate runs keep each arch's report whole)
    runs = [subprocess.Popen([NVCC, arch, "-O3", "-c", str(cu), "-o", str(tmp_path / f"kernels{i}.o"), "-Xptxas",
                              "-v"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
            for i, arch in enumerate(archs)]
    outputs = [run.communicate()[0] for run in runs]
    stdout = "\n".join(outputs)
    assert all(run.returncode == 0 for run in runs), \
        f"nvcc failed for {p.spec} (fixed_sizes={p.fixed_sizes}):\n{stdout[-6000:]}"
    report = _ptxas_report(stdout)
    functions = {row[0] for row in report}
    # forward, grad_input, grad_weight: on the SIMT engine, a plain and a compensated form each; on tensor cores
    # a 16-byte and a 4-byte copy form each, of the plan's tile and of the narrow one (small batches). Two
    # backward epilogue kernels (+ the normalize kernel for two-stage), each for both archs. A wgmma plan adds
    # its forward and store kernels and the two operand-split kernels to the mma.sync ones, for sm_90a only.
    # Tensor-core plans with a GroupNorm add grad_input's compensated SIMT form (layers of few inputs), and those
    # with compensated small GEMMs (tf32, groups under 8 channels) the three GEMMs' compensated forms.
    # Tensor-core plans add the few-rows engines' three GEMMs and grad_weight's outer product in its 16-byte and
    # 4-byte forms (batches of a few rows). The 16-bit wgmma engine adds its persistent store kernel (unsplit backward
    # GEMMs), and both store kernels a second form where grad_weight reads dz row-contiguous (tiles of whole 64-row
    # boxes); with the persistent forward (the planner's persistent_forward), that kernel beside the one-tile one.
    extra = 0 if p.mainloop == "simt_fp32" else 3 if p.exact_max_macs or p.exact_max_tile_macs else \
        int(p.exact_dx_max_input > 0)
    extra += 5 if p.gemv_max_rows else 0  # the few-rows engines' three GEMMs, the outer product's two forms
    if p.wgmma and p.wgmma_template == "wgmma_half":
        extra += (3 if p.tile.block_m % 64 == 0 else 1) + p.persistent_forward
    # its operand kernels: rows (with and without a folded factor) and the columns' two passes, each in two forms;
    # with two planes (3xfp16) the rows without a folded factor and the columns' planes also split SAFE; and the
    # kept weight's fingerprint (a `.data` write)
    extra += (11 if p.pieces == 2 else 7) if p.scaled else 0
    # the planes engine's forward and its two store kernels (dx, dW), and the two operand kernels that the wgmma
    # base of 18 counts
    extra += 5 if p.scaled_mma else 0
    # the one-pass GroupNorm backward in two forms, 32-bit row offsets and 64-bit past them, and with two channels
    # a thread (groups of 2 or more) each again with grad_out's pairs in one load
    extra += (3 if p.group_width >= 2 else 1) if p.gn_backward_one_pass else 0
    expected = {"simt": 8, "mma": 14, "wgmma": 18}[p.mainloop.split("_")[0]] + (p.group_strategy == TWO_STAGE) + extra
    arch_names = {"sm_90a"} if p.arch_flags else {"sm_80", "sm_90"}
    assert len(functions) == len(arch_names) * expected, (functions, stdout[-3000:])
    assert {f[1] for f in functions} == arch_names
    # ptxas serializes wgmma when it cannot prove the asynchronous registers safe: a silent 2x slowdown
    assert "wgmma.mma_async instructions are serialized" not in stdout, stdout[-3000:]
    bad = [f"{fn} ({arch}): {stack} B stack, {stores} B spill stores, {loads} B spill loads"
           for (fn, arch), stack, stores, loads in report if (stack or stores or loads)
           and not _known_small_spill(fn, arch, stores, loads)]
    assert not bad, f"register spills / stack for {p.spec} (fixed_sizes={p.fixed_sizes}):\n" + "\n".join(bad)


def test_cuda_source_includes_no_torch_headers():
    for p in CASES:
        source = fusegen.render_cuda(p)
        for bad in ("#include <c10/cuda", "#include <ATen/cuda", "#include <torch/", "#include <ATen/",
                    "#include <c10/"):
            assert bad not in source, (bad, _case_id(p))


# The binding's allocations follow the plan: statistics per channel (BatchNorm), one value a row (flat), row
# sums with per-channel stage parameters (keepdim), group means for pre-GroupNorm parameters without a bias, no
# norm at all; with the headline and a two-stage plan (partial sums), each branch of forward_call and
# backward_call once.
BINDING_MODELS = ("bn_relu.py", "row_mean_flat_tanh.py", "row_gn_silu_sum_scale.py", "stage_bias_param_gn.py",
                  "relu_scale.py", "stage_scalar_params.py", "input_residual_gn.py")


def _binding_plans():
    from fusegen.frontend import model_spec

    models = pathlib.Path(__file__).resolve().parent / "models"
    yield "headline", fusegen.plan(HEADLINE)
    yield "two-stage", fusegen.plan(fusegen.Spec(1000, 400, 2), fixed_sizes=False)
    yield "tf32-scaled", fusegen.plan(fusegen.Spec(1000, 400, 2, precision="tf32"), arch=fusegen.WGMMA_ARCH)
    for name in BINDING_MODELS:
        yield name, fusegen.plan(model_spec(models / name)[0], rewrite=False)  # (the GEMM binding)


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not found")
@pytest.mark.parametrize("name", [name for name, _ in _binding_plans()])
def test_binding_compiles_against_cpu_torch_headers(name, tmp_path):
    from torch.utils import cpp_extension

    cpp = tmp_path / "binding.cpp"
    cpp.write_text(fusegen.render_binding(dict(_binding_plans())[name]))
    includes = list(cpp_extension.include_paths()) + [sysconfig.get_paths()["include"]]
    cmd = ["g++", "-std=c++20", "-fsyntax-only", "-DTORCH_EXTENSION_NAME=fusegen_binding_check"]
    cmd += [f"-I{d}" for d in includes] + [str(cpp)]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert r.returncode == 0, f"g++ failed on the binding:\n{r.stderr[-6000:]}"


@pytest.mark.skipif(NVCC is None, reason="nvcc not found (PATH or /usr/local/cuda/bin/nvcc)")
@pytest.mark.parametrize("element", ["bfloat16", "float16"])
def test_half_engine_compiles_without_spills(element, tmp_path):
    """The bf16 / fp16 mma.sync engine on its own (tests/engine_probe.py: every operand layout, both tiles and the
    two-plane 3xFP16 form), for sm_80 and sm_90 under torch's nvcc flags, before any module uses it;
    tests/test_gpu_engines.py runs it."""
    from engine_probe import probe_source
    from test_chains import TORCH_NVCC_FLAGS

    cu = tmp_path / "probe.cu"
    cu.write_text(probe_source(element))
    for arch in ARCHS:
        r = subprocess.run([NVCC, arch, "-c", str(cu), "-o", str(tmp_path / "probe.o"), "-Xptxas", "-v",
                            *TORCH_NVCC_FLAGS], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        assert r.returncode == 0, r.stderr[-4000:]
        report = _ptxas_report(r.stderr)
        assert len(report) >= 21, r.stderr[-2000:]  # 7 layouts x (2 tiles + the two-plane form)
        assert all(stores == 0 and loads == 0 for _, _, stores, loads in report), report


@pytest.mark.skipif(NVCC is None, reason="nvcc not found (PATH or /usr/local/cuda/bin/nvcc)")
def test_3xtf32_mma_engine_probe_compiles(tmp_path):
    """The sm_80 3xTF32 engine's probe (tests/engine_probe.py tf32_probe_source), benchmarks/mma_3xfp16.py's
    baseline: compiles for sm_80 without spills."""
    from engine_probe import tf32_probe_source
    from test_chains import TORCH_NVCC_FLAGS

    cu = tmp_path / "probe.cu"
    cu.write_text(tf32_probe_source())
    r = subprocess.run([NVCC, "-arch=sm_80", "-c", str(cu), "-o", str(tmp_path / "probe.o"), "-Xptxas", "-v",
                        *TORCH_NVCC_FLAGS], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert r.returncode == 0, r.stderr[-4000:]
    report = _ptxas_report(r.stderr)
    assert len(report) >= 14 and all(stores == 0 and loads == 0 for _, _, stores, loads in report), report


@pytest.mark.skipif(NVCC is None, reason="nvcc not found (PATH or /usr/local/cuda/bin/nvcc)")
@pytest.mark.parametrize("element", ["bfloat16", "float16"])
@pytest.mark.parametrize("block_m", [128, 256])
def test_wgmma_half_engine_compiles_without_spills(element, block_m, tmp_path):
    """The 16-bit wgmma engine on its own (tests/engine_probe.py's wgmma probe, both layouts of R and of P) for
    sm_90a, on tiles of 128 and 256 rows (a 256-row tile: 128 accumulators a consumer thread); tests/test_gpu_engines.py
    runs it."""
    from engine_probe import wgmma_probe_source
    from test_chains import TORCH_NVCC_FLAGS

    cu = tmp_path / "probe.cu"
    cu.write_text(wgmma_probe_source(element, block_m))
    r = subprocess.run([NVCC, "-gencode=arch=compute_90a,code=sm_90a", "-c", str(cu), "-o", str(tmp_path / "p.o"),
                        "-Xptxas", "-v", *TORCH_NVCC_FLAGS], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    assert r.returncode == 0, r.stderr[-4000:]
    report = _ptxas_report(r.stderr)
    assert len(report) >= 4, r.stderr[-2000:]
    assert all(stores == 0 and loads == 0 for _, _, stores, loads in report), report
    assert "wgmma.mma_async instructions are serialized" not in r.stderr, r.stderr[-3000:]


@pytest.mark.skipif(NVCC is None, reason="nvcc not found (PATH or /usr/local/cuda/bin/nvcc)")
@pytest.mark.parametrize("arch", [(8, 0), (9, 0)], ids=["sm80", "sm90a"])
def test_scalar_parameters_compile_with_their_sum(arch, tmp_path):
    """A chain of scalar parameters (tests/models/stage_scalar_params.py): the whole source compiles without
    spills, with the kernel that sums a scalar's column sums into its gradient."""
    from fusegen.frontend import model_spec

    p = fusegen.plan(model_spec(pathlib.Path(__file__).resolve().parent / "models" / "stage_scalar_params.py")[0],
                     arch=arch)
    assert p.scalar_chan_slots == (0, 1, 2, 3)
    cu = tmp_path / "kernels.cu"
    cu.write_text(fusegen.render_cuda(p))
    flags = list(p.arch_flags) or ["-gencode=arch=compute_80,code=sm_80"]
    r = subprocess.run([NVCC, *flags, "-O3", "-c", str(cu), "-o", str(tmp_path / "k.o"), "-Xptxas", "-v"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert r.returncode == 0, r.stdout[-6000:]
    report = _ptxas_report(r.stdout)
    assert any("sum_columns_kernel" in fn for (fn, _), *_ in report), r.stdout[-3000:]
    assert not [row for row in report if any(row[1:]) and not _known_small_spill(row[0][0], row[0][1], *row[2:])], \
        r.stdout[-3000:]
