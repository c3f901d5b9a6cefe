"""Models of several GEMMs on the GPU (tests/models/layers_*.py: an MLP block, three GEMMs with a softmax last):
the composite module of one fused layer a GEMM, forward and every gradient against an fp64 run of the file's Model
(compare_models reads every layer's kinks and GEMM rounding), at the file's own size and scaled up to where the
tensor-core engines run, on each engine this GPU can get."""
import dataclasses

import pytest
import torch

from helpers import (REPO, assert_compiled_matches_eager, gpu_available, import_file, log_accuracy, prebuild,
                     scaled_copy, selected_params)

import fusegen
from fusegen.codegen import write_layers
from fusegen.frontend import load_model_file, model_specs
from fusegen.tools.accuracy import DISTRIBUTIONS, compare_models

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="needs a CUDA GPU and nvcc")]

MODELS = REPO / "tests" / "models"
LAYER_FILES = sorted(p.name for p in MODELS.glob("layers_*.py"))
VISIBLE_ARCH = tuple(torch.cuda.get_device_capability()) if gpu_available() else None
ARCHS = [VISIBLE_ARCH] + ([(8, 0)] if VISIBLE_ARCH == fusegen.WGMMA_ARCH else []) if VISIBLE_ARCH else []
ARCH_IDS = [f"sm{a[0]}{a[1]}" for a in ARCHS]


@pytest.fixture(scope="module")
def built(tmp_path_factory, request):
    """Each selected file's composite module at its own and at the scaled size (run-time sizes: one build per
    layer and engine serves both), all built in parallel."""
    out = tmp_path_factory.mktemp("layers")
    (out / "big").mkdir()
    paths = {}
    for name, arch in sorted(selected_params(request, ("name", "arch"))):
        for size in ("small", "big"):
            f = MODELS / name if size == "small" else (out / "big" / name if (out / "big" / name).exists()
                                                       else scaled_copy(MODELS / name, out / "big"))
            plans = [fusegen.plan(s, arch=arch, fixed_sizes=False) for s in model_specs(f)[0]]
            paths[name, size, arch] = (f, write_layers(plans, out / f"sm{arch[0]}{arch[1]}" / size))
    prebuild(sorted({p for _, p in paths.values()}))
    return paths


@pytest.mark.parametrize("arch", ARCHS, ids=ARCH_IDS)
@pytest.mark.parametrize("name", LAYER_FILES)
def test_layers_forward_and_gradients_match_fp64(name, arch, built):
    problems = []
    for size in ("small", "big"):
        f, path = built[name, size, arch]
        model_file, module = load_model_file(f), import_file(path)
        assert module.POISON_OUTPUTS, "GPU tests run with NaN-poisoned outputs"
        shape = tuple(model_file.get_inputs()[0].shape)
        cases = ((0, shape[0]), (1, 2 * shape[0] + 1)) if size == "small" else ((2, shape[0]),)
        for seed, batch in cases:
            dist = DISTRIBUTIONS[(LAYER_FILES.index(name) + seed) % len(DISTRIBUTIONS)]
            report, found = compare_models(module.ModelNew, model_file.Model, model_file.get_init_inputs(),
                                           (batch,) + shape[1:], seed, dist=dist)
            print(f"\n{name} {size} [{arch}, batch {batch}, {dist}]: " + ", ".join(
                f"{k} {v[0]:.2g}/{v[1]:.2g}" for k, v in report.items() if isinstance(v, tuple) and k != "kink_flips"))
            log_accuracy(report, chain=f"{name} {size}", engine=f"sm{arch[0]}{arch[1]}", batch=batch, seed=seed,
                         dist=dist, layers=len(module.KERNEL_URIS))
            problems += found
    assert not problems, f"{name}: " + "\n".join(problems)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_layers_in_16_bits_match_the_reference_in_their_dtype(dtype, tmp_path):
    """Each layers file scaled to the tensor-core engines, as a 16-bit composite (one 16-bit layer a GEMM), against
    the reference in the same dtype and fp64 (test_gpu_dtypes' bar)."""
    from test_gpu_dtypes import check_files_against_reference

    cases = []
    for name in LAYER_FILES:
        f = scaled_copy(MODELS / name, tmp_path)
        plans = [fusegen.plan(dataclasses.replace(s, dtype=dtype), fixed_sizes=False, arch=VISIBLE_ARCH)
                 for s in model_specs(f)[0]]
        first = plans[0].spec.interface
        cases.append((f, write_layers(plans, tmp_path / "generated"), (first.weight, first.weight_in_out)))
    check_files_against_reference(cases, dtype)


def test_layers_under_autocast_match_the_reference_under_it(tmp_path):
    """Each layers file whose ops autocast's model covers, scaled to the tensor-core engines, as float32 layers under
    torch.autocast(bfloat16) (inner layers hand their output on in float32: Plan.feeds_layer), against the reference
    under autocast (test_gpu_dtypes' bar)."""
    from test_gpu_dtypes import check_file_under_autocast

    from fusegen.spec import SpecError

    cases = []
    for name in LAYER_FILES:
        f = scaled_copy(MODELS / name, tmp_path)
        specs = model_specs(f)[0]
        try:
            plans = [fusegen.plan(dataclasses.replace(s, autocast="bfloat16"), fixed_sizes=False, arch=VISIBLE_ARCH,
                                  feeds_layer=k < len(specs) - 1) for k, s in enumerate(specs)]
        except SpecError:  # (an op autocast's model does not cover yet: a row sum)
            continue
        first = plans[0].spec.interface
        cases.append((f, write_layers(plans, tmp_path / "generated"), (first.weight, first.weight_in_out)))
    assert len(cases) >= 3, [c[0].name for c in cases]
    prebuild([path for _, path, _ in cases])
    for f, path, first_weight in cases:
        check_file_under_autocast(f, path, f"{f.name} autocast", "normal", first_weight)


def test_layers_run_inside_torch_compile(tmp_path):
    """torch.compile(fullgraph=True) traces through the composite (each layer's custom operators): the same
    output and gradients as the module run eagerly."""
    if not hasattr(torch.library, "custom_op"):
        pytest.skip("custom operators need torch >= 2.4")
    f = MODELS / "layers_three_gemms.py"
    path = write_layers([fusegen.plan(s, arch=VISIBLE_ARCH) for s in model_specs(f)[0]], tmp_path)
    prebuild([path])
    model_file, module = load_model_file(f), import_file(path)
    torch.manual_seed(0)
    model = module.ModelNew(*model_file.get_init_inputs()).cuda()
    x = torch.randn(33, 24, device="cuda")
    assert_compiled_matches_eager(model, x)
