"""A residual of the layer's own input on the GPU (ops/elementwise.py's input_residual): each model file's forward
and every gradient (x's: dz W plus the residual's) against an fp64 run of its Model at its own size and scaled to
real use (in == out features, 1000 x 1000 -> 1000); x read through any strides; torch.compile as eager; under
autocast against the reference under it."""
import pytest
import torch

from helpers import (REPO, assert_compiled_matches_eager, build_file_sizes, check_file_sizes_fp64, gpu_available,
                     import_file, prebuild, scaled_copy)
from test_input_residual import FILES

import fusegen
from fusegen.frontend import load_model_file, model_spec

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="needs a CUDA GPU and nvcc")]

MODELS = REPO / "tests" / "models"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    arch = torch.cuda.get_device_capability()
    return build_file_sizes(FILES, MODELS, tmp_path_factory.mktemp("xres"),
                            lambda f: fusegen.plan(model_spec(f)[0], fixed_sizes=False, arch=arch))


@pytest.mark.parametrize("name", FILES)
def test_forward_and_gradients_match_fp64(name, built):
    check_file_sizes_fp64(built, name, FILES, "residual of the layer's input")


def test_x_through_any_strides_and_torch_compile(built):
    """x transposed in memory (strides (1, batch)) gives the contiguous run's output and gradients (to the GEMM's
    rounding: the engines read such an x another way; a wrong stride would be off by O(1)); torch.compile(fullgraph)
    gives eager's bit for bit."""
    f, path = built["input_residual_gn.py", "big"]
    model_file, module = load_model_file(f), import_file(path)
    init = model_file.get_init_inputs()
    torch.manual_seed(0)
    new = module.ModelNew(*init).cuda()
    x = torch.randn(300, init[0], device="cuda")
    runs = []
    for xin in (x.clone(), x.t().contiguous().t()):
        xin.requires_grad_()
        new.zero_grad(set_to_none=True)
        out = new(xin)
        out.backward(torch.ones_like(out))
        runs.append([out.detach(), xin.grad] + [p.grad for p in new.parameters()])
    for a, b in zip(*runs):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-5), (a - b).abs().max()
    assert_compiled_matches_eager(new, x)


def test_under_autocast_matches_the_reference_under_it(tmp_path):
    """The files whose other ops autocast's model covers, scaled to real use, as float32 modules under
    torch.autocast(bfloat16): x stays float32, so the residual's sum promotes to float32 (test_gpu_dtypes' bar)."""
    import dataclasses

    from test_gpu_dtypes import check_file_under_autocast

    from fusegen.spec import SpecError

    arch, cases = torch.cuda.get_device_capability(), []
    for name in FILES:
        f = scaled_copy(MODELS / name, tmp_path)
        try:
            spec = dataclasses.replace(model_spec(f)[0], autocast="bfloat16")
        except SpecError:  # (an op autocast's model does not cover yet: a row mean)
            continue
        cases.append((f, fusegen.write_module(fusegen.plan(spec, fixed_sizes=False, arch=arch), tmp_path / "gen")))
    assert len(cases) >= 2, [f.name for f, _ in cases]
    prebuild([path for _, path in cases])
    for f, path in cases:
        check_file_under_autocast(f, path, f"{f.name} autocast", "normal")
