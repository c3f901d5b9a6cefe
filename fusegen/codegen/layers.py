"""Several GEMMs in one model (Linear -> chain -> Linear -> chain ...): one fused layer a GEMM, each the module
`render` makes for its Plan, composed in one generated file. The composite's ModelNew keeps the model file's
constructor and runs each layer's forward on itself (the layers read their parameters by the file's names); autograd
chains their backwards in reverse, each layer keeping what its own backward reads."""
import hashlib
import pathlib

from .explain import explain
from .render import _environment, layer, render, render_command, write_pair


def layers_name(plans) -> str:
    """The composite module's name: each layer's chain, the sizes, a hash over the layers' module names."""
    first = plans[0]
    digest = hashlib.sha256(" ".join(p.module_name for p in plans).encode()).hexdigest()[:8]
    kind = f"_{first.element.short}" if first.element.short else ""
    widths = "_".join(f"h{p.spec.hidden_size}" for p in plans)
    chains = "__".join(p.chain_name for p in plans)
    return f"layers{len(plans)}_{chains}_i{first.spec.input_size}_{widths}{kind}_{digest}"


def render_layers(plans) -> str:
    """Source of the composite module for the plans of a model file's layers, in order."""
    plans = tuple(plans)
    interfaces = {p.spec.interface for p in plans}
    if len(plans) < 2 or None in interfaces or len({(f.init_source, f.source) for f in interfaces}) != 1:
        raise ValueError("render_layers composes two or more layers of one model file (plans with its interface)")
    handed = [k for k, p in enumerate(plans[:-1]) if p.converts and not p.feeds_layer]
    if handed:  # (its 16-bit output would reach a float32 module under autocast: plan it to hand on float32)
        raise ValueError(f"layer {handed[0]} runs under autocast and feeds the next layer: plan it with "
                         "feeds_layer=True")
    # the command that regenerates them all: the one naming the GPU the layers were tuned on, if any
    command = next((render_command(p) for p in plans if p.tuned_for), render_command(plans[0]))
    return _environment().get_template("layers.py.j2").render(
        name=layers_name(plans), plans=plans, layers=[layer(p) for p in plans], face=plans[0].spec.interface,
        first=layer(plans[0]), render_command=command, render_command_literal=repr(command),
        fusegen_version=plans[0].fusegen_version, sources=[_py_string(render(p)) for p in plans])


def explain_layers(plans) -> str:
    """Markdown: each layer's explanation under a heading of its own."""
    parts = [f"# {layers_name(plans)}: {len(plans)} fused layers", ""]
    for k, p in enumerate(plans):
        parts += [f"## Layer {k}", ""] + ["#" + ln if ln.startswith("#") else ln for ln in explain(p).splitlines()]
        parts.append("")
    return "\n".join(parts)


def write_layers(plans, out_dir="generated") -> pathlib.Path:
    """Render and write <out_dir>/<name>.py and its explanation <name>.md, each atomically."""
    plans = tuple(plans)
    return write_pair(out_dir, layers_name(plans), explain_layers(plans), render_layers(plans))


def _py_string(source: str) -> str:
    """A triple-quoted Python literal holding a module's source exactly (its own raw ''' strings escaped)."""
    return "'''" + source.replace("\\", "\\\\").replace("'''", "\\'\\'\\'") + "'''"
