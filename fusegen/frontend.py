"""Front end of `fusegen from-model`: load a benchmark-style model file, trace `Model(*get_init_inputs())` with
torch.fx, and match the graph `linear -> stage -> stage -> ...`; refuse anything outside that family, naming the
op, the file and line, and what is supported.

Today the renderer generates one chain, the headline family (GroupNorm -> LeakyReLU -> x + x); every stage below
is recognized so that other chains are refused for what they are rather than misread.
"""
import dataclasses
import importlib.util
import inspect
import itertools
import operator
import pathlib

import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

from .spec import Spec, Stage

# stage kind -> how it appears (for messages and the README table)
STAGES = {
    "group_norm": "nn.GroupNorm, F.group_norm",
    "leaky_relu": "nn.LeakyReLU, F.leaky_relu",
    "relu": "nn.ReLU, F.relu, torch.relu",
    "gelu": "nn.GELU, F.gelu",
    "silu": "nn.SiLU, F.silu",
    "sigmoid": "nn.Sigmoid, torch.sigmoid",
    "tanh": "nn.Tanh, torch.tanh",
    "add_self": "x + x",
    "scalar": "x * c, x / c, x + c, x - c (a constant)",
}
GENERATED = ("group_norm", "leaky_relu", "add_self")  # the chain the renderer emits today
# why an op is outside the family, by a piece of its lower-cased name without underscores (first match wins)
REFUSED_WHY = {
    "softmax": "a reduction over the hidden dimension", "logsumexp": "a reduction over the hidden dimension",
    "mean": "a reduction", "sum": "a reduction", "max": "a reduction", "min": "a reduction",
    "batchnorm": "BatchNorm: statistics over the batch", "linear": "a second GEMM", "matmul": "a second GEMM",
    "bmm": "a second GEMM", "dropout": "dropout in training",
}


class ModelError(ValueError):
    """The model file is outside what fusegen generates; the message says what, where and what is supported."""


@dataclasses.dataclass(frozen=True)
class Chain:
    input_size: int
    hidden_size: int
    bias: bool
    stages: tuple  # of Stage
    source: str  # the model file

    def describe(self) -> str:
        return " -> ".join(["linear"] + [s.kind for s in self.stages])


def load_model_file(path):
    """The file's namespace (it must define Model, get_init_inputs and get_inputs)."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise ModelError(f"{path}: no such file")
    spec = importlib.util.spec_from_file_location(f"fusegen_model_{path.stem}", str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    missing = [n for n in ("Model", "get_init_inputs", "get_inputs") if not hasattr(module, n)]
    if missing:
        raise ModelError(f"{path}: a benchmark-style model file defines Model, get_init_inputs and get_inputs; "
                         f"missing {', '.join(missing)}")
    return module


def _where(node, path):
    """file:line of the node's op in the model file, from the tracer's recorded stack."""
    trace = node.meta.get("stack_trace") or ""
    lines = [ln for ln in trace.splitlines() if str(path) in ln or path.name in ln]
    for ln in reversed(lines):
        if "line " in ln:
            return f"{path}:{ln.split('line ')[1].split(',')[0]}"
    return str(path)


def _op_name(node, modules):
    if node.op == "call_module":
        return type(modules[node.target]).__name__
    if node.op in ("call_function", "call_method"):
        return getattr(node.target, "__name__", str(node.target))
    return node.op


def _refuse(node, modules, path, why=None):
    name = _op_name(node, modules)
    key = name.lower().replace("_", "")
    reason = why or next((v for k, v in REFUSED_WHY.items() if k in key), "not a supported stage")
    raise ModelError(f"{_where(node, path)}: {name} ({reason}) is outside what fusegen generates: a Linear followed "
                     f"by a chain of element-wise stages and GroupNorm ({'; '.join(STAGES.values())})")


def _constant(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _stage(node, x, modules, path, training):
    """The Stage node applies to its data input x, or None when node is not a stage."""
    m = modules.get(node.target) if node.op == "call_module" else None
    args = node.args
    if m is not None:
        if isinstance(m, nn.GroupNorm):
            return Stage("group_norm", (("num_groups", m.num_groups), ("eps", m.eps), ("affine", m.affine)))
        if isinstance(m, nn.LeakyReLU):
            return Stage("leaky_relu", (("negative_slope", m.negative_slope),))
        simple = {nn.ReLU: "relu", nn.SiLU: "silu", nn.Sigmoid: "sigmoid", nn.Tanh: "tanh"}
        for cls, kind in simple.items():
            if isinstance(m, cls):
                return Stage(kind)
        if isinstance(m, nn.GELU):
            return Stage("gelu", (("approximate", m.approximate),))
        if isinstance(m, nn.Dropout) and (m.p == 0 or not training):
            return "identity"
        return None
    if node.op == "call_function":
        fn = node.target
        if fn in (F.relu, torch.relu):
            return Stage("relu")
        if fn in (torch.sigmoid, F.sigmoid):
            return Stage("sigmoid")
        if fn in (torch.tanh, F.tanh):
            return Stage("tanh")
        if fn is F.silu:
            return Stage("silu")
        if fn is F.gelu:
            return Stage("gelu", (("approximate", node.kwargs.get("approximate", "none")),))
        if fn is F.group_norm:
            eps = args[4] if len(args) > 4 else node.kwargs.get("eps", 1e-5)
            weight = args[2] if len(args) > 2 else node.kwargs.get("weight")
            return Stage("group_norm", (("num_groups", args[1]), ("eps", eps), ("affine", weight is not None)))
        if fn is F.dropout:
            p = args[1] if len(args) > 1 else node.kwargs.get("p", 0.5)
            training_flag = args[2] if len(args) > 2 else node.kwargs.get("training", True)
            return "identity" if p == 0 or not training_flag else None
        if fn is F.leaky_relu:
            slope = args[1] if len(args) > 1 else node.kwargs.get("negative_slope", 0.01)
            return Stage("leaky_relu", (("negative_slope", slope),))
        if fn in (operator.add, torch.add) and len(args) == 2 and args[0] is x and args[1] is x:
            return Stage("add_self")
        ops = {operator.mul: "mul", operator.truediv: "div", operator.add: "add", operator.sub: "sub",
               torch.mul: "mul", torch.div: "div", torch.add: "add", torch.sub: "sub"}
        if fn in ops and len(args) == 2 and args[0] is x and _constant(args[1]):
            return Stage("scalar", (("op", ops[fn]), ("value", float(args[1]))))
        if fn in (operator.mul, operator.add, torch.mul, torch.add) and len(args) == 2 and args[1] is x \
                and _constant(args[0]):
            return Stage("scalar", (("op", ops[fn]), ("value", float(args[0]))))
    return None


def trace_chain(path, training=True) -> Chain:
    """Trace the file's Model (in training mode: the module must be right there too) and match linear -> stages;
    raise ModelError naming what does not fit."""
    path = pathlib.Path(path)
    module = load_model_file(path)
    model = module.Model(*module.get_init_inputs())
    model.train(training)
    tracer = torch.fx.Tracer()
    tracer.record_stack_traces = True
    graph = tracer.trace(model)
    modules = dict(model.named_modules())
    nodes = [n for n in graph.nodes if n.op not in ("placeholder", "output", "get_attr")]
    inputs = [n for n in graph.nodes if n.op == "placeholder"]
    if len(inputs) != 1:
        raise ModelError(f"{path}: Model.forward takes {len(inputs)} inputs; fusegen generates one-input layers")
    if not nodes:
        raise ModelError(f"{path}: Model.forward computes nothing")
    first = nodes[0]
    lin = modules.get(first.target) if first.op == "call_module" else None
    if not isinstance(lin, nn.Linear) or first.args[0] is not inputs[0]:
        _refuse(first, modules, path, "the layer must start with a Linear of its input")
    x, stages = first, []
    for node in nodes[1:]:
        # data inputs: nodes other than the module's own parameters (get_attr)
        data = [a for a in itertools.chain(node.args, node.kwargs.values())
                if isinstance(a, torch.fx.Node) and a.op != "get_attr"]
        if x not in data or any(a is not x for a in data):
            _refuse(node, modules, path, "a second input or a branch: stages form one chain from the Linear")
        stage = _stage(node, x, modules, path, training)
        if stage is None:
            _refuse(node, modules, path)
        if stage != "identity":
            stages.append(dataclasses.replace(stage, where=_where(node, path)))
        x = node
    out = next(n for n in graph.nodes if n.op == "output")
    if out.args[0] is not x:
        raise ModelError(f"{path}: Model.forward must return the last stage's result")
    return Chain(lin.in_features, lin.out_features, lin.bias is not None, tuple(stages), str(path))


def to_spec(chain: Chain, model_file_module=None, precision=None) -> Spec:
    """The Spec for a chain the renderer generates today (the headline family), or ModelError saying why not."""
    kinds = tuple(s.kind for s in chain.stages)
    if kinds != GENERATED or not chain.bias:
        raise ModelError(f"{chain.source}: recognized {chain.describe()}, but this version generates only "
                         f"linear (with bias) -> {' -> '.join(GENERATED)}; the stage library for other chains is "
                         "not written yet")
    gn, lrelu = dict(chain.stages[0].params), dict(chain.stages[1].params)
    if not gn["affine"]:
        raise ModelError(f"{chain.stages[0].where}: GroupNorm without affine parameters is not generated yet")
    return Spec(input_size=chain.input_size, hidden_size=chain.hidden_size, num_groups=gn["num_groups"],
                eps=gn["eps"], negative_slope=lrelu["negative_slope"],
                **({"precision": precision} if precision else {}))


def check_interface(path, chain: Chain):
    """The generated ModelNew keeps the headline module's constructor and parameter names: the model file's
    must be the same for the benchmark's rules (same seed, same weights, same state_dict keys) to hold."""
    module = load_model_file(path)
    params = list(inspect.signature(module.Model.__init__).parameters)[1:]
    names = [n for n, _ in module.Model(*module.get_init_inputs()).named_parameters()]
    want_params = ["input_size", "hidden_size", "num_groups", "eps", "negative_slope"]
    if params[:3] != want_params[:3] or names != ["fc.weight", "fc.bias", "gn.weight", "gn.bias"]:
        raise ModelError(f"{path}: Model({', '.join(params)}) with parameters {', '.join(names)}; this version "
                         f"generates ModelNew({', '.join(want_params)}) with fc.weight, fc.bias, gn.weight, "
                         "gn.bias only (keeping other names and signatures is not written yet)")
