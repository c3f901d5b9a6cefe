"""Layers under torch.autocast on the GPU (issue 15): a float32 module rendered with `--autocast` against the float32
reference, both called under torch.autocast("cuda", dtype) (backward outside it, as training runs it): output type
and shape as the reference's, allclose(1e-2) but for test_gpu_dtypes's few, and the output and every gradient no
farther from fp64 than the reference under autocast (ratio <= 1.5; test_gpu_dtypes.check_against_reference). The
headline on each engine from one row to real use; model files whose chains stay 16-bit (ReLU, x * 2), turn
float32 at a parameter, or at a GroupNorm and softmax beside row reductions, at their own and a tensor-core size."""
import dataclasses

import pytest
import torch

from helpers import gpu_available, import_file, prebuild, reference_namespace, selected_params
from test_gpu_chains import MODELS, scaled_copy
from test_gpu_dtypes import DTYPES, ENGINES, _engines, check_against_reference, check_file_under_autocast

import fusegen
from fusegen.frontend import model_spec

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="needs a CUDA GPU and nvcc")]

# (batch, input, hidden, groups): primes, the narrow tile, the main tile, real use
SHAPES = [(37, 200, 160, 10), (16, 1024, 1024, 32), (1024, 1024, 1024, 32), (512, 4096, 4096, 128)]
MODEL_FILES = ["relu_scale.py", "stage_channel_scale.py", "row_gn_softmax.py"]


@pytest.fixture(scope="module")
def built(request, tmp_path_factory):
    """(dtype, shape, engine) and (file, size, engine) -> module file, all built in parallel first."""
    out = tmp_path_factory.mktemp("autocast")
    (out / "big").mkdir()
    paths = {}
    for dtype, shape, engine in selected_params(request, ("dtype", "shape", "engine")):
        spec = fusegen.Spec(*shape[1:], autocast=dtype)
        paths[dtype, shape, engine] = fusegen.write_module(fusegen.plan(spec, fixed_sizes=False,
                                                                        **ENGINES[engine]), out / dtype)
    for name, engine in selected_params(request, ("name", "engine")):
        for size, f in (("small", MODELS / name), ("big", out / "big" / name)):
            if size == "big" and not f.exists():
                scaled_copy(MODELS / name, out / "big")
            spec = model_spec(f)[0]
            spec = dataclasses.replace(spec, autocast="bfloat16")
            plan = fusegen.plan(spec, fixed_sizes=False, **ENGINES[engine])
            paths[name, size, engine] = (f, fusegen.write_module(plan, out / f"files-{engine}"))
    prebuild(sorted({p if not isinstance(p, tuple) else p[1] for p in paths.values()}))
    return paths


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("engine", _engines())
def test_headline_under_autocast_matches_the_reference_under_it(dtype, shape, engine, built):
    batch, input_size, hidden, groups = shape
    module = import_file(built[dtype, shape, engine], poison=True)
    torch.manual_seed(0)
    ref = reference_namespace()["Model"](input_size, hidden, groups).cuda()
    torch.manual_seed(0)
    new = module.ModelNew(input_size, hidden, groups).cuda()
    check_against_reference(new, ref, batch, input_size, "normal", torch.float32, f"headline {dtype} {shape}",
                            autocast=DTYPES[dtype], headline=True)
    with pytest.raises(RuntimeError, match="rendered for torch.autocast"):  # and outside autocast it refuses
        new(torch.zeros(2, input_size, device="cuda"))


@pytest.mark.parametrize("name", MODEL_FILES)
@pytest.mark.parametrize("engine", _engines())
def test_model_file_under_autocast_matches_the_reference_under_it(name, engine, built):
    for size in ("small", "big"):
        f, path = built[name, size, engine]
        check_file_under_autocast(f, path, f"{name} {size}")
