"""Code generation's face: a Plan rendered through the Jinja2 templates into the CUDA kernels, the C++ binding and
the generated Python module (codegen/render.py), with its explanation in words (codegen/explain.py). The function
`render` takes the name of its submodule here, as it does on fusegen: sys.modules["fusegen.codegen.render"] is the
module."""
from .layers import render_layers, write_layers
from .render import TEMPLATE_DIR, render, render_binding, render_cuda, write_module

__all__ = ["render", "render_cuda", "render_binding", "write_module", "render_layers", "write_layers", "TEMPLATE_DIR"]
