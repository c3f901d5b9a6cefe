"""Reductions over the row (templates/ops/reduce_<kind>.cuh.j2): softmax, log_softmax, a reduction to one value
a row (row_reduce), and a row value against the tensor (row_combine, an element-wise stage_ template)."""
from .op import FP32, FULL, ROW, ROW_VALUE, Op

# Row reductions to one value, torch's words for them.
REDUCTIONS = ("sum", "mean", "max", "min", "amax", "amin", "logsumexp")


def _reduce_title(s):
    keep = ", keepdim" if s.param("keepdim") else ""
    return f"{s.param('how')}(dim=1{keep})"


_COMBINE = {"add": "x + r", "sub": "x - r", "rsub": "r - x", "mul": "x * r", "div": "x / r", "rdiv": "r / x"}

SOFTMAX = Op("softmax", "softmax", "smax",
             "nn.Softmax(dim=1), F.softmax, torch.softmax, x.softmax() (over the features)",
             reduces=ROW, accumulate="float64", takes=FULL, makes=FULL, autocast=FP32)
LOG_SOFTMAX = Op("log_softmax", "log_softmax", "lsmax",
                 "nn.LogSoftmax(dim=1), F.log_softmax, torch.log_softmax, x.log_softmax() (over the features)",
                 reduces=ROW, accumulate="float64", takes=FULL, makes=FULL, autocast=FP32)
ROW_REDUCE = Op("row_reduce", "row reduction", "rred",
                "x.sum/mean/amax/amin/logsumexp(dim=1), torch.sum/mean/amax/amin/logsumexp, x.max/min(dim=1) "
                "(.values or [0]), keepdim or not (over the features; again over the size-1 dim: an identity)",
                reduces=ROW, accumulate="float64", takes=FULL, makes=ROW_VALUE, choices=("how",),
                describe=_reduce_title)
ROW_COMBINE = Op("row_combine", "row value against the tensor", "rcomb",
                 "x - r, x + r, x * r, x / r, r - x, r / x (r a (batch, 1) row reduction of x or of an earlier value)",
                 takes=ROW_VALUE, makes=FULL, choices=("op",), describe=lambda s: _COMBINE[s.param("op")])
