"""The README's failure table, row by row, where the failure can be produced without a GPU: each gets a clear
error naming what was expected and what came (the GPU rows are in test_gpu_module / test_gpu_real_use, the
build rows in test_jit)."""
import re

import pytest
import torch

from helpers import import_file

import fusegen


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return import_file(fusegen.write_module(fusegen.plan(fusegen.Spec(32, 16, 2)),
                                            tmp_path_factory.mktemp("failures")))


@pytest.fixture(scope="module")
def model(module):
    return module.ModelNew(32, 16, 2)  # on the CPU: the checks come before any kernel


def test_input_on_the_cpu(model):
    with pytest.raises(ValueError, match=r"ModelNew runs on CUDA only; got input on cpu \(move it with x.cuda\(\)\)"):
        model(torch.rand(4, 32))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64, torch.int32])
def test_other_dtypes(model, dtype):
    with pytest.raises(TypeError, match=f"ModelNew expects float32 input, got {dtype}"):
        model(torch.zeros(4, 32, dtype=dtype))


@pytest.mark.parametrize("shape", [(32,), (4, 31), (4, 33), (2, 4, 32), ()])
def test_wrong_rank_or_feature_size(model, shape):
    with pytest.raises(ValueError, match=r"ModelNew expects input of shape \(batch, 32\), got "):
        model(torch.rand(*shape) if shape else torch.tensor(1.0))


def test_not_a_tensor(model):
    with pytest.raises(TypeError, match="ModelNew expects a torch.Tensor, got list"):
        model([[0.0] * 32])


def test_module_built_for_other_sizes(module):
    with pytest.raises(ValueError, match="generate one that fits with: fusegen render --input 64 --hidden 16 --groups 2"):
        module.ModelNew(64, 16, 2)


def test_no_gpu_fails_at_forward_not_at_import(module):
    # importing and building the module needs no GPU (the reference does neither); the first forward of CUDA
    # input is where a missing GPU would show, as torch's own error from x.cuda() / model.cuda()
    m = module.ModelNew(32, 16, 2)
    assert sum(p.numel() for p in m.parameters()) == 32 * 16 + 16 + 2 * 16
    assert module._KERNELS == []  # nothing was compiled or loaded


@pytest.mark.parametrize("capability,precision,arch,words", [
    ((7, 5), "3xtf32", None, "runs on tensor cores of sm_80 or newer"),
    ((8, 0), "3xtf32", (9, 0), "use Hopper's wgmma (built for sm_90a: H100/H200)"),
    ((10, 0), "tf32", (9, 0), "use Hopper's wgmma"),
])
def test_module_for_another_gpu_refuses_and_names_the_render_command(tmp_path, monkeypatch, capability, precision,
                                                                     arch, words):
    m = import_file(fusegen.write_module(fusegen.plan(fusegen.Spec(32, 16, 2, precision=precision), arch=arch),
                                         tmp_path))
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "GPU Q")
    with pytest.raises(RuntimeError, match=re.escape(words)) as e:
        m._check_device(torch.device("cuda", 0))
    assert "GPU Q" in str(e.value)
    command = str(e.value).split("with: ")[1]
    assert command.startswith("fusegen render --input 32 --hidden 16 --groups 2") and command.count("--arch") <= 1
    assert ("--precision fp32" in command) == (capability < (8, 0))
