"""Render a Plan into sources: the CUDA kernels, the C++ binding and the generated Python module."""
import os
import pathlib
import tempfile

import jinja2

from .explain import explain
from .plan import Plan, plan as make_plan
from .spec import Spec

_PACKAGE = pathlib.Path(__file__).resolve().parent
# Installed: templates ship inside the package (fusegen/templates); in a source tree they sit beside it.
TEMPLATE_DIR = next(p for p in (_PACKAGE / "templates", _PACKAGE.parent / "templates") if p.is_dir())
JIT_RUNTIME = _PACKAGE / "jit.py"

# Flags are part of the build hash (the runtime adds the arch flags); no fast-math: accuracy is the contract.
CUDA_FLAGS = ("-O3",)
CXX_FLAGS = ("-O3",)


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True, autoescape=False)


def _as_plan(spec_or_plan) -> Plan:
    return spec_or_plan if isinstance(spec_or_plan, Plan) else make_plan(spec_or_plan)


def render_cuda(spec_or_plan) -> str:
    return _environment().get_template("kernels.cu.j2").render(plan=_as_plan(spec_or_plan))


def render_binding(spec_or_plan) -> str:
    return _environment().get_template("binding.cpp.j2").render(plan=_as_plan(spec_or_plan))


def _py_literal(source: str) -> str:
    """A raw triple-quoted Python literal holding `source` exactly."""
    if "'''" in source or source.endswith("\\"):
        raise ValueError("source cannot be embedded as a raw string literal")
    return "r'''" + source + "'''"


def render(spec_or_plan) -> str:
    """Source of the generated Python module for a Spec (planned with defaults) or a Plan."""
    p = _as_plan(spec_or_plan)
    return _environment().get_template("module.py.j2").render(
        plan=p, spec=p.spec, render_command=render_command(p), render_command_literal=repr(render_command(p)),
        explanation=_docstring_safe(explain(p)),
        cuda_source=_py_literal(render_cuda(p)), cpp_source=_py_literal(render_binding(p)),
        cuda_flags=list(CUDA_FLAGS) + list(p.arch_flags), cxx_flags=list(CXX_FLAGS), jit_runtime=JIT_RUNTIME.read_text())


def render_command(p: Plan) -> str:
    """The `fusegen render` command line that regenerates this plan's module (tiles: from the tuning table)."""
    s = p.spec
    cmd = f"fusegen render --input {s.input_size} --hidden {s.hidden_size} --groups {s.num_groups}"
    if s.eps != Spec.eps:
        cmd += f" --eps {s.eps!r}"
    if s.negative_slope != Spec.negative_slope:
        cmd += f" --negative-slope {s.negative_slope!r}"
    if s.precision != Spec.precision:
        cmd += f" --precision {s.precision}"
    if not p.fixed_sizes:
        cmd += " --dynamic-sizes"
    if p.tuned_for:
        cmd += f' --gpu "{p.tuned_for}"'
    elif p.mainloop == "wgmma_tf32":
        cmd += " --arch 9.0"

    return cmd


def _docstring_safe(text: str) -> str:
    if '"""' in text or "\\" in text:
        raise ValueError("the explanation cannot sit in a docstring")
    return text


def write_module(spec_or_plan, out_dir="generated") -> pathlib.Path:
    """Render and write <out_dir>/<module_name>.py and its explanation <module_name>.md beside it, each
    atomically (a reader never sees half a file)."""
    p = _as_plan(spec_or_plan)
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{p.module_name}.py"
    _atomic_write(out / f"{p.module_name}.md", explain(p))
    _atomic_write(target, render(p))
    return target


def _atomic_write(path: pathlib.Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
