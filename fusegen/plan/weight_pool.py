"""The pooled-weight rewrite (algebra that removes work): an average pool over the features right after the
Linear averages columns of z = x W^T + b, so it is the Linear with its weight's rows (and the bias) averaged over
the same windows:

    pool(z)_w = sum_{j in window w} z_j / d_w = x . (sum_{j in w} W_j / d_w) + sum_{j in w} b_j / d_w

The GEMM then runs at the pooled width (kernel_size / stride fewer columns at the default stride) and the rest of
the chain is planned on it as written. The pooled weight is computed in double and rounded once; the module
caches it by the parameters' version counters where no gradient is recorded, and computes it each call
otherwise (one pass over W). Backward: the GEMMs give dW' and db' of the pooled ones, and dW_j = sum over the
windows w holding j of dW'_w / d_w (the pool's own backward, on the weight)."""
import dataclasses

from ..dtypes import FLOAT32
from ..ops import op
from ..ops.pool import window
from ..spec import Spec, SpecError, Stage


@dataclasses.dataclass(frozen=True)
class WeightPool:
    """The pool the module applies to the Linear's weight and bias before the GEMM (templates/ops/
    weight_avg_pool.cuh.j2): windows of kernel_size features every stride, padding zeros each side."""
    hidden_in: int  # the Linear's out features
    hidden_out: int  # the windows: the GEMM's width
    kernel_size: int
    stride: int
    padding: int
    count_include_pad: bool
    title: str  # the pool in words

    @property
    def words(self) -> str:
        return (f"{self.title} right after the Linear -> the Linear with its weight and bias pooled alike "
                f"({self.hidden_in} -> {self.hidden_out} rows, computed once per weight update where no gradient "
                f"is recorded)")

    def windows(self):
        """(first, end, divisor) of every window, as torch's pool takes them (ops/pool.py)."""
        return [window(w, self.hidden_in, self.kernel_size, self.stride, self.padding, self.count_include_pad)
                for w in range(self.hidden_out)]


def split_weight_pool(spec: Spec):
    """(WeightPool, the spec of the pooled Linear and the stages after the pool) where the chain starts with an
    average pool, else (None, spec)."""
    if not spec.stages or spec.stages[0].kind != "avg_pool":
        return None, spec
    if spec.dtype != FLOAT32.name or spec.autocast:
        # the reference rounds z to 16 bits before it averages: the row kernels do the same (templates/ops/
        # pool_avg_pool.cuh.j2), where a pooled weight rounded to 16 bits would add an error of its own
        return None, spec
    pool = spec.stages[0]
    p = dict(pool.params)
    found = WeightPool(spec.hidden_size, spec.features, p["kernel_size"], p["stride"], p["padding"],
                       p["count_include_pad"], op("avg_pool").title_of(pool))
    rest = tuple(_shifted(s) for s in spec.stages[1:]) or (Stage("identity", where=pool.where),)
    return found, dataclasses.replace(spec, hidden_size=spec.features, stages=rest, folds=spec.folds + (found.words,))


def _shifted(stage):
    """A later stage with its chain-value indices one lower (the pool's output is the pooled Linear's)."""
    if "src" not in dict(stage.params):
        return stage
    src = stage.param("src")
    if src == 0:
        raise SpecError(f"stage {stage.kind} reads the Linear's output from before the pool (a residual across "
                        "the pool): not generated")
    return dataclasses.replace(stage, params=tuple((k, v - 1 if k == "src" else v) for k, v in stage.params))
