"""SASS evidence for the headline kernels: per function, tensor-core (HMMA/HGMMA), bulk tensor copy (UTMALDG),
cp.async (LDGSTS), FFMA and local-memory (LDL/STL: spills) instruction counts, from `cuobjdump --dump-sass` of
the cubin each precision's H200 plan builds (sm_90a for the wgmma engine, sm_90 otherwise).

    PYTHONPATH=. python benchmarks/sass_check.py   (needs nvcc and cuobjdump)
"""
import dataclasses
import pathlib
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import fusegen  # noqa: E402

HEADLINE = fusegen.Spec(8192, 8192, 512)


def main():
    tmp = pathlib.Path(tempfile.mkdtemp())
    for precision in ("3xtf32", "tf32", "fp32"):
        p = fusegen.plan(dataclasses.replace(HEADLINE, precision=precision), gpu="NVIDIA H200")
        cu, cubin = tmp / f"{precision}.cu", tmp / f"{precision}.cubin"
        cu.write_text(fusegen.render_cuda(p))
        arch = list(p.arch_flags) or ["-gencode=arch=compute_90,code=sm_90"]
        subprocess.run(["nvcc", *arch, "-O3", "-cubin", str(cu), "-o", str(cubin)], check=True)
        sass = subprocess.run(["cuobjdump", "--dump-sass", str(cubin)], check=True, stdout=subprocess.PIPE,
                              text=True).stdout
        print(f"{precision}: {p.summary}")
        print(f"  {'function':58} {'HMMA':>5} {'HGMMA':>5} {'UTMALDG':>7} {'LDGSTS':>6} {'FFMA':>5} {'LDL/STL':>7}")
        for fn in re.split(r"\n\s*Function : ", sass)[1:]:
            name = fn.split("\n")[0].strip()
            count = lambda pat: len(re.findall(pat, fn))  # noqa: E731
            print(f"  {name[:58]:58} {count(r'HMMA'):5} {count(r'HGMMA'):5} {count(r'UTMALDG'):7} {count(r'LDGSTS'):6} "
                  f"{count(r'FFMA'):5} {count(r'[^A-Z](?:LDL|STL)'):7}")


if __name__ == "__main__":
    main()
