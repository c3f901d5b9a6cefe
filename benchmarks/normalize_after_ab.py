"""The GroupNorm normalized after the wgmma forward (Plan.normalize_after), A / B: the headline layer planned with the
fused epilogue (A) and with the kernel after the GEMM (B), per mode, into ab/naA_<mode>.py and ab/naB_<mode>.py
for benchmarks/ab_modules.py; with --check, each pair against fp64 beside the reference in the same dtype
(relative Frobenius error of the output and every gradient, three input distributions, free memory NaN-poisoned).

    PYTHONPATH=. python3 benchmarks/normalize_after_ab.py [--modes bfloat16,float16,tf32] [--gpu NAME]
    device: PYTHONPATH=. python3 benchmarks/normalize_after_ab.py --check [--batch 1024]

B normalizes z as stored (16 bits where the layer is), as the reference's GroupNorm does its Linear's rounded output;
A normalizes the fp32 accumulators. The bar for B is the 16-bit modules' (tests/test_gpu_dtypes.py): no farther from
fp64 than the reference in its dtype, ratio <= 1.5; tf32 against its own A (the same z in fp32: the same values).
"""
import argparse
import pathlib
import shutil
import sys
import tempfile

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

import fusegen  # noqa: E402

MODES = {"bfloat16": {"dtype": "bfloat16"}, "float16": {"dtype": "float16"}, "tf32": {"precision": "tf32"}}
INIT = (8192, 8192, 512)
RATIO = 1.5  # the 16-bit bar: error vs fp64 at most this times the reference's in the same dtype


def render(modes, gpu, arch, batch):
    work, out = pathlib.Path(tempfile.mkdtemp(prefix="fusegen-na-")), REPO / "ab"
    out.mkdir(exist_ok=True)
    for mode in modes:
        for tag, after in (("A", False), ("B", True)):
            p = fusegen.plan(fusegen.Spec(*INIT, **MODES[mode]), gpu=gpu, arch=arch, batch=batch,
                             normalize_after=after)
            dst = out / f"na{tag}_{mode}.py"
            shutil.copy(fusegen.write_module(p, work / tag), dst)
            print(f"{dst}: {p.kernel_uri}")


def check(modes, batch):
    import torch

    from fusegen.tools.accuracy import draw_input, rel_err
    from fusegen.tools.tune import _import
    from helpers import reference_namespace
    from same_results import poison

    Model = reference_namespace()["Model"]
    bad = 0
    for mode in modes:
        dtype = getattr(torch, MODES[mode].get("dtype", "float32"))
        models = {}
        for tag in "AB":
            torch.manual_seed(0)
            models[tag] = _import(REPO / "ab" / f"na{tag}_{mode}.py").ModelNew(*INIT).cuda().to(dtype)
        torch.manual_seed(0)
        models["ref"] = Model(*INIT).cuda().to(dtype)
        m64 = Model(*INIT).cuda().double()
        m64.load_state_dict({k: v.double() for k, v in models["ref"].state_dict().items()})
        gen = torch.Generator().manual_seed(39)
        for dist in ("normal", "uniform", "laplace"):
            x = draw_input((batch, INIT[0]), dist, gen).cuda().to(dtype)
            g = draw_input((batch, INIT[1]), "normal", gen).cuda().to(dtype)
            results = {}
            for tag, model in list(models.items()) + [("fp64", m64)]:
                model.zero_grad(set_to_none=True)
                poison()
                xg = (x.double() if tag == "fp64" else x).clone().requires_grad_()
                out = model(xg)
                out.backward(g.double() if tag == "fp64" else g)
                results[tag] = {"out": out.detach(), "x": xg.grad,
                                **{n: p.grad for n, p in model.named_parameters()}}
            torch.cuda.synchronize()
            truth = results["fp64"]
            line = []
            for key in truth:
                err = {t: rel_err(results[t][key], truth[key]) for t in ("A", "B", "ref")}
                finite = bool(torch.isfinite(results["B"][key]).all())
                # 16 bits: B against the reference's error; tf32: B against A's (the same z, fp32)
                base = err["A"] if mode == "tf32" else err["ref"]
                ok = finite and err["B"] <= RATIO * base + 1e-12
                bad += not ok
                line.append(f"{key} {err['B']:.2e}/{err['A']:.2e}/{err['ref']:.2e}{'' if ok else ' BAD'}")
            allclose = ""
            if dtype != torch.float32:
                close = torch.isclose(results["B"]["out"].float(), results["ref"]["out"].float(), 1e-2, 1e-2)
                allclose = f" allclose(1e-2) misses {int((~close).sum())} of {close.numel()};"
            print(f"{mode:<8} {dist:<8}{allclose} B/A/ref vs fp64: " + ", ".join(line), flush=True)
    print(f"{bad} checks failed (B over {RATIO}x its bar, or not finite)")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--gpu", default=None, help="the GPU to plan for (default: this machine's)")
    ap.add_argument("--check", action="store_true", help="check the rendered pairs against fp64 (a GPU)")
    args = ap.parse_args()
    modes = args.modes.split(",")
    if args.check:
        return check(modes, args.batch)
    gpu, arch = args.gpu, (9, 0)
    if gpu is None:
        import torch
        gpu, arch = torch.cuda.get_device_name(), torch.cuda.get_device_capability()
    render(modes, gpu, arch, args.batch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
