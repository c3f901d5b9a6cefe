"""The persistent forward's planner rule, A / B: model files rendered with the forward one tile a block (A, the rule
before session 38: persistent only with the GroupNorm on the fragments) and as the planner plans them now (B), at
one size and dtype, into ab/pfA_<file> and ab/pfB_<file> for benchmarks/ab_modules.py.

    PYTHONPATH=. python3 benchmarks/persistent_forward_ab.py [--files relu_scale.py,row_amax_tuple_dim.py]
        [--batch 1024 --input 8192 --hidden 8192] [--dtype bfloat16] [--gpu "NVIDIA H100 80GB HBM3"]
"""
import argparse
import dataclasses
import pathlib
import shutil
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

import fusegen  # noqa: E402
from fusegen.frontend import model_spec  # noqa: E402
from fusegen.plan import planner  # noqa: E402
from helpers import resized_copy  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", default="relu_scale.py,row_amax_tuple_dim.py")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--input", type=int, default=8192)
    ap.add_argument("--hidden", type=int, default=8192)
    ap.add_argument("--dtype", default="bfloat16", choices=["float32", "bfloat16", "float16"])
    ap.add_argument("--gpu", default=None, help="the GPU to plan for (default: this machine's)")
    args = ap.parse_args()
    gpu, arch = args.gpu, (9, 0)
    if gpu is None:
        import torch
        gpu, arch = torch.cuda.get_device_name(), torch.cuda.get_device_capability()
    work, out = pathlib.Path(tempfile.mkdtemp(prefix="fusegen-pf-")), REPO / "ab"
    out.mkdir(exist_ok=True)
    now = planner.Plan.persistent_forward
    before = property(lambda p: p.wgmma and p.wgmma_template == "wgmma_half" and p.group_strategy == planner.FRAGMENT)
    for name in args.files.split(","):
        spec = dataclasses.replace(model_spec(resized_copy(REPO / "tests" / "models" / name, work, args.batch,
                                                           args.input, args.hidden))[0], dtype=args.dtype)
        for tag, rule in (("A", before), ("B", now)):
            planner.Plan.persistent_forward = rule
            try:
                p = fusegen.plan(spec, gpu=gpu, arch=arch, batch=args.batch)
                persistent, path = p.persistent_forward, fusegen.write_module(p, work / tag)
            finally:
                planner.Plan.persistent_forward = now
            dst = out / f"pf{tag}_{name}"
            shutil.copy(path, dst)
            print(f"{dst}: {p.group_strategy}, persistent forward {persistent}")


if __name__ == "__main__":
    main()
