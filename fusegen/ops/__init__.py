"""The op registry: every op that can follow the GEMM, declared once. The front end, the planner, the renderer and
the accuracy bar read it instead of keeping tables of their own. An op's device code is its template:
- element-wise: `templates/ops/stage_<kind>.cuh.j2`, a struct with `fwd` and `bwd`;
- a reduction over the row: `templates/ops/reduce_<kind>.cuh.j2`, a struct with the reduction's state (`init`,
  `add`, `merge`), what the forward keeps per row (`finish`), its forward (`apply`, or `value` for a reduction
  to one value a row) and backward (`bwd`, with `bwd_add`: the row sums its backward needs);
- a reduction over the batch (a column of the output): `templates/ops/column_<kind>.cuh.j2`, a struct with what
  a column keeps (`Col`), the forward (`fwd`) and backward (`bwd`, with `bwd_add`: the column sums it needs);
- a pool over the features: AvgPool1d as `templates/ops/weight_avg_pool.cuh.j2`, kernels that pool the Linear's
  weight (forward) and map the pooled weight's gradient back (backward), plan/weight_pool.py; MaxPool1d as
  `templates/ops/pool_max_pool.cuh.j2`, the row kernels' read of a window's maximum and its backward's target;
- the GroupNorm: its fused epilogues per strategy and its backward kernel (templates/epilogue); beside row
  reductions, one of the row kernels' reductions: `templates/ops/reduce_group_norm.cuh.j2` (per group: forward,
  `bwd_add` for the group sums its backward needs, `bwd`).

Adding an element-wise op: one entry in ops/elementwise.py, one template, and its spellings in the front end's
reader. Adding a row reduction: one entry in ops/rows.py, one reduce_ template, its spellings. Every op file declares
with ops/op.py; this package's face assembles the registry, OPS, in a fixed order (messages and tables list it).
"""
# The op files first: the function op() below takes the package's name `op` from the submodule ops/op.py.
from .batch_norm import BATCH_NORM
from .elementwise import ELEMENTWISE_OPS
from .group_norm import GROUP_NORM
from .pool import AVG_POOL, MAX_POOL
from .op import COLUMN, ELEMENTWISE, FP32, FULL, GROUP, PROMOTES, ROW, ROW_VALUE, SAME, WINDOW, Op
from .rows import LOG_SOFTMAX, REDUCTIONS, ROW_COMBINE, ROW_REDUCE, SOFTMAX

__all__ = ["Op", "OPS", "op", "chain_title", "ELEMENTWISE", "GROUP", "ROW", "COLUMN", "WINDOW", "FULL", "ROW_VALUE",
           "REDUCTIONS", "SAME", "FP32", "PROMOTES"]

OPS = {o.kind: o for o in (GROUP_NORM, *ELEMENTWISE_OPS, SOFTMAX, LOG_SOFTMAX, ROW_REDUCE, BATCH_NORM, ROW_COMBINE,
                           AVG_POOL, MAX_POOL)}


def op(kind: str) -> Op:
    """The registered op of a stage kind."""
    try:
        return OPS[kind]
    except KeyError:
        raise KeyError(f"no op {kind!r} in the registry (fusegen/ops/); known: {', '.join(OPS)}") from None


def chain_title(chain, pool=None) -> str:
    """A layer in words: "Linear -> GroupNorm -> LeakyReLU -> x + x" (pool: the title of a pool the plan runs on
    the Linear's weight, said after it)."""
    return " -> ".join(["Linear"] + ([pool] if pool else []) +
                       [op(s.kind).title_of(s) for s in chain if s.kind != "identity"])
