"""The BatchNorm1d: a reduction over the batch, one per channel (templates/ops/column_batch_norm.cuh.j2)."""
from .op import COLUMN, FULL, Op

BATCH_NORM = Op(
    "batch_norm", "BatchNorm1d", "bn",
    "nn.BatchNorm1d over the Linear's out features (training: batch statistics and running statistics updated, "
    "momentum or None; eval: the running statistics; affine and track_running_stats on or off)",
    reduces=COLUMN, accumulate="float64", takes=FULL, makes=FULL, scalars=("batch_stats",), choices=("affine",),
    live=(("momentum", "(-1.0 if {m}.momentum is None else float({m}.momentum))"),
          # torch's rule: batch statistics in training, or in eval without running statistics
          ("batch_stats", "float({m}.training or {m}.running_mean is None)")),
    buffers=("running_mean", "running_var", "num_batches_tracked"),
    describe=lambda s: "BatchNorm1d" + ("" if s.param("affine") else " (no affine)"))
