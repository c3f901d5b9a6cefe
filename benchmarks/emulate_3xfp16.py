"""Issue 17 before its kernels: the planned 3xFP16 split (docs/perf-notes.md, "Plan for 3xFP16") emulated on the CPU
beside 3xTF32's and a plain fp32 GEMM, each against fp64, over the issue's input distributions, extreme rows and
sums of several lengths. A prediction of the engine's accuracy, not a measurement of it.

Operands (x: rows of P; w: rows of W, both reduced over their last dimension K):
- 3xTF32: hi = tf32_rna(v), lo = tf32_rna(v - hi) (cvt.rna: to nearest, ties away from zero), products
  hi*hi + hi*lo + lo*hi;
- 3xFP16: per row a power-of-two scale s = 2^(E - 14), E the exponent of the row's largest finite |v| (1 for a row
  of zeros), so that its largest element lands in [2^14, 2^15), under fp16's 65504 whatever the rounding;
  hi = fp16(v / s), lo = fp16(v / s - hi) (to nearest even); the same three products, times s_x s_w;
- the tensor cores' products of 11-bit significands are exact in fp32; each 64 of K is summed and rounded to fp32,
  then added to an fp32 total (the engines' promotion), which stands in for the hardware's own accumulation.

    python benchmarks/emulate_3xfp16.py [--rows 64] [--cols 64] [--ks 16,100,1024,8192]
"""
import argparse

import torch

from fusegen.tools.accuracy import DISTRIBUTIONS, draw_input

PROMOTE_K = 64


def tf32_rna(v: torch.Tensor) -> torch.Tensor:
    """float32 -> the nearest TF32 (10 explicit significand bits), ties away from zero (cvt.rna.tf32.f32)."""
    bits = v.contiguous().view(torch.int32)
    finite = torch.isfinite(v)
    out = ((bits + 0x1000) & ~0x1FFF).view(torch.float32)
    return torch.where(finite, out, v)


def split_tf32(v):
    hi = tf32_rna(v)
    return hi, tf32_rna(v - hi), torch.ones(v.shape[:-1] + (1,))


def row_scale(v: torch.Tensor) -> torch.Tensor:
    """2^(E - 14) per row, E = floor(log2 max finite |v|) of the row (1 for a row without a nonzero finite value)."""
    a = torch.where(torch.isfinite(v), v.abs(), torch.zeros_like(v)).amax(-1, keepdim=True)
    _, e = torch.frexp(a)  # a = m 2^e, m in [0.5, 1): E = e - 1
    return torch.where(a > 0, torch.ldexp(torch.ones_like(a), e - 1 - 14), torch.ones_like(a))


def fp16_rz(t: torch.Tensor) -> torch.Tensor:
    """float32 -> fp16 rounded toward zero (__float2half_rz): the nearest, stepped back one ulp where it overshot."""
    h = t.half().float()
    over = torch.isfinite(t) & (h.abs() > t.abs())
    return torch.where(over, torch.nextafter(h.half(), torch.zeros_like(h).half()).float(), h)


def split_fp16(v):
    """hi and lo to nearest (the plan of session 25)."""
    s = row_scale(v)
    t = v / s  # exact: a power of two, t's largest finite element in [2^14, 2^15)
    hi = t.half().float()
    lo = torch.where(torch.isfinite(t), t - hi, torch.zeros_like(t)).half().float()
    return hi, lo, s


SMALLEST = 2.0 ** -24  # fp16's smallest subnormal


def split_fp16_inf_safe(v):
    """hi toward zero, so lo = fp16(t - hi) has t's sign; a zero lo of a nonzero t is +-2^-24 (2^-38 of the row's
    largest element); a non-finite v is its own hi and lo. Every product of an Inf with a plane then has the sign
    the reference's Inf * v has, and is NaN only where the reference's is (Inf * 0, NaN)."""
    s = row_scale(v)
    t = v / s
    hi = fp16_rz(t)
    lo = (t - hi).half().float()
    lo = torch.where((lo == 0) & (t != 0), torch.copysign(torch.full_like(t, SMALLEST), t), lo)
    fin = torch.isfinite(t)
    return torch.where(fin, hi, t), torch.where(fin, lo, t), s


def split_fp16_x(v):
    """The per-call operand to nearest (unbiased: the dropped lo * lo products cancel on average), a non-finite v
    its own hi and lo; paired with the weight's inf-safe split, an Inf of x meets only planes of w's sign."""
    hi, lo, s = split_fp16(v)
    fin = torch.isfinite(v)
    return torch.where(fin, hi, v / s), torch.where(fin, lo, v / s), s


def gemm_3x(x, w, split, split_w=None):
    """x (M, K) w (N, K) -> (M, N): three products of the split planes, fp32 sums promoted every PROMOTE_K."""
    xh, xl, sx = split(x)
    wh, wl, sw = (split_w or split)(w)
    total = torch.zeros(x.shape[0], w.shape[0], dtype=torch.float32)
    for k0 in range(0, x.shape[1], PROMOTE_K):
        sl = slice(k0, k0 + PROMOTE_K)
        a_h, a_l, b_h, b_l = (t[:, sl].double() for t in (xh, xl, wh, wl))
        chunk = a_l @ b_h.T + a_h @ b_l.T + a_h @ b_h.T  # exact products, one rounding a chunk (stands in for the
        total += chunk.float()                           # tensor cores' own fp32 accumulation)
    return (total.double() * sx.double() * sw.double().T).float()


def rel(value, truth):
    return ((value.double() - truth).norm() / truth.norm()).item()


def extreme_rows(rows, k, gen):
    """Rows of zeros, a single huge element, subnormals, and scales 2^20 apart."""
    x = torch.randn(rows, k, generator=gen)
    x[0] = 0
    x[1] = torch.randn(k, generator=gen) * 1e-3
    x[1, 3] = 3e4
    x[2] = torch.randn(k, generator=gen) * 1e-40  # float32 subnormals
    x[3::2] *= 2.0 ** 20
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=64)
    ap.add_argument("--cols", type=int, default=64)
    ap.add_argument("--ks", default="16,100,1024,8192")
    args = ap.parse_args()
    gen = torch.Generator().manual_seed(0)
    print(f"normwise error vs fp64, x ({args.rows}, K) times w ({args.cols}, K)^T; w normal / sqrt(K)")
    print(f"{'input':12s} {'K':>5s} {'fp32':>9s} {'3xtf32':>9s} {'3xfp16':>9s} {'inf-safe':>9s} {'w-safe':>9s}  "
          "ratios to fp32: 3xfp16, inf-safe, w-safe")
    for k in (int(v) for v in args.ks.split(",")):
        w = torch.randn(args.cols, k, generator=gen) / k ** 0.5
        for dist in DISTRIBUTIONS + ("extreme_rows",):
            x = extreme_rows(args.rows, k, gen) if dist == "extreme_rows" else draw_input((args.rows, k), dist, gen)
            truth = x.double() @ w.double().T
            e32 = rel(x @ w.T, truth)
            e_tf = rel(gemm_3x(x, w, split_tf32), truth)
            e_16 = rel(gemm_3x(x, w, split_fp16), truth)
            e_safe = rel(gemm_3x(x, w, split_fp16_inf_safe), truth)
            e_w = rel(gemm_3x(x, w, split_fp16_x, split_fp16_inf_safe), truth)
            print(f"{dist:12s} {k:5d} {e32:9.2e} {e_tf:9.2e} {e_16:9.2e} {e_safe:9.2e} {e_w:9.2e}  {e_16 / e32:6.2f} "
                  f"{e_safe / e32:6.2f} {e_w / e32:6.2f}")
    # Inf / NaN: where the reference's output is Inf, NaN or finite, and the Infs' signs
    x = torch.randn(6, 64, generator=gen)
    x[0, 5], x[1, 7], x[2, 9], x[2, 11] = float("inf"), float("nan"), float("-inf"), float("inf")
    w = torch.randn(8, 64, generator=gen)
    w[3, 5] = 0.0  # Inf * 0 in the reference: NaN
    w[4, 5] = 1.0  # exact in hi: a zero lo
    ref = x @ w.T
    for name, split, split_w in (("3xtf32", split_tf32, None), ("3xfp16", split_fp16, None),
                                 ("inf-safe", split_fp16_inf_safe, None), ("w-safe", split_fp16_x, split_fp16_inf_safe)):
        ours = gemm_3x(x, w, split, split_w)
        same = bool(((ref.isnan() == ours.isnan()) & (ref.isinf() == ours.isinf()) &
                     (ref.isinf() <= (ref.sign() == ours.sign()))).all())
        print(f"{name}: Inf / NaN where the fp32 reference's are, with its signs: {same}")


if __name__ == "__main__":
    main()
