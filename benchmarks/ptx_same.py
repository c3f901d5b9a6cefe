"""Whether a template change left the machine code of existing layers alone: render each case's kernels with this
tree and with a base tree (another checkout, e.g. `git worktree add /tmp/base main`), compile both to PTX with nvcc
and compare them kernel by kernel. ptxas is deterministic, so identical PTX is identical SASS: such a change needs
no GPU rerun to stay correct and as fast. (PTX, not SASS: this machine's CUDA has no cuobjdump.)

    python benchmarks/ptx_same.py --base /tmp/base [--jobs 2] [--only NAME,...]

A case: a model file of tests/models (or the headline), a dtype and an arch. CPU only (nvcc, cuobjdump)."""
import argparse
import concurrent.futures
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
# (name, model file or "" for the headline, dtype, arch): every epilogue strategy on both engine families
CASES = [
    ("headline_wgmma", "", "float32", "9.0"), ("headline_mma", "", "float32", "8.0"),
    ("headline_bf16_wgmma", "", "bfloat16", "9.0"),
    ("two_stage", "stage_residual_detached.py", "float32", "9.0"),
    ("tile_local", "stage_hardtanh_wide_group.py", "float32", "8.0"),
    ("elementwise", "stage_relu_scale_tanh.py", "float32", "9.0"),
    ("rows", "row_gn_softmax.py", "float32", "9.0"), ("cols", "bn_relu.py", "float32", "8.0"),
    ("row_sum", "rowsum_scalar_params.py", "float32", "9.0"), ("scalars", "stage_scalar_params.py", "float32", "8.0"),
]
RENDER = """
import sys, pathlib, fusegen
from fusegen.frontend import model_spec
name, dtype, arch, out = sys.argv[1:]
arch = tuple(int(v) for v in arch.split("."))
spec = fusegen.Spec(8192, 8192, 512, dtype=dtype) if not name else model_spec(pathlib.Path("tests/models") / name)[0]
if name and dtype != "float32":
    import dataclasses
    spec = dataclasses.replace(spec, dtype=dtype)
p = fusegen.plan(spec, arch=arch)
pathlib.Path(out).write_text(fusegen.render_cuda(p))
print("compute_90a" if p.arch_flags else "compute_80")
"""


def ptx(tree, case, work):
    name, model, dtype, arch = case
    cu = work / f"{name}_{tree.name}.cu"
    r = subprocess.run([sys.executable, "-c", RENDER, model, dtype, arch, str(cu)], cwd=tree, capture_output=True,
                       text=True, env={**os.environ, "PYTHONPATH": str(tree)})
    if r.returncode:
        raise RuntimeError(f"{name} ({tree}): render failed\n{r.stderr[-2000:]}")
    out = cu.with_suffix(".ptx")
    c = subprocess.run(["nvcc", f"--gpu-architecture={r.stdout.strip()}", "-O3", "-ptx", "-o", str(out), str(cu)],
                       capture_output=True, text=True)
    if c.returncode:
        raise RuntimeError(f"{name} ({tree}): nvcc failed\n{c.stderr[-3000:]}")
    kernels, current = {}, None
    for line in out.read_text().splitlines():
        m = re.match(r"\.(?:visible|weak) \.(?:entry|func) (\w+)", line)
        if m:
            current = kernels.setdefault(m.group(1), [])
        elif current is not None and line.strip():
            current.append(line.strip())
    return kernels


def compare(base, case, work):
    a, b = ptx(ROOT, case, work), ptx(base, case, work)
    if set(a) != set(b):
        return f"{case[0]}: kernels differ: {sorted(set(a) ^ set(b))}"
    diff = [k for k in a if a[k] != b[k]]
    return f"{case[0]}: {len(a)} kernels, " + (f"PTX differs in {diff}" if diff else "PTX identical")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, type=pathlib.Path)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    cases = [c for c in CASES if not args.only or c[0] in args.only.split(",")]
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda c: compare(args.base.resolve(), c, pathlib.Path(tmp)), cases))
    print("\n".join(results))
    return 0 if all(r.endswith("PTX identical") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
