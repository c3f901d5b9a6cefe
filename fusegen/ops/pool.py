"""Pools over the features: AvgPool1d and MaxPool1d on x.unsqueeze(1), right after the Linear.

An average pool is linear in the Linear's output, so in float32 layers it runs as the Linear with its weight and
bias pooled the same way (plan/weight_pool.py): the GEMM then has the pooled width, and every later stage sees it.
Device code: templates/ops/weight_avg_pool.cuh.j2, the kernels that pool the weight (forward) and map the pooled
weight's gradient back (backward). In 16-bit layers and under autocast (the reference rounds z to 16 bits before
it averages) it runs as a max pool does, in the row kernels: templates/ops/pool_avg_pool.cuh.j2.

A max pool is not linear: the GEMM keeps the Linear's width and the row kernels read the chain's first value as
the window's maximum of z (templates/ops/pool_max_pool.cuh.j2); backward sends each window's gradient to the
element torch's kernel takes (the first maximum; a NaN wins), summing where windows overlap."""
from .op import FULL, SAME, WINDOW, Op

AVG_POOL = Op("avg_pool", "AvgPool1d", "apool",
              "nn.AvgPool1d / F.avg_pool1d on x.unsqueeze(1), then .squeeze(1) (kernel_size, stride, padding, "
              "ceil_mode, count_include_pad as torch), right after the Linear",
              reduces=WINDOW, takes=FULL, makes=FULL, accumulate="float64", autocast=SAME,
              choices=("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"),
              describe=lambda s: f"AvgPool1d({s.param('kernel_size')}, stride={s.param('stride')}"
                                 f"{', padding=%d' % s.param('padding') if s.param('padding') else ''}"
                                 f"{', ceil_mode=True' if s.param('ceil_mode') else ''}"
                                 f"{', count_include_pad=False' if not s.param('count_include_pad') else ''})")

MAX_POOL = Op("max_pool", "MaxPool1d", "mpool",
              "nn.MaxPool1d / F.max_pool1d on x.unsqueeze(1), then .squeeze(1) (kernel_size, stride, padding, "
              "dilation, ceil_mode as torch; not return_indices), right after the Linear",
              reduces=WINDOW, takes=FULL, makes=FULL, autocast=SAME,
              choices=("kernel_size", "stride", "padding", "dilation", "ceil_mode"),
              describe=lambda s: f"MaxPool1d({s.param('kernel_size')}, stride={s.param('stride')}"
                                 f"{', padding=%d' % s.param('padding') if s.param('padding') else ''}"
                                 f"{', dilation=%d' % s.param('dilation') if s.param('dilation') != 1 else ''}"
                                 f"{', ceil_mode=True' if s.param('ceil_mode') else ''})")

POOLS = (AVG_POOL, MAX_POOL)


def pooled_width(width, kernel_size, stride, padding, ceil_mode, dilation=1):
    """How many windows torch's pool makes of `width` features (its output length; 0: none fits)."""
    span = width + 2 * padding - dilation * (kernel_size - 1) - 1
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


def max_window(w, width, kernel_size, stride, padding, dilation):
    """The features window w of a max pool covers (inside the row: the padding is -inf, never taken)."""
    start = w * stride - padding
    return [j for j in range(start, start + dilation * kernel_size, dilation) if 0 <= j < width]
