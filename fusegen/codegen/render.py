"""Render a Plan into sources: the CUDA kernels, the C++ binding and the generated Python module."""
import os
import pathlib
import tempfile
import types

import jinja2

from ..dtypes import FLOAT32
from ..ops import chain_title, op
from ..plan import Plan, RowSumPlan, plan as make_plan
from ..plan.planner import THREE_FP16, THREE_FP16_MMA
from ..spec import TF32X3, Spec
from .explain import explain

_PACKAGE = pathlib.Path(__file__).resolve().parent.parent  # fusegen/
# Installed: templates ship inside the package (fusegen/templates); in a source tree they sit beside it.
TEMPLATE_DIR = next(p for p in (_PACKAGE / "templates", _PACKAGE.parent / "templates") if p.is_dir())
JIT_RUNTIME = _PACKAGE / "runtime" / "jit.py"

# Flags are part of the build hash (the runtime adds the arch flags); no fast-math: accuracy is the contract.
CUDA_FLAGS = ("-O3",)
CXX_FLAGS = ("-O3",)


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True, autoescape=False)


def _as_plan(spec_or_plan) -> Plan:
    return spec_or_plan if isinstance(spec_or_plan, (Plan, RowSumPlan)) else make_plan(spec_or_plan)


def render_cuda(spec_or_plan) -> str:
    p = _as_plan(spec_or_plan)
    return _environment().get_template(_templates(p) + "kernels.cu.j2").render(plan=p)


def render_binding(spec_or_plan) -> str:
    p = _as_plan(spec_or_plan)
    return _environment().get_template(_templates(p) + "binding.cpp.j2").render(plan=p)


def _templates(p) -> str:
    """The folder of a plan's kernel and binding templates: the GEMM's at the top, the rewrite's in row_sum/."""
    return "row_sum/" if isinstance(p, RowSumPlan) else ""


def _py_literal(source: str) -> str:
    """A raw triple-quoted Python literal holding `source` exactly."""
    if "'''" in source or source.endswith("\\"):
        raise ValueError("source cannot be embedded as a raw string literal")
    return "r'''" + source + "'''"


# The module docstring's words for how its GEMMs multiply (Plan.precision)
PRECISION_LINE = {"3xtf32": "tensor cores, fp32-accurate: each operand split into two TF32 parts",
                  "tf32": "tensor cores, TF32 operands: ~3e-4 relative error, fails allclose(1e-4, 1e-4)",
                  "fp32": "plain fp32 FFMA, any GPU",
                  "bf16": "tensor cores, bfloat16 operands, fp32 sums",
                  "f16": "tensor cores, float16 operands, fp32 sums"}


def render(spec_or_plan) -> str:
    """Source of the generated Python module for a Spec (planned with defaults) or a Plan."""
    p = _as_plan(spec_or_plan)
    if isinstance(p, RowSumPlan):
        return _render_row_sum(p)
    return _environment().get_template("module.py.j2").render(
        plan=p, spec=p.spec, layer=layer(p), render_command=render_command(p), render_command_literal=repr(render_command(p)),
        explanation=_docstring_safe(explain(p)), precision_words=PRECISION_LINE[p.precision],
        cuda_source=_py_literal(render_cuda(p)), cpp_source=_py_literal(render_binding(p)),
        cuda_flags=list(CUDA_FLAGS) + list(p.arch_flags), cxx_flags=list(CXX_FLAGS), jit_runtime=JIT_RUNTIME.read_text())


def _render_row_sum(p: RowSumPlan) -> str:
    """The row-sum rewrite's module (templates/row_sum/): its own kernels, binding and module."""
    env = _environment()
    return env.get_template("row_sum/module.py.j2").render(
        plan=p, spec=p.spec, layer=layer(p), render_command=render_command(p),
        render_command_literal=repr(render_command(p)), explanation=_docstring_safe(explain(p)),
        cuda_source=_py_literal(render_cuda(p)), cpp_source=_py_literal(render_binding(p)), cuda_flags=list(CUDA_FLAGS),
        cxx_flags=list(CXX_FLAGS), jit_runtime=JIT_RUNTIME.read_text())


def _attr_expr(qualname: str) -> str:
    """Python that reads parameter `qualname` of self: attribute access where the name allows it."""
    if all(part.isidentifier() for part in qualname.split(".")):
        return "self." + qualname
    return f"self.get_parameter({qualname!r})"


def _param_expr(qualname: str) -> str:
    """Python that reads parameter `qualname` of self through the modules' dictionaries (_param in the module
    template): nn.Module's attribute lookup costs ~0.6 us a hop, ~5 us for the headline's four parameters a
    call (measured on the CPU machine, torch 2.13), as much as the kernels' launch."""
    if not all(part.isidentifier() for part in qualname.split(".")):
        return _attr_expr(qualname)
    return "_param(self, " + ", ".join(f"\"{part}\"" for part in qualname.split(".")) + ")"


def layer(p: Plan):
    """What the module template says about the layer: its title, constructor, the tensors and constants the
    kernels take and where ModelNew finds them (attributes of the headline module, or the model file's names)."""
    s = p.spec
    chain, face = s.chain, s.interface
    gn = chain[p.gn_index] if p.gn_index >= 0 else None
    bn = chain[p.column_norm] if p.column_norm >= 0 else None
    norm = gn or bn
    if face is None:
        weight, bias, weight_expr = "fc.weight", "fc.bias", _param_expr("fc.weight")
    else:
        weight, bias = face.weight, face.bias
        weight_expr = _param_expr(weight) + (".t()" if face.weight_in_out else "")  # the kernels' (out, in) view
    tensors = [dict(name="weight", qualname=weight, expr=weight_expr)]
    if s.bias:
        tensors.append(dict(name="bias", qualname=bias, expr=_param_expr(bias)))
    if p.norm_affine:
        for name, key in (("gamma", "weight"), ("beta", "bias")):
            tensors.append(dict(name=name, qualname=norm.param(key), expr=_param_expr(norm.param(key))))
    chan_names = []
    for k, (index, key) in enumerate(p.chan_slots):
        chan_names.append(f"p{k}")
        q = chain[index].param(key)
        tensors.append(dict(name=f"p{k}", qualname=q, expr=_param_expr(q) + ".view(-1)"))  # (hidden,) or (1, hidden)
    if face is None:
        # (through the modules' dictionary, as _param_expr: attribute lookups of submodules cost a microsecond)
        scalar_exprs = ["float(self._modules[\"leaky_relu\"].negative_slope)"]
        eps_expr = "float(self._modules[\"gn\"].eps)"
    else:
        scalar_exprs = [_scalar_expr(chain[i], key) for i, key in p.scalar_slots]
        eps_expr = repr(float(norm.param("eps"))) if norm else "1e-5  # unused: no GroupNorm"
    # the BatchNorm's buffers: the running statistics forward reads in eval (empty tensors without them), and
    # all three for the update in training
    buffers = [dict(name=key, expr=_attr_expr(bn.param(key)) if bn.param(key) else "x.new_empty(0)")
               for key in op(bn.kind).buffers] if bn else []
    module = _attr_expr(bn.param("module")) if bn else ""
    names = [t["name"] for t in tensors]
    present = set(names)
    scalar_names = [f"s{k}" for k in range(len(p.scalar_slots))]
    # dropout: a call draws its seed only while some dropout is on (p > 0: training), as torch's draws only then
    drop_slots = [k for k, (i, key) in enumerate(p.scalar_slots) if op(chain[i].kind).random and key == "p"]
    return types.SimpleNamespace(
        headline=face is None,
        out_dims={"full": "batch, FEATURES" if p.row_pool else "batch, HIDDEN_SIZE", "keepdim": "batch, 1",
                  "flat": "batch"}[s.out_shape],
        pool_title=op(chain[0].kind).title_of(chain[0]) if p.row_pool else "",
        title=chain_title(chain, p.weight_pool.title if p.weight_pool else None),
        tensors=tensors, tensor_names=names, chan_names=chan_names,
        buffers=buffers, read_buffers=[b["name"] for b in buffers[:2]],
        # Python: the BatchNorm normalizes with the batch's statistics (batch 1 is refused then); it updates the
        # running ones (training with them); its momentum
        batch_stats_expr=op(bn.kind).live_expr("batch_stats", module) if bn else "",
        update_expr=f"{module}.training and {module}.running_mean is not None" if bn else "",
        momentum_expr=op(bn.kind).live_expr("momentum", module) if bn else "",
        scalar_names=scalar_names, scalar_exprs=scalar_exprs, eps_expr=eps_expr,
        # the binding's scalars: the stages' constants, then the seed's words
        scalar_list="[" + ", ".join(scalar_names + (["*seed.tolist()"] if p.seeded else [])) + "]",
        draws_expr=" or ".join(f"scalars[{k}] > 0.0" for k in drop_slots),
        saved_names=["x", "weight"] + [n for n in names if n not in ("weight", "bias")] + ["z", "mean", "rstd"] +
        (["seed"] if p.seeded else []),
        # values of each gradient after the weight's: a channel's, or a scalar parameter's one
        # (after a pool over the features the chain's parameters have its FEATURES, the bias the Linear's HIDDEN_SIZE)
        grad_sizes=["1" if t["name"] in [f"p{k}" for k in p.scalar_chan_slots] else
                    "FEATURES" if p.row_pool and t["name"] != "bias" else "HIDDEN_SIZE" for t in tensors[1:]],
        arg=lambda name: name if name in present else "empty",
        # whether forward / backward pass `empty` for an absent bias or GroupNorm affine (else no lookup a call)
        forward_absent=not {"bias", "gamma", "beta"} <= present, backward_absent=not {"gamma", "beta"} <= present,
        param_names=", ".join(f"`{t['qualname']}`" for t in tensors if t["name"] not in chan_names) +
        "".join(f", `{chain[i].param(k)}`" for i, k in p.chan_slots) if face else "`fc`, then `gn`",
        imports=list(face.imports) if face else [],
        init_args="{" + ", ".join(f"{k!r}: {v}" for k, v in face.init_args) + "}" if face else "",
        init_call=", ".join(f"{k}={v}" for k, v in face.init_args) if face else "",
        init_source=_indent(face.init_source, 4) if face else "",
    )


def _scalar_expr(stage, key) -> str:
    """Python for a stage's runtime scalar: read from its module at each call (BatchNorm's mode and momentum), or
    the constant it was traced with."""
    if key in dict(op(stage.kind).live) and stage.param("module") is not None:
        module = stage.param("module")
        return op(stage.kind).live_expr(key, _attr_expr(module) if module else "self", stage)
    return _float_literal(stage.param(key), key)


def _float_literal(value, key) -> str:
    if value is None:  # clamp without that bound
        return 'float("-inf")' if key == "min" else 'float("inf")'
    return repr(float(value))


def _indent(text: str, n: int) -> str:
    return "\n".join((" " * n + line) if line.strip() else "" for line in text.splitlines())


# 3xtf32's tensor-core engines: whether each reads two scaled fp16 planes an operand
_PLANES_ENGINES = {"wgmma_3xf16s": True, "wgmma_tf32": False, "mma_3xf16s": True, "mma_tf32": False}


def _planes_flag(p: Plan) -> str:
    """--planes where the plan's 3xtf32 engine is not its GPU family's default (THREE_FP16 on wgmma,
    THREE_FP16_MMA on mma.sync)."""
    planes = _PLANES_ENGINES.get(p.mainloop) if p.spec.precision == TF32X3 else None
    default = THREE_FP16 if p.mainloop.startswith("wgmma") else THREE_FP16_MMA
    return "" if planes is None or planes == default else " --planes on" if planes else " --planes off"


def render_command(p: Plan) -> str:
    """The command line that regenerates this plan's module (tiles: from the tuning table)."""
    s = p.spec
    if s.interface is not None:
        return f"fusegen from-model {s.interface.source}" + _type_flags(s) + _target_flags(p)
    cmd = f"fusegen render --input {s.input_size} --hidden {s.hidden_size} --groups {s.num_groups}"
    if s.eps != Spec.eps:
        cmd += f" --eps {s.eps!r}"
    if s.negative_slope != Spec.negative_slope:
        cmd += f" --negative-slope {s.negative_slope!r}"
    cmd += _type_flags(s)
    if not p.fixed_sizes:
        cmd += " --dynamic-sizes"
    return cmd + _target_flags(p)


def _type_flags(s: Spec) -> str:
    """--precision, --dtype and --autocast where the spec's differ from the defaults."""
    return ((f" --precision {s.precision}" if s.precision != Spec.precision else "")
            + (f" --dtype {s.dtype}" if s.dtype != FLOAT32.name else "")
            + (f" --autocast {s.autocast}" if s.autocast else ""))


def _target_flags(p: Plan) -> str:
    """The GPU the plan was tuned for (else --arch 9.0 for a wgmma plan), then --planes where it is not the
    default."""
    target = f' --gpu "{p.tuned_for}"' if p.tuned_for else " --arch 9.0" if p.wgmma else ""
    return target + _planes_flag(p)


def _docstring_safe(text: str) -> str:
    if '"""' in text or "\\" in text:
        raise ValueError("the explanation cannot sit in a docstring")
    return text


def write_module(spec_or_plan, out_dir="generated") -> pathlib.Path:
    """Render and write <out_dir>/<module_name>.py and its explanation <module_name>.md beside it, each
    atomically (a reader never sees half a file)."""
    p = _as_plan(spec_or_plan)
    return write_pair(out_dir, p.module_name, explain(p), render(p))


def write_pair(out_dir, name, explanation, source) -> pathlib.Path:
    """<out_dir>/<name>.md and <name>.py (the one returned), each written atomically."""
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _atomic_write(out / f"{name}.md", explanation)
    _atomic_write(out / f"{name}.py", source)
    return out / f"{name}.py"


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
