"""Where the wgmma engine's time goes: the headline forward with parts of its mainloop switched off.

    PYTHONPATH=. python benchmarks/wgmma_bottleneck.py [--precision 3xtf32]

Each variant is the rendered module with one source edit (results are wrong on purpose; only time counts):
  no_tma      the producer issues no bulk copies (stages complete empty): no L2/HBM traffic
  no_lds      the consumers read no R fragments from shared memory (constants instead)
  trunc_split the raw operand's split truncates (one AND) instead of cvt.rna.tf32 (conversion pipe)
  int_rna     round to nearest by integer add and mask instead of cvt.rna.tf32
  promote256  running sums promoted every 256 of K instead of 64 (fewer pipeline drains)
The gap between a variant and the baseline is what that part costs when the others stay.
"""
import argparse
import pathlib
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

import torch  # noqa: E402

import fusegen  # noqa: E402
from fusegen.tools.tune import _build_all, _import, time_ms  # noqa: E402

# the engine's TF32 rounding (cvt.rna.tf32.f32) of the raw operand, in registers
CVT = '#ifndef FG_NO_WGMMA\n    asm("cvt.rna.tf32.f32 %0, %1;\\n" : "=r"(r) : "f"(x));'
EDITS = {
    "baseline": [],
    "no_tma": [("bar_expect_bytes(q.full + s, STAGE_BYTES);", "bar_arrive(q.full + s); continue;")],
    "no_lds": [("const float v = rs[r_index<R_K_FAST>(c + 8 * (e & 1), 8 * k8 + t + 4 * (e >> 1))];",
                "const float v = __int_as_float(0x3c000000 + 8 * k8 + e + (rs == nullptr));")],
    "trunc_split": [(CVT, "r = __float_as_uint(x) & 0xffffe000u;\n#ifndef FG_NO_WGMMA")],
    "int_rna": [(CVT, "r = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;\n#ifndef FG_NO_WGMMA")],
    "promote256": [("constexpr int PROMOTE_K = 64;", "constexpr int PROMOTE_K = 256;")],  # 3xtf32 only
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--precision", default="3xtf32")
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    spec = fusegen.Spec(8192, 8192, 512, precision=args.precision)
    plan = fusegen.plan(spec, arch=fusegen.WGMMA_ARCH)
    source = fusegen.render(plan)
    out = pathlib.Path(tempfile.mkdtemp())
    paths = {}
    for name, edits in EDITS.items():
        if any(source.count(old) != 1 for old, _ in edits):
            continue  # an edit this precision has nothing to apply to (tf32 promotes never)
        text = source.replace(f'KERNEL_URI = "{plan.kernel_uri}"', f'KERNEL_URI = "{plan.kernel_uri}_{name}"')
        for old, new in edits:
            assert text.count(old) == 1, (name, old)
            text = text.replace(old, new)
        paths[name] = out / f"variant_{name}.py"
        paths[name].write_text(text)
    failed = _build_all(list(paths.values()), jobs=len(paths))
    assert not failed, failed
    torch.manual_seed(0)
    x = torch.rand(1024, 8192, device="cuda")
    print(f"{'variant':<12} {'forward ms':>10}")
    for name, path in paths.items():
        model = _import(path).ModelNew(8192, 8192, 512).cuda()

        def fwd():
            with torch.no_grad():
                model(x)

        print(f"{name:<12} {time_ms(fwd, args.reps):>10.3f}", flush=True)


if __name__ == "__main__":
    main()
