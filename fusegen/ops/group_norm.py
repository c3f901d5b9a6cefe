"""The GroupNorm: fused into the GEMM epilogue per group strategy (templates/epilogue), or beside row reductions one
of the row kernels' reductions (templates/ops/reduce_group_norm.cuh.j2)."""
from .op import FP32, FULL, GROUP, Op

GROUP_NORM = Op("group_norm", "GroupNorm", "gn",
                "nn.GroupNorm, F.group_norm (at most one, over the Linear's out features)",
                reduces=GROUP, accumulate="float64", takes=FULL, makes=FULL, choices=("affine", "eps"), autocast=FP32)
