"""From a traced model file to a Spec: the chain's stages plus the interface ModelNew keeps (the model's own
constructor, its parameter names, the arguments it was traced with). `fusegen from-model` calls `model_spec`."""
import ast
import inspect
import math
import pathlib
import re
import textwrap

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..spec import HEADLINE_KINDS, ModelInterface, Spec
from .trace import ModelError, check_interface, load_model_file, to_spec, trace_chain, trace_file_layers

# module-level names a copied constructor may use: the generated file imports them under the same name
_IMPORTABLE = {id(torch): "torch", id(nn): "torch.nn", id(F): "torch.nn.functional", id(math): "math"}


def model_spec(path, precision=None):
    """(Spec, Chain) for the model file at path, a Linear and its chain. The headline chain with the headline
    module's names is the short form `fusegen render` makes (the same module byte for byte); any other chain keeps
    the file's constructor."""
    chain = trace_chain(path)
    return _one_layer_spec(path, chain, precision), chain


def model_specs(path, precision=None):
    """(Specs, Chains) for the model file at path: one a GEMM (Linear -> chain -> Linear -> chain ...), each
    keeping the file's constructor; a file of one Linear as model_spec reads it."""
    chains = trace_file_layers(path)
    if len(chains) == 1:
        return (_one_layer_spec(path, chains[0], precision),), chains
    return tuple(_general_spec(path, c, precision) for c in chains), chains


def _one_layer_spec(path, chain, precision):
    """The short form for the headline chain with the headline module's names, else the general one."""
    kinds = tuple(s.kind for s in chain.stages)
    if kinds == HEADLINE_KINDS and chain.bias and chain.stages[0].param("affine") and not chain.weight_in_out:
        try:
            check_interface(path, chain)
            return to_spec(chain, precision=precision)
        except ModelError:
            pass  # other names or constructor: the general form keeps them
    return _general_spec(path, chain, precision)


def _general_spec(path, chain, precision):
    """The Spec of one Linear and its chain that keeps the file's constructor (ModelInterface)."""
    extra = {"precision": precision} if precision else {}
    norms = [s for s in chain.stages if s.kind == "group_norm"]
    gn = norms[0] if norms else None
    if gn is not None and gn.param("affine") and (gn.param("weight") is None or gn.param("bias") is None):
        raise ModelError(f"{gn.where}: a GroupNorm with a weight but no bias (or the reverse) is not generated; "
                         "pass both or neither")
    at = chain.stages.index(gn) if gn is not None else -1
    for i, s in enumerate(chain.stages):
        if s.kind == "residual" and at >= 0 and (s.param("src") <= at) != (i < at):
            raise ModelError(f"{s.where}: a residual add across the GroupNorm (of chain value {s.param('src')}, "
                             f"the GroupNorm is stage {at}) is not generated: its gradient would have to pass the "
                             "group statistics; residuals on one side of it are")
    return Spec(input_size=chain.input_size, hidden_size=chain.hidden_size,
                num_groups=gn.param("num_groups") if gn else 1, eps=gn.param("eps") if gn else Spec.eps,
                stages=chain.stages, bias=chain.bias, interface=model_interface(path, chain), folds=chain.folds,
                **extra)


def model_interface(path, chain) -> ModelInterface:
    """The model's constructor as ModelNew's, with a first statement that checks it gets the traced arguments."""
    path = pathlib.Path(path)
    module = load_model_file(path)
    init = module.Model.__init__
    where = f"{path}: Model.__init__"
    try:
        source = textwrap.dedent(inspect.getsource(init))
    except (OSError, TypeError) as e:
        raise ModelError(f"{where}: its source cannot be read ({e}); ModelNew copies the constructor") from None
    fn = ast.parse(source).body[0]
    if not isinstance(fn, ast.FunctionDef):
        raise ModelError(f"{where} is not a plain function definition")
    signature = inspect.signature(init)
    names = list(signature.parameters)[1:]
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in signature.parameters.values()):
        raise ModelError(f"{where} takes *args or **kwargs; fusegen keeps constructors with named parameters only")
    bound = signature.bind(None, *module.get_init_inputs())
    bound.apply_defaults()
    init_args = []
    for name in names:
        value = bound.arguments[name]
        if not _is_literal(value):
            raise ModelError(f"{where}: argument {name} = {value!r} from get_init_inputs() is not a plain constant "
                             "(int, float, bool, str, None or a tuple of them); the generated module compares it")
        init_args.append((name, repr(value)))
    imports = []
    for name in _free_names(fn):
        if name == "Model":
            continue  # super(Model, self): renamed below
        if name not in vars(module):
            continue  # a builtin, or a name the constructor would fail on anyway
        target = _IMPORTABLE.get(id(vars(module)[name]))
        if target is None:
            raise ModelError(f"{where} uses the module-level name {name!r}; the generated module is self-contained "
                             "(its constructor may use torch, torch.nn, torch.nn.functional and math only)")
        if (name, target) not in (("torch", "torch"), ("nn", "torch.nn")):  # the generated file imports these
            imports.append(f"import {target} as {name}" if name != target.rsplit(".", 1)[-1] or "." in target
                           else f"import {target}")
    # the check goes first in the body (after a docstring), indented as the body is
    body = fn.body
    first = body[1] if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(
        getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str) else body[0]
    lines = source.splitlines()
    indent = " " * first.col_offset
    check = indent + "_check_init({" + ", ".join(f"{n!r}: {n}" for n in names) + "})"
    lines.insert(first.lineno - 1, check)
    text = re.sub(r"super\(\s*Model\s*,", "super(ModelNew,", "\n".join(lines))
    return ModelInterface(init_source=text, init_args=tuple(init_args), imports=tuple(imports), weight=chain.weight,
                          bias=chain.bias_name, weight_in_out=chain.weight_in_out, source=path.name)


def _free_names(fn: ast.FunctionDef) -> list:
    """Names the function reads that it does not bind itself (its arguments, assignments, loop targets...)."""
    bound = {a.arg for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs}
    loads = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            (loads.append(node.id) if isinstance(node.ctx, ast.Load) else bound.add(node.id))
        elif isinstance(node, (ast.FunctionDef, ast.Lambda, ast.ClassDef)) and node is not fn:
            raise ModelError("Model.__init__ defines functions or classes inside; fusegen copies plain constructors")
    return sorted(set(loads) - bound)


def _is_literal(value) -> bool:
    try:
        return ast.literal_eval(repr(value)) == value and not isinstance(value, (dict, set, list))
    except (ValueError, SyntaxError):
        return False
