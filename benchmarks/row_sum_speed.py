"""The row-sum rewrite's speed by phase (branch issue16-rowsum), at 1024 x 8192 -> 8192 by default: forward with
the weight reduction cached (what a call with unchanged weights costs), forward with it recomputed (the cache
cleared before each call: one pass over W plus the GEMV), forward+backward (gradients set to None each time), and
eager PyTorch's forward and forward+backward, each the median of CUDA-event times over --reps calls.
    device: PYTHONPATH=. python3 benchmarks/row_sum_speed.py [--file examples/rowsum_matmul_div_sum_scale_8192.py]"""
import argparse
import statistics
import sys
import tempfile

import torch

sys.path.insert(0, "tests")
from helpers import import_file  # noqa: E402

import fusegen  # noqa: E402
from fusegen.frontend import load_model_file, model_spec  # noqa: E402


def _median_ms(fn, reps, before=None):
    times = []
    for _ in range(reps):
        if before:
            before()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", default="examples/rowsum_matmul_div_sum_scale_8192.py")
    ap.add_argument("--reps", type=int, default=50)
    args = ap.parse_args()
    plan = fusegen.plan(model_spec(args.file)[0])
    print(f"{torch.cuda.get_device_name()}: {plan.module_name}\n  {plan.summary}")
    module = import_file(fusegen.write_module(plan, tempfile.mkdtemp()), poison=False)
    model_file = load_model_file(args.file)
    init = model_file.get_init_inputs()
    torch.manual_seed(0)
    ref = model_file.Model(*init).cuda()
    torch.manual_seed(0)
    new = module.ModelNew(*init).cuda()
    x = model_file.get_inputs()[0].cuda()
    xg = x.clone().requires_grad_()

    def fwd_bwd(model):
        def run():
            model.zero_grad(set_to_none=True)
            xg.grad = None
            model(xg).sum().backward()
        return run

    with torch.no_grad():
        for m in (new, ref):
            m(x)  # build and warm
    rows = []
    with torch.no_grad():
        rows.append(("fusegen forward, reduction cached", _median_ms(lambda: new(x), args.reps)))
        rows.append(("fusegen forward, reduction recomputed",
                     _median_ms(lambda: new(x), args.reps, before=module._REDUCED.clear)))
        rows.append(("eager forward", _median_ms(lambda: ref(x), args.reps)))
    fwd_bwd(new)()
    rows.append(("fusegen forward+backward (cached)", _median_ms(fwd_bwd(new), args.reps)))
    rows.append(("eager forward+backward", _median_ms(fwd_bwd(ref), args.reps)))
    eager = dict(rows)
    print(f"{'phase':42s} {'ms':>9s}")
    for name, ms in rows:
        print(f"{name:42s} {ms:9.4f}")
    print(f"forward vs eager: {eager['eager forward'] / eager['fusegen forward, reduction cached']:.1f}x cached, "
          f"{eager['eager forward'] / eager['fusegen forward, reduction recomputed']:.1f}x recomputed; "
          f"forward+backward {eager['eager forward+backward'] / eager['fusegen forward+backward (cached)']:.1f}x")


if __name__ == "__main__":
    main()
