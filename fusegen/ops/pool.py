"""Pools over the features: AvgPool1d on x.unsqueeze(1). An average pool right after the Linear is linear in its
output, so it runs as the Linear with its weight and bias pooled the same way (plan/weight_pool.py): the GEMM then
has the pooled width, and every later stage sees it. Device code: templates/ops/weight_<kind>.cuh.j2, the kernels
that pool the weight (forward) and map the pooled weight's gradient back (backward)."""
from .op import FULL, WINDOW, Op

AVG_POOL = Op("avg_pool", "AvgPool1d", "apool",
              "nn.AvgPool1d / F.avg_pool1d on x.unsqueeze(1), then .squeeze(1) (kernel_size, stride, padding, "
              "ceil_mode, count_include_pad as torch), right after the Linear",
              reduces=WINDOW, takes=FULL, makes=FULL, accumulate="float64",
              choices=("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"),
              describe=lambda s: f"AvgPool1d({s.param('kernel_size')}, stride={s.param('stride')}"
                                 f"{', padding=%d' % s.param('padding') if s.param('padding') else ''}"
                                 f"{', ceil_mode=True' if s.param('ceil_mode') else ''}"
                                 f"{', count_include_pad=False' if not s.param('count_include_pad') else ''})")


def pooled_width(width, kernel_size, stride, padding, ceil_mode):
    """How many windows torch's pool makes of `width` features (its output length; 0: none fits)."""
    span = width + 2 * padding - kernel_size
    if span < 0:
        return 0
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= width + padding:  # the last window must start inside the row or its left pad
        out -= 1
    return out


def window(w, width, kernel_size, stride, padding, count_include_pad):
    """(first, end, divisor) of window w over `width` features, as torch's average pool takes it: the features
    [first, end) summed and divided by the window's size within the padded row (count_include_pad) or by the
    features it covers."""
    start = w * stride - padding
    end = min(start + kernel_size, width + padding)
    size = end - start
    first, last = max(start, 0), min(end, width)
    return first, last, size if count_include_pad else last - first
