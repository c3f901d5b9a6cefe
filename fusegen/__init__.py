"""fusegen: generates fused CUDA kernels for Linear -> GroupNorm -> LeakyReLU -> x + x.

Pipeline: Spec (what the user asks for) -> plan() (tiles, group strategy) -> render() (Jinja2 templates into
CUDA, C++ binding and a Python module) -> the generated module builds itself on first use (fusegen/jit.py).
"""
__version__ = "0.3.0"

from .plan import WGMMA_ARCH, GemmTile, MmaTile, Plan, WgmmaTile, plan  # noqa: E402
from .render import render, render_binding, render_cuda, write_module  # noqa: E402
from .spec import Spec, SpecError  # noqa: E402

__all__ = ["Spec", "SpecError", "GemmTile", "MmaTile", "WgmmaTile", "WGMMA_ARCH", "Plan", "plan", "render", "render_cuda", "render_binding",
           "write_module", "__version__"]
