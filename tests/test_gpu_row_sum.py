"""The row-sum rewrite on the GPU (plan/row_sum.py): each model file whose chain sums or averages its rows right
after the GEMM, as a GEMV, forward and every gradient against an fp64 run of the file's Model (the bar of
compare_models), at the file's own size and scaled up to real use; the cached weight reduction follows the
weights (an optimizer step, load_state_dict); torch.compile traces it."""
import pytest
import torch

from helpers import (REPO, assert_compiled_matches_eager, build_file_sizes, check_file_sizes_fp64, gpu_available,
                     import_file, scaled_copy)

import fusegen
from fusegen.frontend import load_model_file, model_spec
from fusegen.plan import RowSumPlan

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="needs a CUDA GPU and nvcc")]

MODELS = REPO / "tests" / "models"
# (the files the rewrite fires on: its own, and the row-reduction files of a sum or mean right after the GEMM)
FILES = sorted(p.name for p in MODELS.glob("rowsum_*.py")) + ["row_mean_flat_tanh.py", "row_sum_keepdim_relu.py"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Each file's module at its own and at the scaled size, built in parallel."""
    def plan_of(f):
        p = fusegen.plan(model_spec(f)[0], fixed_sizes=False)
        assert isinstance(p, RowSumPlan), f"{f.name}: the rewrite did not fire"
        return p
    return build_file_sizes(FILES, MODELS, tmp_path_factory.mktemp("row_sum"), plan_of)


@pytest.mark.parametrize("name", FILES)
def test_row_sum_forward_and_gradients_match_fp64(name, built):
    check_file_sizes_fp64(built, name, FILES, "row-sum rewrite")


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_row_sum_in_16_bits_matches_the_reference_in_its_dtype(dtype, tmp_path):
    """Each file scaled to real use as a 16-bit layer (x, W, the output and the gradients 16-bit, the sums double)
    against the reference in the same dtype and fp64 (test_gpu_dtypes' bar)."""
    import dataclasses

    from test_gpu_dtypes import check_files_against_reference

    cases = []
    for name in FILES:
        f = scaled_copy(MODELS / name, tmp_path)
        spec = dataclasses.replace(model_spec(f)[0], dtype=dtype)
        p = fusegen.plan(spec, fixed_sizes=False)
        assert isinstance(p, RowSumPlan), f"{name}: the rewrite did not fire in {dtype}"
        face = spec.interface
        cases.append((f, fusegen.write_module(p, tmp_path / "generated"), (face.weight, face.weight_in_out)))
    check_files_against_reference(cases, dtype)


def test_the_cached_weight_reduction_follows_the_weights(built):
    """An optimizer step, a load_state_dict and a no_grad write each change the output as the reference's: the
    cache is keyed by the parameters' versions, never stale."""
    f, path = built["rowsum_channel_affine_mean.py", "small"]
    model_file, module = load_model_file(f), import_file(path)
    init = model_file.get_init_inputs()
    torch.manual_seed(0)
    ref = model_file.Model(*init).cuda()
    torch.manual_seed(0)
    new = module.ModelNew(*init).cuda()
    x = torch.randn(5, init[0], device="cuda")
    tol = dict(atol=1e-4, rtol=1e-4)
    assert torch.allclose(new(x), ref(x), **tol)
    for model in (ref, new):  # a training step on each
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model(x).square().sum().backward()
        opt.step()
    with torch.no_grad():
        assert torch.allclose(new(x), ref(x), **tol), "stale after an optimizer step"
    other = model_file.Model(*init).cuda()
    ref.load_state_dict(other.state_dict())
    new.load_state_dict(other.state_dict())
    assert torch.allclose(new(x), ref(x), **tol), "stale after load_state_dict"
    with torch.no_grad():
        ref.scale.mul_(-2.0)
        new.scale.mul_(-2.0)
    assert torch.allclose(new(x), ref(x), **tol), "stale after an in-place write"
    del ref, new, other
    for seed in range(1, 4):  # fresh models, often at the freed parameters' addresses and versions
        torch.manual_seed(seed)
        ref = model_file.Model(*init).cuda()
        torch.manual_seed(seed)
        new = module.ModelNew(*init).cuda()
        assert torch.allclose(new(x), ref(x), **tol), f"a fresh model (seed {seed}) got an earlier one's weights"
        del ref, new


def test_row_sum_runs_inside_torch_compile(built):
    if not hasattr(torch.library, "custom_op"):
        pytest.skip("custom operators need torch >= 2.4")
    f, path = built["rowsum_channel_affine_mean.py", "small"]
    model_file, module = load_model_file(f), import_file(path)
    torch.manual_seed(0)
    model = module.ModelNew(*model_file.get_init_inputs()).cuda()
    x = torch.randn(7, model_file.get_init_inputs()[0], device="cuda")
    assert_compiled_matches_eager(model, x)
