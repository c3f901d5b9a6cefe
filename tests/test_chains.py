"""The stage library on the CPU: every model file of tests/models renders a module whose ModelNew keeps the file's
constructor (same seed, same weights and state_dict keys; other arguments refused), and every stage template, in
every chain the files hold, compiles with nvcc (forward and backward of both chain segments; with row reductions,
the row kernels; with a BatchNorm, the column kernels)."""
import dataclasses
import subprocess

import pytest
import torch

from helpers import REPO, import_file
from test_compile import NVCC

import fusegen
from fusegen.codegen.render import _environment
from fusegen.dtypes import ELEMENTS, dtype
from fusegen.frontend import GENERATED, load_model_file, model_spec, model_specs
from fusegen.plan import COLS, ROWS

MODELS = REPO / "tests" / "models"
# what torch.utils.cpp_extension adds to every nvcc command line
TORCH_NVCC_FLAGS = ("-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__", "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
                    "-D__CUDA_NO_HALF2_OPERATORS__")
# the files of one Linear and its chain (layers_*.py hold several: tests/test_layers.py)
MODEL_FILES = sorted(p.name for p in MODELS.glob("*.py") if not p.name.startswith(("refuse_", "layers_")))
LAYER_FILES = sorted(p.name for p in MODELS.glob("layers_*.py"))


def test_the_model_files_cover_every_stage():
    kinds = {s.kind for name in MODEL_FILES for s in model_spec(MODELS / name)[0].chain}
    assert kinds >= set(GENERATED), f"no model file uses {sorted(set(GENERATED) - kinds)}"
    assert len([n for n in MODEL_FILES if n.startswith("stage_")]) >= 12


@pytest.mark.parametrize("name", MODEL_FILES)
def test_model_new_keeps_the_model_files_interface(name, tmp_path):
    spec, chain = model_spec(MODELS / name)
    path = fusegen.write_module(fusegen.plan(spec, arch=(9, 0)), tmp_path)
    module, model_file = import_file(path), load_model_file(MODELS / name)
    init = model_file.get_init_inputs()
    torch.manual_seed(3)
    ref = model_file.Model(*init)
    torch.manual_seed(3)
    new = module.ModelNew(*init)
    assert list(ref.state_dict()) == list(new.state_dict())
    assert all(torch.equal(a, b) for a, b in zip(ref.state_dict().values(), new.state_dict().values()))
    new.load_state_dict(ref.state_dict())
    ref.load_state_dict(new.state_dict())
    if spec.interface is not None:  # built for other arguments: a clear error, not wrong results
        with pytest.raises(ValueError, match="this module was generated from"):
            module.ModelNew(*([init[0] + 1] + list(init[1:])))
    with pytest.raises(ValueError, match="runs on CUDA only"):
        new(torch.rand(2, chain.input_size))


@pytest.mark.slow
@pytest.mark.skipif(NVCC is None, reason="nvcc not found")
@pytest.mark.parametrize("element", ELEMENTS)
def test_every_chain_compiles(element, tmp_path):
    """One translation unit: each model file's chain (its stage structs and both segments' forward and
    backward) in a namespace of its own, called from a kernel so that nothing is left uninstantiated. For each
    element type the tensors may hold: the epilogue reads and writes them through to_f32 / to_elem / load, under
    torch's nvcc flags that turn the half types' implicit conversions off. (The planner refuses the half types
    until their GEMM engines exist, so their plans here are the float32 plans with the element swapped.)"""
    env = _environment()
    parts = ["#include <cuda_runtime.h>", "#include <cuda_bf16.h>", "#include <cuda_fp16.h>"]
    specs = [(name, model_spec(MODELS / name)[0]) for name in MODEL_FILES] + [
        (f"{name} layer {i}", spec) for name in LAYER_FILES for i, spec in enumerate(model_specs(MODELS / name)[0])]
    for k, (name, spec) in enumerate(specs):
        p = dataclasses.replace(fusegen.plan(spec, rewrite=False), element=dtype(element))  # (the GEMM chains)
        if p.group_strategy in (ROWS, COLS):  # their kernels themselves instantiate every stage and reduction
            parts += [f"// {name}", f"namespace m{k} {{", env.get_template("types.h.j2").render(plan=p)] + [
                env.get_template(f"{t}.cuh.j2").render(plan=p) for t in (
                    "common", "epilogue/row_state" if p.group_strategy == ROWS else None, "epilogue/epilogue_chain",
                    "epilogue/epilogue_gn_args", "epilogue/epilogue_" + p.group_strategy) if t] + ["}"]
            continue
        chain = env.get_template("epilogue/epilogue_chain.cuh.j2").render(plan=p)
        parts += [f"// {name}", f"namespace m{k} {{", env.get_template("types.h.j2").render(plan=p),
                  env.get_template("common.cuh.j2").render(plan=p),  # (NCHAN, NSCALAR, a dropout's SEED_AT, Philox)
                  chain,
                  "__global__ void probe(fg::StageArgs s, float* out) {",
                  "  float dp[fg::NCHAN > 0 ? fg::NCHAN : 1] = {};",
                  "  const float v = fg::pre_fwd(out[threadIdx.x], blockIdx.x, threadIdx.x, s);",
                  "  out[threadIdx.x] = fg::post_fwd(v, blockIdx.x, threadIdx.x, s) + fg::post_bwd(1.f, v, blockIdx.x, threadIdx.x, s, dp) +",
                  "                     fg::pre_bwd(1.f, v, blockIdx.x, threadIdx.x, s, dp) + dp[0];",
                  "}", "}"]
    cu = tmp_path / "chains.cu"
    cu.write_text("\n".join(parts))
    r = subprocess.run([NVCC, "-arch=sm_80", "-c", str(cu), "-o", str(tmp_path / "chains.o"), *TORCH_NVCC_FLAGS],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]
