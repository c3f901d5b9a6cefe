"""fusegen: generates fused CUDA kernels for Linear -> GroupNorm -> LeakyReLU -> x + x.

Pipeline: Spec (what the user asks for) -> plan() (tiles, group strategy) -> render() (Jinja2 templates into
CUDA, C++ binding and a Python module) -> the generated module builds itself on first use (fusegen/runtime/jit.py).

Packages, in pipeline order (imports flow one way: spec and ops <- frontend, plan <- codegen; the runtime is
embedded as text; tools/ may import anything, the library never imports tools/):
spec.py, dtypes.py   what the user asks for; element types
ops/                 the op registry: every op after the GEMM, declared once
frontend/            a model file's layer -> a chain of stages -> a Spec (`fusegen from-model`)
plan/                Spec -> Plan: GEMM engine and tile (tuning table), group strategy, the epilogue's stages
codegen/             Plan -> CUDA, C++ binding, Python module (Jinja2 templates), and its explanation
runtime/             the build runtime embedded into every generated module
tools/               the command line, the autotuner, check and bench, the accuracy bar
"""
__version__ = "0.3.0"

from .codegen import render, render_binding, render_cuda, write_module  # noqa: E402
from .plan import WGMMA_ARCH, GemmTile, MmaTile, Plan, WgmmaTile, plan  # noqa: E402
from .spec import Spec, SpecError  # noqa: E402

__all__ = ["Spec", "SpecError", "GemmTile", "MmaTile", "WgmmaTile", "WGMMA_ARCH", "Plan", "plan", "render", "render_cuda", "render_binding",
           "write_module", "__version__"]
