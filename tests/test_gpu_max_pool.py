"""MaxPool1d over the features on the GPU (ops/pool.py MAX_POOL, templates/ops/pool_max_pool.cuh.j2): each
pool_max_*.py file's forward and every gradient against an fp64 run of its Model (compare_models' bar) at its own
size and scaled to real use on the planned engine (tests/test_gpu_chains.py runs them on both engine families
too); exact ties send the gradient where torch's kernel does (the first maximum); bfloat16 and autocast against the
reference in its type (test_gpu_dtypes' bar); torch.compile traces it."""
import dataclasses

import pytest
import torch

from helpers import (REPO, assert_compiled_matches_eager, build_file_sizes, check_file_sizes_fp64, gpu_available,
                     import_file, prebuild)

import fusegen
from fusegen.frontend import load_model_file, model_spec

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="needs a CUDA GPU and nvcc")]

MODELS = REPO / "tests" / "models"
FILES = sorted(p.name for p in MODELS.glob("pool_max_*.py"))
# bfloat16 layers; under autocast (float32 layers whose Linear runs in bfloat16) the files whose stages autocast's
# model covers (a sum over the row is not modelled under autocast yet)
HALF_FILES = {"bfloat16": ["pool_max_overlap_gn_gelu.py", "pool_max_sum_scale.py"],
              "autocast": ["pool_max_overlap_gn_gelu.py", "pool_max_dilated_softmax_scale.py"]}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Each file's float32 module at its own and the scaled size, and the 16-bit ones at their own (bfloat16 and
    under autocast), built in parallel."""
    arch = torch.cuda.get_device_capability()
    out = tmp_path_factory.mktemp("max_pool")

    def plan_of(f):
        p = fusegen.plan(model_spec(f)[0], fixed_sizes=False, arch=arch)
        assert p.row_pool is not None and p.group_strategy == "rows", f"{f.name}: the pool is not in the row kernels"
        return p
    half = {}
    for kind, change in (("bfloat16", dict(dtype="bfloat16")), ("autocast", dict(autocast="bfloat16"))):
        for name in HALF_FILES[kind]:
            spec = dataclasses.replace(model_spec(MODELS / name)[0], **change)
            half[name, kind] = fusegen.write_module(fusegen.plan(spec, fixed_sizes=False, arch=arch), out / kind)
    prebuild(sorted(half.values()))
    paths = build_file_sizes(FILES, MODELS, out / "fp32", plan_of)
    paths.update(half)
    return paths


@pytest.mark.parametrize("name", FILES)
def test_max_pool_forward_and_gradients_match_fp64(name, built):
    check_file_sizes_fp64(built, name, FILES, "max pool")


@pytest.mark.parametrize("name", ["pool_max_sum_scale.py", "pool_max_wider_relu_residual.py"])
def test_ties_send_the_gradient_to_the_first_maximum(name, built):
    """Integer inputs, weights and output gradients (every product and sum exact in fp32 and in 3xTF32) with each odd
    weight row (and bias) a copy of the even one before it: windows of exact ties, whose gradient goes to the first.
    Output and every gradient equal the reference's bit for bit (the last maximum would swap weight rows' grads)."""
    f, path = built[name, "big"]  # at real use: the tensor-core engines
    model_file, module = load_model_file(f), import_file(path)
    init = model_file.get_init_inputs()
    batch, input_size = model_file.get_inputs()[0].shape
    gen = torch.Generator(device="cuda").manual_seed(3)
    models = []
    for cls in (model_file.Model, module.ModelNew):
        torch.manual_seed(0)
        models.append(cls(*init).cuda())
    w = torch.randint(-3, 4, models[0].state_dict()[next(k for k in models[0].state_dict() if k.endswith("weight"))]
                      .shape, device="cuda", generator=gen).float()
    w[1::2] = w[0::2][:w[1::2].shape[0]]
    for m in models:
        with torch.no_grad():
            lin = next(mod for mod in m.modules() if isinstance(mod, torch.nn.Linear))
            lin.weight.copy_(w)
            if lin.bias is not None:
                b = torch.arange(lin.bias.numel(), device="cuda").float() // 2 - 7.0
                lin.bias.copy_(b)
    x = torch.randint(-3, 4, (batch, input_size), device="cuda", generator=gen).float()
    outs = []
    for m in models:
        xin = x.clone().requires_grad_()
        out = m(xin)
        g = torch.randint(-3, 4, out.shape, device="cuda", generator=torch.Generator(device="cuda").manual_seed(5))
        out.backward(g.float())
        outs.append([out.detach(), xin.grad] + [p.grad for p in m.parameters()])
    labels = ["out", "grad x"] + [n for n, _ in models[0].named_parameters()]
    for label, a, b in zip(labels, *outs):
        assert torch.equal(a, b), f"{name}: {label} differs from the reference's (max |diff| {(a - b).abs().max()})"


@pytest.mark.parametrize("name", HALF_FILES["bfloat16"])
def test_bfloat16_max_pool_matches_the_reference_in_its_type(name, built):
    from test_gpu_dtypes import check_files_against_reference

    check_files_against_reference([(MODELS / name, built[name, "bfloat16"], None)], "bfloat16")


@pytest.mark.parametrize("name", HALF_FILES["autocast"])
def test_max_pool_under_autocast_matches_the_reference_under_it(name, built):
    from test_gpu_dtypes import check_file_under_autocast

    check_file_under_autocast(MODELS / name, built[name, "autocast"], f"{name} autocast", dist="normal")


def test_max_pool_runs_inside_torch_compile(built):
    if not hasattr(torch.library, "custom_op"):
        pytest.skip("custom operators need torch >= 2.4")
    f, path = built["pool_max_dilated_softmax_scale.py", "small"]
    model_file, module = load_model_file(f), import_file(path)
    torch.manual_seed(0)
    model = module.ModelNew(*model_file.get_init_inputs()).cuda()
    x = torch.randn(7, model_file.get_init_inputs()[0], device="cuda")
    assert_compiled_matches_eager(model, x)


def test_rows_wider_than_a_warp_run_on_the_block_team(tmp_path):
    """Over 1024 pooled features the row kernels give a row a block (TEAM 256: block-wide merges, __syncthreads
    before dz gathers the pairs): pool_max_overlap_gn_gelu.py at 4224 -> 2112 features, against fp64."""
    from fusegen.tools.accuracy import compare_models

    text = (MODELS / "pool_max_overlap_gn_gelu.py").read_text()
    for k, v in (("batch_size", 40), ("input_size", 300), ("hidden_size", 4224), ("num_groups", 264)):
        text = text.replace(next(ln for ln in text.splitlines() if ln.startswith(f"{k} = ")), f"{k} = {v}")
    f = tmp_path / "pool_max_wide.py"
    f.write_text(text)
    p = fusegen.plan(model_spec(f)[0], fixed_sizes=False, arch=torch.cuda.get_device_capability())
    assert p.row_team == 256 and p.spec.features == 2112
    path = fusegen.write_module(p, tmp_path / "out")
    prebuild([path])
    model_file, module = load_model_file(f), import_file(path)
    for seed, (batch, dist) in enumerate(((40, "normal"), (1, "uniform"), (77, "laplace"))):
        report, problems = compare_models(module.ModelNew, model_file.Model, model_file.get_init_inputs(),
                                          (batch, 300), seed, dist=dist)
        print(f"\nwide max pool [batch {batch}, {dist}]: " + ", ".join(
            f"{k} {v[0]:.2g}/{v[1]:.2g}" for k, v in report.items() if isinstance(v, tuple) and k != "kink_flips"))
        assert not problems, "\n".join(problems)
