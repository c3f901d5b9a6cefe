"""Pools over the features on the GPU (ops/pool.py, plan/weight_pool.py): each pool model file, its AvgPool1d run
as the Linear with its weight pooled, forward and every gradient against an fp64 run of the file's Model (the bar
of compare_models), at the file's own size and scaled up to real use, on the planned engine; the cached pooled
weight follows the weights (an optimizer step, load_state_dict, an in-place write, fresh models); torch.compile
traces it."""
import pytest
import torch

from helpers import (REPO, assert_compiled_matches_eager, build_file_sizes, check_file_sizes_fp64, gpu_available,
                     import_file)

import fusegen
from fusegen.frontend import load_model_file, model_spec

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="needs a CUDA GPU and nvcc")]

MODELS = REPO / "tests" / "models"
FILES = sorted(p.name for p in MODELS.glob("pool_avg_*.py"))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Each file's module at its own and at the scaled size, built in parallel."""
    arch = torch.cuda.get_device_capability()

    def plan_of(f):
        p = fusegen.plan(model_spec(f)[0], fixed_sizes=False, arch=arch)
        assert p.weight_pool is not None, f"{f.name}: the pool does not run on the weight"
        return p
    return build_file_sizes(FILES, MODELS, tmp_path_factory.mktemp("pool"), plan_of)


@pytest.mark.parametrize("name", FILES)
def test_pool_forward_and_gradients_match_fp64(name, built):
    check_file_sizes_fp64(built, name, FILES, "pooled weight")


@pytest.mark.parametrize("name", ["pool_avg_relu_residual.py", "pool_avg_padded_gn.py"])
def test_the_cached_pooled_weight_follows_the_weights(name, built):
    """Inference (no gradient recorded) reads the cached pooled weight: an optimizer step, a load_state_dict and
    a no_grad write each change the output as the reference's, and fresh models never get an older one's."""
    f, path = built[name, "small"]
    model_file, module = load_model_file(f), import_file(path)
    init = model_file.get_init_inputs()
    torch.manual_seed(0)
    ref = model_file.Model(*init).cuda()
    torch.manual_seed(0)
    new = module.ModelNew(*init).cuda()
    x = torch.randn(5, init[0], device="cuda")
    tol = dict(atol=1e-4, rtol=1e-4)

    def same(why):
        with torch.no_grad():
            assert torch.allclose(new(x), ref(x), **tol), why

    same("first call")
    assert module._POOLED, "inference did not cache the pooled weight"
    for model in (ref, new):  # a training step on each
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model(x).square().sum().backward()
        opt.step()
    same("stale after an optimizer step")
    other = model_file.Model(*init).cuda()
    ref.load_state_dict(other.state_dict())
    new.load_state_dict(other.state_dict())
    same("stale after load_state_dict")
    first = next(p for p in ref.parameters() if p.dim() == 2)
    with torch.no_grad():
        first.mul_(-2.0)
        next(p for p in new.parameters() if p.dim() == 2).mul_(-2.0)
    same("stale after an in-place write")
    del ref, new, other, first
    for seed in range(1, 4):  # fresh models, often at the freed parameters' addresses and versions
        torch.manual_seed(seed)
        ref = model_file.Model(*init).cuda()
        torch.manual_seed(seed)
        new = module.ModelNew(*init).cuda()
        same(f"a fresh model (seed {seed}) got an earlier one's weights")
        del ref, new


def test_pool_runs_inside_torch_compile(built):
    if not hasattr(torch.library, "custom_op"):
        pytest.skip("custom operators need torch >= 2.4")
    f, path = built["pool_avg_relu_residual.py", "small"]
    model_file, module = load_model_file(f), import_file(path)
    torch.manual_seed(0)
    model = module.ModelNew(*model_file.get_init_inputs()).cuda()
    x = torch.randn(7, model_file.get_init_inputs()[0], device="cuda")
    assert_compiled_matches_eager(model, x)


# --------------------------------------------------------------------------------------------------------------
# 16-bit layers: the reference averages z rounded to 16 bits, so the pool runs in the row kernels
# (templates/ops/pool_avg_pool.cuh.j2), checked against the reference in its type (test_gpu_dtypes' bar)
# --------------------------------------------------------------------------------------------------------------
HALF_CASES = [("bfloat16", "pool_avg_gelu_scale_max.py"), ("bfloat16", "pool_avg_padded_gn.py"),
              ("float16", "pool_avg_relu_residual.py"), ("autocast", "pool_avg_padded_gn.py"),
              ("autocast", "pool_avg_relu_residual.py")]


@pytest.fixture(scope="module")
def built_16(tmp_path_factory):
    import dataclasses

    from helpers import prebuild

    arch = torch.cuda.get_device_capability()
    out = tmp_path_factory.mktemp("pool16")
    paths = {}
    for kind, name in HALF_CASES:
        change = dict(autocast="bfloat16") if kind == "autocast" else dict(dtype=kind)
        p = fusegen.plan(dataclasses.replace(model_spec(MODELS / name)[0], **change), fixed_sizes=False, arch=arch)
        assert p.row_pool is not None and p.weight_pool is None, f"{name} ({kind}): not in the row kernels"
        paths[kind, name] = fusegen.write_module(p, out / kind)
    prebuild(sorted(set(paths.values())))
    return paths


@pytest.mark.parametrize("kind, name", HALF_CASES)
def test_16_bit_average_pool_matches_the_reference_in_its_type(kind, name, built_16):
    from test_gpu_dtypes import check_file_under_autocast, check_files_against_reference

    face = model_spec(MODELS / name)[0].interface
    first_weight = (face.weight, face.weight_in_out)  # (the yardstick reorders the GEMM: pool_avg_padded_gn has x @ w)
    if kind == "autocast":
        check_file_under_autocast(MODELS / name, built_16[kind, name], f"{name} autocast", "normal", first_weight)
    else:
        check_files_against_reference([(MODELS / name, built_16[kind, name], first_weight)], kind)
