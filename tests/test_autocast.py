"""Layers under torch.autocast on the CPU (issue 15): `--autocast bfloat16|float16` plans a float32 layer whose
Linear multiplies 16-bit operands (x and W converted by our kernel) and whose later values sit in the types autocast
gives them (ops.Op.autocast): the 16-bit type until an op on autocast's float32 list (GroupNorm, softmax) or a
float32 tensor operand (a per-channel parameter) turns the chain float32. Its kernels compile for sm_80 and sm_90a,
its binding against torch's headers; the module runs under that autocast only and names the command that fits
otherwise. What it computes is tests/test_gpu_dtypes.py's (against the reference under autocast)."""
import pathlib
import re
import shutil
import subprocess
import sysconfig

import pytest
import torch

from helpers import import_file
from test_chains import TORCH_NVCC_FLAGS
from test_compile import NVCC, _ptxas_report

import fusegen
from fusegen.spec import SpecError, Stage


def _chain(*kinds):
    params = {"leaky_relu": (("negative_slope", 0.01),), "scalar": (("op", "mul"), ("value", 2.0)),
              "channel": (("op", "mul"), ("param", "scale")),
              "group_norm": (("num_groups", 8), ("affine", True), ("eps", 1e-5))}
    return tuple(Stage(k, params.get(k, ())) for k in kinds)


def test_autocast_plans_the_types_autocast_gives():
    p = fusegen.plan(fusegen.Spec(1024, 1024, 64, autocast="bfloat16"), arch=(9, 0))
    assert (p.element.name, p.operand.name, p.output.name, p.converts) == ("float32", "bfloat16", "float32", True)
    assert p.mainloop == "wgmma_bf16" and p.precision == "bf16" and p.wgmma_template == "wgmma_half"
    assert "_acbf16_" in p.module_name and p.kernel_uri.startswith("fg_acbf16_wgmma_bf16_")
    assert all(s.rounds == "as_elem" for s in p.stages)  # after the GroupNorm: float32
    # no op on the float32 list: the whole chain and the output in the operand type
    ew = fusegen.plan(fusegen.Spec(256, 256, 1, stages=_chain("relu", "scalar"), autocast="float16"), arch=(8, 0))
    assert (ew.operand.name, ew.output.name, ew.mainloop) == ("float16", "float16", "mma_f16")
    assert [s.rounds for s in ew.stages] == ["as_op", "as_op"]
    # 16 bits up to the GroupNorm, float32 after it; a float32 parameter promotes as well
    gn = fusegen.plan(fusegen.Spec(256, 256, 8, stages=_chain("relu", "group_norm", "leaky_relu"),
                                   autocast="bfloat16"), arch=(8, 0))
    assert {s.kind: s.rounds for s in gn.stages} == {"relu": "as_op", "leaky_relu": "as_elem"}
    ch = fusegen.plan(fusegen.Spec(256, 256, 1, stages=_chain("relu", "channel", "relu"), autocast="bfloat16"))
    assert [s.rounds for s in ch.stages] == ["as_op", "as_elem", "as_elem"] and ch.output.name == "float32"
    # without autocast nothing changes: the float32 headline keeps its name and its types
    fp32 = fusegen.plan(fusegen.Spec(1024, 1024, 64), arch=(9, 0))
    assert not fp32.converts and fp32.operand == fp32.output == fp32.element and "_ac" not in fp32.module_name


def test_autocast_refuses_what_it_does_not_model():
    with pytest.raises(SpecError, match="a bfloat16 layer has no autocast: leave --autocast out"):
        fusegen.Spec(64, 64, 4, dtype="bfloat16", autocast="bfloat16")
    with pytest.raises(SpecError, match="autocast must be one of bfloat16, float16, got 'float64'"):
        fusegen.Spec(64, 64, 4, autocast="float64")
    with pytest.raises(SpecError, match="under autocast the Linear multiplies bfloat16 ones: leave it out"):
        fusegen.Spec(64, 64, 4, precision="tf32", autocast="bfloat16")
    bn = (Stage("batch_norm", (("eps", 1e-5), ("momentum", 0.1), ("affine", True), ("track", True))),)
    with pytest.raises(SpecError, match=re.escape("stage 0 (BatchNorm1d): what autocast makes of it is not "
                                                  "modelled yet; render the layer without --autocast")):
        fusegen.Spec(64, 64, 1, stages=bn, autocast="bfloat16")


def _autocast_plans():
    yield "fragment wgmma", fusegen.plan(fusegen.Spec(1024, 1024, 64, autocast="bfloat16"), arch=(9, 0))
    yield "fragment mma.sync", fusegen.plan(fusegen.Spec(1024, 1024, 64, autocast="float16"), arch=(8, 0))
    yield "element-wise", fusegen.plan(fusegen.Spec(256, 256, 1, stages=_chain("relu", "scalar"),
                                                    autocast="bfloat16"), fixed_sizes=False)


@pytest.mark.skipif(NVCC is None, reason="nvcc not found")
def test_autocast_kernels_compile_without_spills(tmp_path):
    for name, p in _autocast_plans():
        cu = tmp_path / "kernels.cu"
        cu.write_text(fusegen.render_cuda(p))
        for arch in ("-arch=sm_80",) + (("-gencode=arch=compute_90a,code=sm_90a",) if p.wgmma else ()):
            r = subprocess.run([NVCC, arch, "-c", str(cu), "-o", str(tmp_path / "k.o"), "-Xptxas", "-v",
                                *TORCH_NVCC_FLAGS], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               universal_newlines=True)
            assert r.returncode == 0, f"{name} {arch}:\n{r.stderr[-4000:]}"
            assert "convert_kernel" in r.stderr, name  # x and W are converted by our own kernel
            spills = [row for row in _ptxas_report(r.stderr) if row[2] or row[3]]
            assert not spills, (name, arch, spills)


@pytest.mark.skipif(shutil.which("g++") is None or NVCC is None, reason="g++ or nvcc not found")
def test_autocast_binding_compiles(tmp_path):
    from torch.utils import cpp_extension

    cuda_include = pathlib.Path(cpp_extension.CUDA_HOME or "/usr/local/cuda") / "include"
    includes = list(cpp_extension.include_paths()) + [sysconfig.get_paths()["include"], str(cuda_include)]
    for name, p in _autocast_plans():
        cpp = tmp_path / "binding.cpp"
        cpp.write_text(fusegen.render_binding(p))
        r = subprocess.run(["g++", "-std=c++20", "-fsyntax-only", "-DTORCH_EXTENSION_NAME=fusegen_binding_check"] +
                           [f"-I{d}" for d in includes] + [str(cpp)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
        assert r.returncode == 0, f"{name}:\n{r.stderr[-4000:]}"


def test_module_runs_under_its_autocast_only(tmp_path, monkeypatch):
    """An autocast module called without autocast, and a float32 one called under autocast, refuse naming the
    command that fits (torch.autocast("cuda") needs a GPU: the module's probe of it is replaced here)."""
    plain = import_file(fusegen.write_module(fusegen.Spec(64, 64, 4), tmp_path / "a"), poison=False)
    ac = import_file(fusegen.write_module(fusegen.Spec(64, 64, 4, autocast="bfloat16"), tmp_path / "b"),
                     poison=False)
    assert ac.DTYPE == ac.OUT_DTYPE == torch.float32 and ac.AUTOCAST == torch.bfloat16
    assert "--autocast bfloat16" in ac.RENDER_COMMAND and "_acbf16_" in ac.KERNEL_URI
    x = torch.zeros(2, 64)
    with pytest.raises(RuntimeError, match=re.escape(
            "ModelNew was rendered for torch.autocast(bfloat16), called without autocast; render one for that "
            "with: fusegen render --input 64 --hidden 64 --groups 4")):
        ac._check_input(x, ())
    monkeypatch.setattr(plain, "_autocast_type", lambda: torch.float16)
    with pytest.raises(RuntimeError, match=re.escape(
            "ModelNew was rendered without autocast, called under torch.autocast(float16); render one for that "
            "with: fusegen render --input 64 --hidden 64 --groups 4 --autocast float16")):
        plain._check_input(x, ())
    monkeypatch.setattr(ac, "_autocast_type", lambda: torch.bfloat16)
    with pytest.raises(ValueError, match="runs on CUDA only"):  # past the autocast check: the device's turn
        ac._check_input(x, ())
