"""Front end of `fusegen from-model`: load a benchmark-style model file, trace `Model(*get_init_inputs())` with
torch.fx, and match the graph `linear -> stage -> stage -> ...`; refuse anything outside that family, naming the
op, the file and line, and what is supported.

The chain records what the planner needs and nothing it would have to guess: every stage's constants, the qualified
names of the parameters it reads (the generated module keeps them), and for residuals which earlier value they add.
"""
import dataclasses
import importlib.util
import inspect
import operator
import pathlib

import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

from ..ops import COLUMN, FULL, OPS, ROW_VALUE, op
from ..ops.pool import max_window, pooled_width
from ..spec import HEADLINE_KINDS, Spec, Stage

# stage kind -> how it appears (for messages and the README table)
STAGES = {kind: o.spellings for kind, o in OPS.items()}
# Every recognized stage is generated: the headline chain through to_spec (the short-form Spec, the module
# `fusegen render` makes), every other chain through interface.model_spec, which keeps the file's constructor.
GENERATED = tuple(STAGES)
# why an op is outside the family, by a piece of its lower-cased name without underscores (first match wins)
REFUSED_WHY = {
    "softmax": "a softmax not over the features", "logsumexp": "a reduction not over the features",
    "einsum": "a second GEMM",
    "mean": "a reduction not over the features", "sum": "a reduction not over the features",
    "max": "a reduction not over the features", "min": "a reduction not over the features",
    "batchnorm": "a BatchNorm other than nn.BatchNorm1d of the Linear's out features (F.batch_norm: write the "
                 "module, whose buffers the generated layer updates)",
    "linear": "a second GEMM", "matmul": "a second GEMM",
    "mm": "a second GEMM", "alphadropout": "an alpha dropout (nn.Dropout and F.dropout are generated)",
    "dropout": "a dropout over channels or of another kind (nn.Dropout and F.dropout are generated)",
    "pool": "a pooling", "norm": "a normalization",
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
    weight: str  # qualified name of the GEMM's weight parameter ("fc.weight", "w")
    bias_name: str | None  # qualified name of the Linear's bias parameter, None without one
    weight_in_out: bool  # True: weight stored (in, out) as for x @ w; False: (out, in) as for nn.Linear
    # the traced graph's node that makes each chain value (0: the GEMM's output, k: stage k-1's); the accuracy
    # bar probes kinked stages and the GEMM's rounding there
    value_nodes: tuple = dataclasses.field(default=(), compare=False, repr=False)
    where: str = dataclasses.field(default="", compare=False, repr=False)  # file:line of the GEMM
    folds: tuple = dataclasses.field(default=(), compare=False, repr=False)  # identities dropped, in words

    def __post_init__(self):
        if self.bias != (self.bias_name is not None):
            raise ValueError(f"bias={self.bias} contradicts bias_name={self.bias_name!r}")

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
                     f"by a chain of element-wise stages, reductions over the features and at most one GroupNorm "
                     f"or BatchNorm1d "
                     f"({'; '.join(STAGES.values())})")


def _constant(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _arg(node, i, name, default=None):
    """Argument i (counting the tensor input as 0, for methods too) or keyword `name` of a call."""
    return node.args[i] if len(node.args) > i else node.kwargs.get(name, default)


def _nodes_in(node):
    found = []
    torch.fx.node.map_arg((node.args, node.kwargs), found.append)
    return found


# Spellings. In-place forms (x.relu_(), nn.ReLU(inplace=True)) are read as the same stage; the reader then lets
# the overwritten value stand for the new one, which is what later uses of it see.
_RELU = {F.relu, torch.relu, torch.relu_}
_SIGMOID = {torch.sigmoid, F.sigmoid, torch.sigmoid_, torch.special.expit}
_TANH = {torch.tanh, F.tanh, torch.tanh_}
_CLAMP = {torch.clamp, torch.clip, torch.clamp_, torch.clip_}
_CLAMP_ONE = {torch.clamp_min: "min", torch.clamp_max: "max", torch.clamp_min_: "min", torch.clamp_max_: "max"}
_BINARY = {operator.add: "add", torch.add: "add", operator.sub: "sub", torch.sub: "sub", torch.subtract: "sub",
           operator.mul: "mul", torch.mul: "mul", torch.multiply: "mul", operator.truediv: "div", torch.div: "div",
           torch.divide: "div", torch.true_divide: "div", torch.rsub: "rsub"}
_BINARY_METHODS = {"add": "add", "sub": "sub", "subtract": "sub", "mul": "mul", "multiply": "mul", "div": "div",
                   "divide": "div", "true_divide": "div"}
_NEG = {operator.neg, torch.neg, torch.negative}
# min / max: a reduction with a dim (or of everything), element-wise against a second tensor (read by name)
_MIN_MAX = {torch.min, torch.max, torch.amin, torch.amax, torch.minimum, torch.maximum, torch.fmin, torch.fmax}
_MIN_MAX_METHODS = {"min", "max", "amin", "amax", "minimum", "maximum", "fmin", "fmax"}
_GEMMS = {operator.matmul, torch.matmul, torch.mm}
# copies of a value: the same numbers; detach (and any copy made while autograd is off) cuts its gradient
_COPIES = {torch.clone: "clone", torch.detach: "detach"}
_COPY_METHODS = {"clone", "detach", "contiguous"}
_SOFTMAX = {F.softmax: "softmax", torch.softmax: "softmax", F.log_softmax: "log_softmax",
            torch.log_softmax: "log_softmax", torch.special.softmax: "softmax", torch.special.log_softmax: "log_softmax"}
# reductions to one value a row: torch's function -> its name (min / max with a dim return (values, indices))
_REDUCE = {torch.sum: "sum", torch.mean: "mean", torch.amax: "amax", torch.amin: "amin", torch.logsumexp: "logsumexp",
           torch.special.logsumexp: "logsumexp"}
_REDUCE_METHODS = {"sum", "mean", "amax", "amin", "logsumexp"}


def _method(node):
    """The method's name without the in-place underscore, or None for other nodes."""
    if node.op != "call_method":
        return None
    name = node.target
    return name[:-1] if name.endswith("_") and not name.endswith("__") else name


def _binary_op(node):
    """add, sub, mul, div or rsub for a binary arithmetic node, else None."""
    if node.op == "call_function":
        return _BINARY.get(node.target)
    return _BINARY_METHODS.get(_method(node))


def _in_place(node, modules):
    if node.op == "call_module":
        return bool(getattr(modules[node.target], "inplace", False))
    name = getattr(node.target, "__name__", node.target) if node.op == "call_function" else node.target
    if node.op == "call_method" or node.target in (_RELU | _SIGMOID | _TANH | _CLAMP | set(_CLAMP_ONE)):
        return isinstance(name, str) and name.endswith("_") and not name.endswith("__")
    # F.relu(x, True), F.leaky_relu(x, 0.2, True), F.hardtanh(x, a, b, True): inplace is the last positional
    return bool(node.kwargs.get("inplace", False)) or (
        node.target in (F.relu, F.silu, F.mish, F.relu6) and len(node.args) > 1 and node.args[1] is True) or (
        node.target is F.leaky_relu and len(node.args) > 2 and node.args[2] is True) or (
        node.target is F.hardtanh and len(node.args) > 3 and node.args[3] is True) or (
        node.target is F.dropout and len(node.args) > 3 and node.args[3] is True)


class _Reader:
    """Walks the traced graph after the Linear, one node at a time, keeping which chain value each node holds."""

    def __init__(self, model, modules, path, hidden, linear_node, follows_mode=frozenset()):
        self.params = dict(model.named_parameters())
        # F.dropout / torch.dropout nodes whose `training` argument is the Model's own mode (self.training): it
        # read otherwise when the Model was traced in the other mode (_follows_mode)
        self.follows_mode = follows_mode
        self.buffers = dict(model.named_buffers())
        self.modules, self.path, self.hidden = modules, path, hidden
        self.stages = []
        self.producers = [linear_node]  # chain value k (0: the Linear's output) -> the node that made it
        self.value = {linear_node: 0}  # node -> the chain value it holds (aliases: identities, in-place ops)
        self.shapes = [FULL]  # chain value k -> FULL or ROW_VALUE (one value a row)
        self.tuples = set()  # nodes that return (values, indices): a max / min over a dim
        self.used_rows = set()  # row values a row_combine has read (each is read once)
        # nodes holding a chain value with no gradient to it: x.detach(), a copy made under torch.no_grad()
        self.detached = set()
        self.folds = []  # what was read as an identity and dropped, in words (Chain.folds)
        # nodes holding the (batch, 1, hidden) view a pool over the features reads: x.unsqueeze(1) and the pool's
        # result, until .squeeze(1)
        self.unsqueezed = set()
        # nodes holding the layer's own input x (the first layer's: the Model's input) and copies of it; with its
        # width, for a residual of x (trace_layers sets both)
        self.input_nodes, self.input_size = set(), 0

    def refuse(self, node, why=None):
        _refuse(node, self.modules, self.path, why)

    def chain(self, input_size, hidden, weight, bias, weight_in_out) -> Chain:
        """The layer read so far: its GEMM (what _linear found) and stages."""
        gemm = self.producers[0]
        where = _where(gemm, self.path)
        # nothing after the GEMM: the identity stage (a Spec without stages is the headline layer)
        stages, values = (tuple(self.stages), self.producers) if self.stages else \
            ((Stage("identity", where=where),), [gemm, gemm])
        return Chain(input_size=int(input_size), hidden_size=int(hidden), bias=bias is not None, stages=stages,
                     source=str(self.path), weight=weight, bias_name=bias, weight_in_out=weight_in_out,
                     value_nodes=tuple(n.name for n in values), where=where, folds=tuple(self.folds))

    @property
    def current(self):
        return len(self.stages)

    def read(self, node):
        data = [a for a in _nodes_in(node) if a.op != "get_attr"]
        if not data:
            self.refuse(node, "an op on parameters or constants alone: fusegen reads parameters only as direct "
                              "operands of a stage")
        for a in data:
            if a not in self.value and a not in self.input_nodes:
                if a.op == "placeholder" and not self.input_nodes:  # a layer after the first reads the last chain
                    self.refuse(node, "the model's input reaches a layer after the first GEMM (a residual across "
                                      "GEMMs, as x + fc2(act(fc1(x)))): one fused layer reads one input, the previous "
                                      "layer's output; generated is a residual of a layer's own input (x + act(fc(x)))")
                what = "the layer's input" if a.op == "placeholder" else a.name
                if _binary_op(node) == "add":
                    self.refuse(node, f"a residual of {what}, which is not an earlier value of the chain")
                self.refuse(node, f"{what} is a second input, not a value of the chain from the Linear")
        if self.copy(node, data):
            return
        if not node.meta.get("grad_enabled", True):
            self.refuse(node, "a computation while autograd is off (torch.no_grad(), inference_mode): its value "
                              "carries no gradient; fusegen generates copies made there (x.clone()) and x.detach() "
                              "as the second operand of a residual add")
        if all(self.value.get(a) != self.current for a in data):
            self.refuse(node, f"a branch: it reads {data[0].name}, an earlier value, not the last stage's result")
        if any(a in self.unsqueezed for a in data) and not self.reads_pool_view(node):
            self.refuse(node, "an op on x.unsqueeze(1) other than a pool over the features and .squeeze(1)")
        stage = self.classify(node)
        if any(a in self.detached for a in data) and not (
                isinstance(stage, Stage) and stage.kind in ("residual", "input_residual") and stage.param("detached")):
            self.refuse(node, "the chain goes on from a detached value (x.detach(), or a copy made under "
                              "torch.no_grad()): no gradient would reach the Linear; a detached value is generated as "
                              "the second operand of a residual add (x + h.detach())")
        if stage == "identity":
            self.value[node] = self.current
            return
        self.check_shape(node, stage)
        # an in-place op overwrites its first operand: every name for that value now holds the result
        first = node.args[0] if node.args else None
        overwritten = self.value.get(first) if isinstance(first, torch.fx.Node) and _in_place(node, self.modules) \
            else None
        if stage == "silu":  # x * sigmoid(x): the sigmoid stage read just before becomes SiLU
            self.value.pop(self.producers.pop())
            self.shapes.pop()
            self.stages[-1] = Stage("silu", where=_where(node, self.path))
        else:
            self.stages.append(dataclasses.replace(stage, where=_where(node, self.path)))
        self.producers.append(node)
        self.value[node] = self.current
        made = op(self.stages[-1].kind).makes
        self.shapes.append(self.shapes[-1] if made == "same" else made)
        if overwritten is not None:
            for n, v in self.value.items():
                if v == overwritten:
                    self.value[n] = self.current

    def copy(self, node, data):
        """A copy of a chain value (x.clone(), x.detach(), x.contiguous(), and any of them made while autograd is
        off): the node stands for that value, detached where the copy cuts its gradient. False for other nodes."""
        how = _COPIES.get(node.target) if node.op == "call_function" else _method(node)
        if how not in _COPY_METHODS or len(data) != 1 or node.args[:1] != (data[0],):
            return False
        if node.op == "call_method" and node.target == "detach_":
            self.refuse(node, "x.detach_() detaches every name of the value in place; write h = x.detach()")
        if len(node.args) > 1 or any(k != "memory_format" for k in node.kwargs):
            self.refuse(node, f"{how} with arguments other than memory_format")
        if data[0] in self.input_nodes:  # a copy of the layer's input: a residual of it may read the copy
            self.input_nodes.add(node)
            if how == "detach" or data[0] in self.detached or not node.meta.get("grad_enabled", True):
                self.detached.add(node)
            return True
        self.value[node] = self.value[data[0]]
        if how == "detach" or data[0] in self.detached or not node.meta.get("grad_enabled", True):
            self.detached.add(node)
        return True

    # -- what one node is ------------------------------------------------------------------------------------
    def check_shape(self, node, stage):
        """A stage that reads the (batch, hidden) tensor must not get a row value (it would broadcast it)."""
        if stage == "silu" or self.shapes[-1] == FULL or op(stage.kind).takes != FULL:
            return
        self.refuse(node, f"{op(stage.kind).title_of(stage)} of a (batch, 1) row value: on a row value fusegen "
                          "generates element-wise stages with constants, further reductions over the size-1 dim "
                          "and its use against the (batch, hidden) tensor (x - r, x / r, ...)")

    def classify(self, node):
        if node.op == "call_function" and node.target in (operator.getitem, getattr) and node.args \
                and node.args[0] in self.tuples:
            which = node.args[1]
            if which in (0, "values"):
                return "identity"
            self.refuse(node, "the indices of a max / min (an argmax): the values ([0] or .values) are generated")
        if node.op == "call_module":
            return self.module_stage(node)
        if _binary_op(node):
            return self.binary(node)
        if node.op == "call_function" and node.target in _NEG or _method(node) in ("neg", "negative"):
            self.unary_input(node)
            return Stage("scalar", (("op", "mul"), ("value", -1.0)))
        return self.function_stage(node)

    def unary_input(self, node):
        """Check that node applies to the current value, other tensor operands being parameters at most."""
        if not isinstance(node.args[0] if node.args else None, torch.fx.Node) \
                or self.value.get(node.args[0]) != self.current:
            self.refuse(node, "a stage must take the last stage's result as its input")
        if any(self.value.get(a) is not None for a in _nodes_in(node)[1:]):
            self.refuse(node, "a tensor operand where a constant is expected")

    def number(self, node, value, what):
        if not _constant(value):
            self.refuse(node, f"{what} must be a constant number, got {value!r}")
        return float(value)

    def reads_pool_view(self, node):
        """node is a pool or .squeeze(1) of the (batch, 1, hidden) view."""
        return (node.op == "call_module" and isinstance(self.modules.get(node.target), (nn.AvgPool1d, nn.MaxPool1d))) \
            or (node.op == "call_function" and node.target in (F.avg_pool1d, F.max_pool1d, torch.squeeze)) or \
            _method(node) == "squeeze"

    def view_dim(self, node, dim, what):
        if dim not in (1, -2):
            self.refuse(node, f"{what}(dim={dim!r}) around a pool over the features: the pool reads x.unsqueeze(1) "
                              "and its result is .squeeze(1)")

    def avg_pool(self, node, kernel_size, stride, padding, ceil_mode, count_include_pad):
        """AvgPool1d over the features (the Linear's output viewed (batch, 1, hidden)), right after the Linear."""
        k, s, p, _ = self.pool_window(node, "AvgPool1d", kernel_size, stride, padding, 1, ceil_mode)
        return Stage("avg_pool", (("kernel_size", k), ("stride", s), ("padding", p), ("ceil_mode", bool(ceil_mode)),
                                  ("count_include_pad", bool(count_include_pad))))

    def max_pool(self, node, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
        """MaxPool1d over the features, right after the Linear."""
        if return_indices:
            self.refuse(node, "MaxPool1d(return_indices=True): the indices are not generated (the pooled values are)")
        k, s, p, d = self.pool_window(node, "MaxPool1d", kernel_size, stride, padding, dilation, ceil_mode)
        return Stage("max_pool", (("kernel_size", k), ("stride", s), ("padding", p), ("dilation", d),
                                  ("ceil_mode", bool(ceil_mode))))

    def pool_window(self, node, what, kernel_size, stride, padding, dilation, ceil_mode):
        """(kernel_size, stride, padding, dilation) of a pool over the features as ints, checked as torch checks
        them; the later stages see the pooled width."""
        if node.args[0] not in self.unsqueezed:
            self.refuse(node, "a pool of a value that is not the chain's x.unsqueeze(1)")
        if self.stages:
            self.refuse(node, "a pool over the features after other stages: it is generated right after the Linear, "
                              "not yet elsewhere")
        k, s, p, d = (v[0] if isinstance(v, (tuple, list)) and len(v) == 1 else v
                      for v in (kernel_size, kernel_size if stride is None or stride == () or stride == [] else stride,
                                padding, dilation))
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (k, s, p, d)) or min(k, s, d) < 1 or p < 0:
            self.refuse(node, f"{what}(kernel_size={kernel_size!r}, stride={stride!r}, padding={padding!r}"
                              f"{', dilation=%r' % (dilation,) if dilation != 1 else ''}): positive ints expected "
                              "(padding >= 0)")
        if p > k // 2:
            self.refuse(node, f"{what} padding {p} over half its kernel_size {k} (torch refuses it too)")
        width = pooled_width(self.hidden, k, s, p, bool(ceil_mode), d)
        if width < 1:
            self.refuse(node, f"{what}(kernel_size={k}{', dilation=%d' % d if d != 1 else ''}) over {self.hidden} "
                              "features makes no window")
        empty = [w for w in (0, width - 1) if not max_window(w, self.hidden, k, s, p, d)]
        if empty:
            self.refuse(node, f"{what}(kernel_size={k}, stride={s}, padding={p}, dilation={d}) over {self.hidden} "
                              f"features: window {empty[0]} holds only padding (torch's value there is -inf, its index "
                              "outside the row): not generated")
        self.hidden = width  # what the later stages see
        self.unsqueezed.add(node)
        return k, s, p, d

    def pool_after(self, node):
        """The pool that reads this unsqueeze's result, in words, or "" (the spelling of a pool over the features)."""
        for user in node.users:
            if user.op == "call_module" and isinstance(self.modules.get(user.target),
                                                       (nn.MaxPool1d, nn.AvgPool1d, nn.AdaptiveAvgPool1d,
                                                        nn.AdaptiveMaxPool1d, nn.LPPool1d)):
                return type(self.modules[user.target]).__name__
            if user.op == "call_function" and user.target in (F.max_pool1d, F.avg_pool1d, F.adaptive_avg_pool1d,
                                                              F.adaptive_max_pool1d, F.lp_pool1d):
                return f"F.{user.target.__name__}"
        return ""

    def module_stage(self, node):
        m = self.modules[node.target]
        if len(node.args) != 1 or node.kwargs:
            self.refuse(node, "a module stage takes the chain value alone")
        self.unary_input(node)
        if isinstance(m, nn.AvgPool1d):
            return self.avg_pool(node, m.kernel_size, m.stride, m.padding, m.ceil_mode, m.count_include_pad)
        if isinstance(m, nn.MaxPool1d):
            return self.max_pool(node, m.kernel_size, m.stride, m.padding, m.dilation, m.ceil_mode, m.return_indices)
        if isinstance(m, nn.GroupNorm):
            if m.num_channels != self.hidden:
                self.refuse(node, f"a GroupNorm over {m.num_channels} channels after a Linear with {self.hidden} "
                                  "out features: it must normalize the Linear's out features")
            named = (f"{node.target}.weight", f"{node.target}.bias") if m.affine else (None, None)
            return self.group_norm(node, m.num_groups, m.eps, *named)
        if isinstance(m, nn.BatchNorm1d):
            return self.batch_norm(node, m, node.target)
        if isinstance(m, nn.LeakyReLU):
            return Stage("leaky_relu", (("negative_slope", float(m.negative_slope)),))
        if isinstance(m, nn.Hardtanh):  # nn.ReLU6 is one too
            return Stage("hardtanh", (("min_val", float(m.min_val)), ("max_val", float(m.max_val))))
        if isinstance(m, nn.GELU):
            return self.gelu(node, m.approximate)
        simple = {nn.ReLU: "relu", nn.SiLU: "silu", nn.Sigmoid: "sigmoid", nn.Tanh: "tanh", nn.Mish: "mish"}
        for cls, kind in simple.items():
            if isinstance(m, cls):
                return Stage(kind)
        if isinstance(m, (nn.Softmax, nn.LogSoftmax)):
            return self.softmax(node, "softmax" if isinstance(m, nn.Softmax) else "log_softmax", m.dim)
        if isinstance(m, nn.Identity):
            return "identity"
        if type(m) is nn.Dropout:  # (its subclasses drop other things: whole channels, alpha dropout)
            return self.dropout(node, m.p, node.target)
        self.refuse(node)

    def function_stage(self, node):
        fn = node.target if node.op == "call_function" else None
        method = _method(node)
        if method == "unsqueeze" or fn is torch.unsqueeze:
            pool = self.pool_after(node)
            if pool in ("AvgPool1d", "F.avg_pool1d", "MaxPool1d", "F.max_pool1d"):
                self.unary_input(node)
                self.view_dim(node, _arg(node, 1, "dim"), "unsqueeze")
                self.unsqueezed.add(node)
                return "identity"
            if pool:
                self.refuse(node, f"a pool over the features ({pool} on x.unsqueeze(1), then .squeeze(1)): not "
                                  "generated yet (AvgPool1d / MaxPool1d right after the Linear are); pools over "
                                  "the batch or other dims are not either")
        if (method == "squeeze" or fn is torch.squeeze) and node.args and node.args[0] in self.unsqueezed:
            if node.args[0] not in self.producers:
                self.refuse(node, ".squeeze(1) of x.unsqueeze(1) with no pool between")
            self.view_dim(node, _arg(node, 1, "dim"), "squeeze")
            return "identity"
        if fn is F.avg_pool1d:
            return self.avg_pool(node, _arg(node, 1, "kernel_size"), _arg(node, 2, "stride"),
                                 _arg(node, 3, "padding", 0), _arg(node, 4, "ceil_mode", False),
                                 _arg(node, 5, "count_include_pad", True))
        if fn is F.max_pool1d:
            return self.max_pool(node, _arg(node, 1, "kernel_size"), _arg(node, 2, "stride"),
                                 _arg(node, 3, "padding", 0), _arg(node, 4, "dilation", 1),
                                 _arg(node, 5, "ceil_mode", False), _arg(node, 6, "return_indices", False))
        if fn in _RELU or method == "relu":
            self.unary_input(node)
            return Stage("relu")
        if fn in _SIGMOID or method == "sigmoid":
            self.unary_input(node)
            return Stage("sigmoid")
        if fn in _TANH or method == "tanh":
            self.unary_input(node)
            return Stage("tanh")
        if fn is F.silu:
            self.unary_input(node)
            return Stage("silu")
        if fn is F.mish:
            self.unary_input(node)
            return Stage("mish")
        if fn is F.gelu:
            self.unary_input(node)
            return self.gelu(node, _arg(node, 1, "approximate", "none"))
        if fn is F.leaky_relu:
            self.unary_input(node)
            slope = self.number(node, _arg(node, 1, "negative_slope", 0.01), "negative_slope")
            return Stage("leaky_relu", (("negative_slope", slope),))
        if fn is F.hardtanh or fn is F.relu6:
            self.unary_input(node)
            lo, hi = (0.0, 6.0) if fn is F.relu6 else (_arg(node, 1, "min_val", -1.0), _arg(node, 2, "max_val", 1.0))
            return Stage("hardtanh", (("min_val", self.number(node, lo, "min_val")),
                                      ("max_val", self.number(node, hi, "max_val"))))
        if fn in _CLAMP or fn in _CLAMP_ONE or method in ("clamp", "clip", "clamp_min", "clamp_max"):
            one = _CLAMP_ONE.get(fn) or {"clamp_min": "min", "clamp_max": "max"}.get(method)
            if one:
                bounds = {"min": None, "max": None, one: _arg(node, 1, one)}
            else:
                bounds = {"min": _arg(node, 1, "min"), "max": _arg(node, 2, "max")}
            tensors = [k for k, v in bounds.items() if isinstance(v, torch.fx.Node)]
            if tensors:  # a parameter bound: a channel stage
                if sum(v is not None for v in bounds.values()) > 1:
                    self.refuse(node, "a clamp with a tensor bound and a second bound: one bound a call is "
                                      "generated (x.clamp(min=p).clamp(max=q))")
                self.current_operand(node, node.args[0] if node.args else node.kwargs.get("input"))
                return Stage("channel", (("op", f"clamp_{tensors[0]}"),) +
                             self.channel_param(node, bounds[tensors[0]]))
            self.unary_input(node)
            if bounds["min"] is None and bounds["max"] is None:
                self.refuse(node, "a clamp without bounds")
            return Stage("clamp", tuple((k, None if v is None else self.number(node, v, f"clamp's {k}"))
                                        for k, v in bounds.items()))
        if fn in (F.group_norm, torch.group_norm):
            self.unary_input(node)
            weight, bias = (self.norm_param(node, _arg(node, i, name)) for i, name in ((2, "weight"), (3, "bias")))
            return self.group_norm(node, _arg(node, 1, "num_groups"), _arg(node, 4, "eps", 1e-5), weight, bias)
        if fn in _SOFTMAX or method in ("softmax", "log_softmax"):
            self.unary_input(node)
            if _arg(node, 3 if fn is F.softmax or fn is F.log_softmax else 2, "dtype") is not None:
                self.refuse(node, "a softmax with a dtype: the chain computes in float32")
            return self.softmax(node, _SOFTMAX.get(fn) or method, _arg(node, 1, "dim"))
        if fn in _REDUCE or method in _REDUCE_METHODS:
            self.unary_input(node)
            how = _REDUCE.get(fn) or method
            if node.kwargs.get("dtype") is not None:
                self.refuse(node, f"a {how} with a dtype: the chain computes in float32")
            dim = _arg(node, 1, "dim", () if how in ("amax", "amin") else None)
            return self.reduction(node, how, dim, _arg(node, 2, "keepdim", False), tuple_out=False)
        if fn in _MIN_MAX or method in _MIN_MAX_METHODS:
            return self.min_max(node, fn.__name__ if fn in _MIN_MAX else method, fn)
        if fn is F.dropout or fn is torch.dropout:
            self.unary_input(node)
            p, training = _arg(node, 1, "p", 0.5), _arg(node, 2, "training" if fn is F.dropout else "train", True)
            if not isinstance(training, bool):
                self.refuse(node, f"dropout with training={training!r}: a constant or self.training is generated")
            if node in self.follows_mode:
                return self.dropout(node, p, "")
            return self.dropout(node, p, None) if training else "identity"
        self.refuse(node)

    def dropout(self, node, p, module):
        """Dropout of probability p, following `module`'s mode (an nn.Dropout's qualified name, "": the Model's),
        or always dropping (None); p = 0 is the identity."""
        p = self.number(node, p, "dropout's p")
        if not 0 <= p < 1:
            self.refuse(node, f"dropout with p={p!r}: 0 <= p < 1 is generated (p = 1 zeroes the tensor)")
        if p == 0:
            self.folds.append(f"dropout with p=0 -> an identity ({_where(node, self.path)})")
            return "identity"
        return Stage("dropout", (("p", p), ("module", module)))

    def min_max(self, node, name, fn):
        """min / max: a reduction with a dim (amin / amax too), element-wise against a second tensor (minimum,
        maximum, fmin, fmax always): a per-channel parameter is a channel stage."""
        which = name.lstrip("af").replace("imum", "")
        first, other = _arg(node, 0, "input"), _arg(node, 1, "other")
        params = [v for v in (first, other) if isinstance(v, torch.fx.Node) and v.op == "get_attr"]
        if params and name not in ("amin", "amax") and node.kwargs.get("dim") is None:
            param_first = params[0] is first
            self.current_operand(node, other if param_first else first)
            how = {"min": "minimum", "max": "maximum"}.get(name, name)
            if how in ("fmax", "fmin") and param_first:  # torch.fmax(p, x): a tie's gradient goes to p
                how = "p" + how
            return Stage("channel", (("op", how),) + self.channel_param(node, params[0]))
        if isinstance(other, torch.fx.Node) or name in ("minimum", "maximum", "fmin", "fmax") or \
                (_constant(other) and node.kwargs.get("dim") is not None):
            self.refuse(node, f"element-wise {which} against a tensor other than a per-channel nn.Parameter (an "
                              "earlier value of the chain, a buffer or a constant tensor): not generated yet (against "
                              "a per-channel parameter it is, and clamp with constant bounds)")
        self.unary_input(node)
        if name in ("amin", "amax"):
            return self.reduction(node, name, _arg(node, 1, "dim", ()), _arg(node, 2, "keepdim", False), False)
        dim = node.kwargs.get("dim", other)
        return self.reduction(node, which, dim, _arg(node, 2, "keepdim", False), tuple_out=dim is not None)

    def features_dim(self, node, dim, what):
        """Check that `dim` names the features of a (batch, hidden) value (1 or -1, alone or in a 1-tuple)."""
        if isinstance(dim, (tuple, list)) and len(dim) == 1:
            dim = dim[0]
        if dim is None or dim == () or dim == []:
            self.refuse(node, f"{what} over the whole tensor: fusegen reduces over the features (dim=1 or -1)")
        if dim not in (1, -1):
            self.refuse(node, f"{what} over dim {dim!r}: fusegen reduces over the features (dim=1 or -1); over the "
                              "batch only BatchNorm's statistics are planned")

    def softmax(self, node, kind, dim):
        if self.shapes[-1] != FULL:
            self.refuse(node, f"{kind} of a (batch, 1) row value (over one value: a constant)")
        self.features_dim(node, 1 if dim is None else dim, kind)  # dim None: torch's implicit choice, 1 for 2-D
        return Stage(kind)

    def reduction(self, node, how, dim, keepdim, tuple_out):
        """A reduction over the features: a row_reduce stage; over a (batch, 1) row value's size-1 dim an
        identity (no kernel); anything else refused."""
        if tuple_out:
            self.tuples.add(node)
        if not isinstance(keepdim, bool):
            self.refuse(node, f"keepdim={keepdim!r} must be a constant bool")
        self.features_dim(node, dim, f"a {how}")
        if self.shapes[-1] == FULL:
            return Stage("row_reduce", (("how", how), ("keepdim", keepdim)))
        reduce_at = max(i for i, s in enumerate(self.stages) if s.kind == "row_reduce")
        if not self.stages[reduce_at].param("keepdim"):
            self.refuse(node, f"a {how} of a (batch,) row value: over dim {dim!r} that reduces over the batch")
        if not keepdim:  # the (batch, 1) value becomes (batch,): the layer's output shape
            self.stages[reduce_at] = dataclasses.replace(
                self.stages[reduce_at], params=(("how", self.stages[reduce_at].param("how")), ("keepdim", False)))
        self.folds.append(f"{how} over the size-1 dim of a row value -> an identity ({_where(node, self.path)})")
        return "identity"  # over one value: the value itself, its gradient passed through

    def gelu(self, node, approximate):
        if approximate not in ("none", "tanh"):
            self.refuse(node, f"GELU with approximate={approximate!r}: 'none' or 'tanh' are supported")
        return Stage("gelu", (("approximate", approximate),))

    def group_norm(self, node, num_groups, eps, weight, bias):
        if any(s.kind == "group_norm" for s in self.stages):
            self.refuse(node, "a second GroupNorm: the layer normalizes once")
        if isinstance(num_groups, bool) or not isinstance(num_groups, int) or num_groups <= 0 \
                or self.hidden % num_groups:
            self.refuse(node, f"num_groups={num_groups!r} must be a positive int dividing the {self.hidden} "
                              "channels")
        return Stage("group_norm", (("num_groups", num_groups), ("eps", self.number(node, eps, "eps")),
                                    ("affine", weight is not None or bias is not None), ("weight", weight),
                                    ("bias", bias)))

    def batch_norm(self, node, m, name):
        if m.num_features != self.hidden:
            self.refuse(node, f"a BatchNorm1d over {m.num_features} features after a Linear with {self.hidden} out "
                              "features: it must normalize the Linear's out features")
        if any(op(s.kind).reduces == COLUMN for s in self.stages):
            self.refuse(node, "a second BatchNorm: the layer normalizes once")
        if m.momentum is not None:
            self.number(node, m.momentum, "momentum")
        track = m.track_running_stats
        return Stage("batch_norm", (
            ("module", name), ("eps", self.number(node, m.eps, "eps")), ("momentum", m.momentum),
            ("affine", bool(m.affine)), ("track_running_stats", bool(track)),
            ("weight", f"{name}.weight" if m.affine else None), ("bias", f"{name}.bias" if m.affine else None),
            ("running_mean", f"{name}.running_mean" if track else None),
            ("running_var", f"{name}.running_var" if track else None),
            ("num_batches_tracked", f"{name}.num_batches_tracked" if track else None)))

    def parameter(self, node, arg):
        """Qualified name and shape of the nn.Parameter that arg reads, or a refusal naming what it is."""
        name = arg.target if isinstance(arg, torch.fx.Node) and arg.op == "get_attr" else None
        if name not in self.params:
            what = f"buffer {name}" if name in self.buffers else f"tensor constant {name}" if name else repr(arg)
            self.refuse(node, f"an operand {what} that is not an nn.Parameter of the Model")
        return name, tuple(self.params[name].shape)

    def channel_param(self, node, arg):
        """The params naming the nn.Parameter that arg reads: per channel ((hidden,) or (1, hidden)) or a scalar
        (one value, of at most two dimensions: it broadcasts over the (batch, hidden) value without changing its
        shape); else a refusal."""
        name, shape = self.parameter(node, arg)
        if len(shape) <= 2 and all(d == 1 for d in shape):
            return ("param", name), ("scalar", True)
        if shape not in ((self.hidden,), (1, self.hidden)):
            self.refuse(node, f"a parameter operand {name} of shape {shape}: a parameter operand is per channel, of "
                              f"shape ({self.hidden},) or (1, {self.hidden}), or a scalar (shape (), (1,) or (1, 1))")
        return (("param", name),)

    def current_operand(self, node, arg):
        """Check that arg is the last stage's result (a two-operand stage's tensor side)."""
        if not (isinstance(arg, torch.fx.Node) and self.value.get(arg) == self.current):
            self.refuse(node, "a stage must take the last stage's result as an operand")

    def norm_param(self, node, arg):
        if arg is None:
            return None
        name, shape = self.parameter(node, arg)
        if shape != (self.hidden,):
            self.refuse(node, f"GroupNorm parameter {name} of shape {shape}: expected ({self.hidden},)")
        return name

    def row_combine(self, node, how, src, row_first):
        """x (op) r: the row value r (the current one) against an earlier (batch, hidden) value x."""
        if self.shapes[src] != FULL:
            self.refuse(node, "an op of two row values: not generated")
        reduce_at = max(i for i, s in enumerate(self.stages) if s.kind == "row_reduce")
        if not self.stages[reduce_at].param("keepdim"):
            self.refuse(node, "a (batch,) row value against the (batch, hidden) tensor: it broadcasts along the "
                              "features, not the rows (keepdim=True keeps it per row)")
        if row_first:
            how = {"sub": "rsub", "div": "rdiv"}.get(how, how)
        return Stage("row_combine", (("op", how), ("src", src)))

    def binary(self, node):
        op = _binary_op(node)
        a = _arg(node, 0, "input")
        b = _arg(node, 1, "other")
        if node.kwargs.get("alpha", 1) != 1 or node.kwargs.get("rounding_mode") is not None:
            self.refuse(node, "alpha or rounding_mode: plain add, sub, mul and div are supported")
        if op == "rsub":  # torch.rsub(x, c) is c - x
            op, a, b = "sub", b, a
        cur = self.current
        # a detached copy of the current value is an earlier value here: x + x.detach() is a residual
        is_x = [isinstance(v, torch.fx.Node) and self.value.get(v) == cur and v not in self.detached for v in (a, b)]
        row_operand = next((self.value[v] for v in (a, b) if isinstance(v, torch.fx.Node) and v in self.value
                            and self.shapes[self.value[v]] == ROW_VALUE and self.value[v] != cur), None)
        if row_operand is not None:
            self.refuse(node, "a row value used a second time (or after other stages): a row reduction's value is "
                              "used once, right after it (x - x.mean(dim=1, keepdim=True))")
        if not all(is_x) and any(is_x) and self.shapes[cur] == ROW_VALUE:
            other = b if is_x[0] else a
            if isinstance(other, torch.fx.Node) and other in self.value:
                return self.row_combine(node, op, self.value[other], row_first=is_x[0])
        if all(is_x):
            if op == "add":
                return Stage("add_self")
            self.refuse(node, f"x {op} x: of two copies of a value only x + x is supported")
        if not any(is_x):
            self.refuse(node, "a stage must take the last stage's result as an operand")
        x_first = is_x[0]
        other = b if x_first else a
        if _constant(other):
            if op == "div" and not x_first:
                self.refuse(node, "c / x (a reciprocal): x / c is supported")
            if op == "sub" and not x_first:
                op = "rsub"
            return Stage("scalar", (("op", op), ("value", float(other))))
        if isinstance(other, torch.fx.Node) and other.op == "get_attr":
            param = self.channel_param(node, other)
            if not x_first and op in ("sub", "div"):
                self.refuse(node, f"p {'-' if op == 'sub' else '/'} x for a parameter p: x - p and x / p are "
                                  "supported")
            return Stage("channel", (("op", op),) + param)
        if isinstance(other, torch.fx.Node) and other in self.input_nodes:
            return self.input_residual(node, op, other)
        if isinstance(other, torch.fx.Node) and other in self.value:
            src = self.value[other]
            if op == "add":
                return Stage("residual", (("src", src),) + ((("detached", True),) if other in self.detached else ()))
            # x * sigmoid(x): the current value is that sigmoid node itself, used nowhere else, of the value before
            sig = self.producers[cur]
            if op == "mul" and self.stages and self.stages[-1].kind == "sigmoid" and src == cur - 1 \
                    and (a if x_first else b) is sig and list(sig.users) == [node]:
                return "silu"
            self.refuse(node, f"a {op} of two chain values: x + y (a residual) and x * sigmoid(x) are supported")
        self.refuse(node, f"an operand {other!r} that is neither a constant, a per-channel parameter nor an "
                          "earlier chain value")


    def input_residual(self, node, op, x):
        """The layer's input x added to the (batch, hidden) value: torch broadcasts (batch, in) element-wise only
        when in == hidden (1 would broadcast x's one column, wider values would change the output's shape)."""
        if op != "add":
            self.refuse(node, f"a {op} of the layer's input: its residual add (v + x) is supported")
        if self.shapes[self.current] != FULL:
            self.refuse(node, "the layer's input added to a (batch, 1) row value: the output would take x's shape")
        if self.input_size != self.hidden:
            self.refuse(node, f"a residual of the layer's input: x has {self.input_size} features, the value "
                              f"{self.hidden}; torch adds them element-wise only when they are equal (generated then)")
        return Stage("input_residual", (("detached", True),) if x in self.detached else ())


def _gemm_weight(arg, params):
    """(qualified name, transposed, the transpose node or None) for a GEMM operand `p`, `p.t()` or `p.T`."""
    view = None
    if isinstance(arg, torch.fx.Node) and len(arg.users) == 1 and (
            (arg.op == "call_method" and arg.target == "t") or (arg.op == "call_function" and arg.target is torch.t)
            or (arg.op == "call_function" and arg.target is getattr and arg.args[1:] == ("T",))):
        view, arg = arg, arg.args[0]
    if isinstance(arg, torch.fx.Node) and arg.op == "get_attr" and arg.target in params:
        return arg.target, view is not None, view
    return None, False, None


def _linear(node, inp, model, modules, path):
    """(input_size, hidden_size, weight, bias_name, weight_in_out, nodes it consumes) of the layer's GEMM."""
    params = dict(model.named_parameters())
    if node.op == "call_module" and isinstance(modules[node.target], nn.Linear) and node.args[:1] == (inp,):
        lin = modules[node.target]
        bias = f"{node.target}.bias" if lin.bias is not None else None
        return lin.in_features, lin.out_features, f"{node.target}.weight", bias, False, ()
    if node.op == "call_function" and node.target is F.linear and _arg(node, 0, "input") is inp:
        weight, transposed, view = _gemm_weight(_arg(node, 1, "weight"), params)
        bias_arg = _arg(node, 2, "bias")
        if weight is None or params[weight].dim() != 2:
            _refuse(node, modules, path, "F.linear's weight must be a 2-D nn.Parameter of the Model")
        shape = params[weight].shape
        inputs, hidden = (shape[0], shape[1]) if transposed else (shape[1], shape[0])
        bias = None
        if bias_arg is not None:
            bias, _, bias_view = _gemm_weight(bias_arg, params)
            if bias is None or bias_view is not None or tuple(params[bias].shape) != (hidden,):
                _refuse(node, modules, path, f"F.linear's bias must be an nn.Parameter of shape ({hidden},)")
        return inputs, hidden, weight, bias, transposed, (view,) if view else ()
    gemm = (node.op == "call_function" and node.target in _GEMMS) or \
        (node.op == "call_method" and node.target in ("matmul", "mm", "__matmul__"))
    if gemm and node.args[:1] == (inp,) and len(node.args) == 2:
        weight, transposed, view = _gemm_weight(node.args[1], params)
        if weight is None or params[weight].dim() != 2:
            _refuse(node, modules, path, "the GEMM's second operand must be a 2-D nn.Parameter of the Model "
                                         "(or its .t() / .T)")
        shape = params[weight].shape
        inputs, hidden = (shape[1], shape[0]) if transposed else (shape[0], shape[1])
        return inputs, hidden, weight, None, not transposed, (view,) if view else ()
    _refuse(node, modules, path, "the layer must start with a Linear of its input (nn.Linear, F.linear, "
                                 "x @ w, torch.matmul, torch.mm)")


class _GradModeTracer(torch.fx.Tracer):
    """fx's tracer, noting on each node whether autograd was on when it was made: fx records no torch.no_grad()
    block, but the block does turn autograd off while the forward is traced."""

    def create_node(self, *args, **kwargs):
        node = super().create_node(*args, **kwargs)
        node.meta["grad_enabled"] = torch.is_grad_enabled()
        return node


def trace_chain(path, training=True) -> Chain:
    """Trace the file's Model (in training mode: the module must be right there too) and match linear -> stages;
    raise ModelError naming what does not fit (a second GEMM too: trace_layers reads those)."""
    return trace_model(_model_of(path, training), path)[0]


def trace_file_layers(path, training=True) -> tuple:
    """The file's Model as trace_layers reads it: one Chain a GEMM."""
    return trace_layers(_model_of(path, training), path)[0]


def _model_of(path, training):
    module = load_model_file(path)
    model = module.Model(*module.get_init_inputs())
    model.train(training)
    return model


def trace_model(model, path="<model>"):
    """(Chain, fx graph) of a Model instance with one GEMM, as trace_chain reads it."""
    chains, graph = trace_layers(model, path)
    if len(chains) > 1:
        gemm = next(n for n in graph.nodes if n.name == chains[1].value_nodes[0])
        _refuse(gemm, dict(model.named_modules()), pathlib.Path(path),
                "a second GEMM: a model of several Linears is generated as several fused layers, as `fusegen "
                "from-model` does (frontend.model_specs, codegen.write_layers), not as one chain")
    return chains[0], graph


def trace_layers(model, path="<model>"):
    """(Chains, fx graph) of a Model instance: a Linear and the stages after it, then, where a GEMM reads that
    chain's result, the next Linear and its stages, and so on (an MLP block: one Chain a GEMM)."""
    path = pathlib.Path(path)
    tracer = _GradModeTracer()
    tracer.record_stack_traces = True
    graph = tracer.trace(model)
    modules = dict(model.named_modules())
    params = dict(model.named_parameters())
    nodes = [n for n in graph.nodes if n.op not in ("placeholder", "output", "get_attr")]
    inputs = [n for n in graph.nodes if n.op == "placeholder"]
    if len(inputs) != 1:
        raise ModelError(f"{path}: Model.forward takes {len(inputs)} inputs; fusegen generates one-input layers")
    if not nodes:
        raise ModelError(f"{path}: Model.forward computes nothing")
    first = next((n for n in nodes if inputs[0] in _nodes_in(n)), nodes[0])
    layer = _linear(first, inputs[0], model, modules, path)
    for node in nodes[:nodes.index(first)]:
        if node not in layer[-1]:
            _refuse(node, modules, path, "the layer must start with a Linear of its input")
    # the weights' transposes (w.t() of x @ w.t()) that a later GEMM reads: traced before it, read with it
    views = {v for n in nodes for v in [_gemm_weight(n.args[1] if len(n.args) > 1 else None, params)[2]]
             if v is not None and _is_gemm(n, modules)}
    chains, reader = [], None
    follows = _follows_mode(model, graph, path)
    for node in nodes[nodes.index(first):]:
        if reader is None or _is_gemm(node, modules) and node.args and reader.value.get(node.args[0]) is not None:
            if reader is not None:  # a GEMM of a chain value: the chain so far is a layer, this GEMM starts the next
                following = _next_linear(node, reader, model, modules, path)
                chains.append(reader.chain(*layer[:-1]))
                layer = following
            _check_grad_on(node, modules, path)
            reader = _Reader(model, modules, path, layer[1], node, follows)
            if not chains:  # the first layer's input is the Model's: a residual of it is read
                reader.input_nodes, reader.input_size = {inputs[0]}, layer[0]
        elif node not in views:
            reader.read(node)
    chains.append(reader.chain(*layer[:-1]))
    out = next(n for n in graph.nodes if n.op == "output")
    if not isinstance(out.args[0], torch.fx.Node) or reader.value.get(out.args[0]) != reader.current:
        raise ModelError(f"{path}: Model.forward must return the last stage's result")
    if out.args[0] in reader.unsqueezed:
        raise ModelError(f"{_where(out.args[0], path)}: Model.forward returns the pool's (batch, 1, features) view: "
                         "fusegen generates it .squeeze(1)d")
    if out.args[0] in reader.detached:
        raise ModelError(f"{_where(out.args[0], path)}: Model.forward returns a detached value (no gradient reaches "
                         "the Linear): not generated")
    return tuple(chains), graph


def _dropouts(graph):
    return [n for n in graph.nodes if n.op == "call_function" and n.target in (F.dropout, torch.dropout)]


def _follows_mode(model, graph, path) -> frozenset:
    """The F.dropout / torch.dropout nodes of `graph` whose training argument is the Model's mode: the Model
    traced again in the other mode reads it the other way (F.dropout(x, p, self.training); a constant stays)."""
    here = _dropouts(graph)
    if not here:
        return frozenset()
    mode = model.training
    try:
        model.train(not mode)
        other = _dropouts(_GradModeTracer().trace(model))
    finally:
        model.train(mode)
    if len(other) != len(here):
        raise ModelError(f"{path}: Model.forward calls F.dropout {len(here)} times in {'training' if mode else 'eval'} "
                         f"and {len(other)} in the other mode: a forward whose ops change with self.training is not "
                         "generated")
    key = {F.dropout: "training", torch.dropout: "train"}
    return frozenset(n for n, o in zip(here, other)
                     if _arg(n, 2, key[n.target], True) != _arg(o, 2, key[o.target], True))


def _is_gemm(node, modules) -> bool:
    """A Linear module, F.linear, or a matmul / mm / @ (whether it fits is _linear's to say)."""
    return (node.op == "call_module" and isinstance(modules[node.target], nn.Linear)) or \
        (node.op == "call_function" and (node.target is F.linear or node.target in _GEMMS)) or \
        (node.op == "call_method" and node.target in ("matmul", "mm", "__matmul__"))


def _next_linear(node, reader, model, modules, path):
    """_linear's answer for a GEMM that starts the next layer, reading the previous chain's result."""
    inp = node.args[0]
    if reader.value[inp] != reader.current:
        reader.refuse(node, "a GEMM of an earlier value of the chain: a Linear after the first reads the last stage's "
                            "result")
    if inp in reader.detached:
        reader.refuse(node, "a GEMM of a detached value: the layers before it would get no gradient")
    if inp in reader.unsqueezed:
        reader.refuse(node, "a GEMM of the pool's (batch, 1, features) view: .squeeze(1) it first")
    if reader.shapes[-1] != FULL:
        reader.refuse(node, "a GEMM of a row value (one value a row): a Linear after the first reads the (batch, "
                            "hidden) result of the chain before it")
    layer = _linear(node, inp, model, modules, path)
    if layer[0] != reader.hidden:
        reader.refuse(node, f"a GEMM of {layer[0]} inputs after a layer of {reader.hidden} out features")
    return layer


def _check_grad_on(node, modules, path):
    if not node.meta.get("grad_enabled", True):
        _refuse(node, modules, path, "the Linear while autograd is off (torch.no_grad()): the layer would have no "
                                     "gradient")


def to_spec(chain: Chain, model_file_module=None, precision=None) -> Spec:
    """The short-form Spec of a headline chain (what `fusegen render` takes), or ModelError saying why not."""
    kinds = tuple(s.kind for s in chain.stages)
    if kinds != HEADLINE_KINDS or not chain.bias or chain.weight_in_out:
        raise ModelError(f"{chain.source}: {chain.describe()} is not the headline chain linear (with bias) -> "
                         f"{' -> '.join(HEADLINE_KINDS)}: interface.model_spec generates it in the general form")
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
