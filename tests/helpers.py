"""Shared test helpers: the reference layer, generated modules, and the accuracy bar."""
import copy
import importlib.util
import itertools
import pathlib
import shutil
import sys

import torch

REPO = pathlib.Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import fusegen  # noqa: E402

# The user's reference file, kept in-tree so that the device machine (which gets only the repo) has it too;
# test_render checks that it matches ../shared/reference when that is present.
REFERENCE_FILE = REPO / "tests" / "reference_model.py"
HEADLINE = fusegen.Spec(input_size=8192, hidden_size=8192, num_groups=512)

_counter = itertools.count()


def reference_namespace() -> dict:
    ns = {"__name__": "reference_model"}
    exec(compile(REFERENCE_FILE.read_text(), str(REFERENCE_FILE), "exec"), ns)
    return ns


def import_file(path):
    name = f"fusegen_test_module_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def gpu_available() -> bool:
    """A CUDA GPU and a CUDA compiler: what the GPU tests need."""
    nvcc = shutil.which("nvcc") or pathlib.Path("/usr/local/cuda/bin/nvcc").exists()
    return torch.cuda.is_available() and bool(nvcc)


def rel_err(value: torch.Tensor, truth: torch.Tensor) -> float:
    """||value - truth|| / ||truth|| in float64 (absolute when truth is zero)."""
    diff = (value.double() - truth).norm().item()
    norm = truth.norm().item()
    return diff / norm if norm > 0 else diff


def run_layer(model, x, grad, dtype):
    """Forward and backward of `model` at `dtype`; returns out and the five gradients, in that order."""
    x = x.to(dtype).detach().requires_grad_()
    out = model(x)
    out.backward(grad.to(dtype))
    grads = [x.grad, model.fc.weight.grad, model.fc.bias.grad, model.gn.weight.grad, model.gn.bias.grad]
    return [out.detach()] + [g.detach() for g in grads]


NAMES = ("out", "grad_x", "grad_fc.weight", "grad_fc.bias", "grad_gn.weight", "grad_gn.bias")


def compare_with_reference(model_new_cls, spec, batch, seed, device="cuda"):
    """Check ModelNew against the fp32 and fp64 PyTorch reference on fresh random inputs.

    Returns a dict name -> (our rel. error vs fp64, fp32 reference's rel. error vs fp64) and raises
    AssertionError on a miss: output allclose(1e-4, 1e-4) to the fp32 reference; every tensor within
    max(4 x the fp32 reference's own error, 1e-6) of fp64; nothing NaN.
    """
    ns = reference_namespace()
    args = (spec.input_size, spec.hidden_size, spec.num_groups)
    torch.manual_seed(seed)
    ref = ns["Model"](*args).to(device)
    torch.manual_seed(seed)
    new = model_new_cls(*args).to(device)
    gen = torch.Generator().manual_seed(seed)
    gamma = (1 + 0.5 * torch.randn(spec.hidden_size, generator=gen)).to(device)
    beta = (0.5 * torch.randn(spec.hidden_size, generator=gen)).to(device)
    with torch.no_grad():
        for m in (ref, new):
            m.gn.weight.copy_(gamma)
            m.gn.bias.copy_(beta)
    ref64 = copy.deepcopy(ref).double()
    x = torch.rand(batch, spec.input_size, generator=gen).to(device)
    grad = torch.randn(batch, spec.hidden_size, generator=gen).to(device)

    ours = run_layer(new, x, grad, torch.float32)
    fp32 = run_layer(ref, x, grad, torch.float32)
    fp64 = run_layer(ref64, x, grad, torch.float64)

    report = {}
    for name, a, r32, r64 in zip(NAMES, ours, fp32, fp64):
        assert a.shape == r64.shape and a.dtype == torch.float32, f"{name}: {a.shape} {a.dtype}"
        assert torch.isfinite(a).all(), f"{name}: non-finite values (unwritten or overflowed) for {spec}, batch {batch}"
        report[name] = (rel_err(a, r64), rel_err(r32, r64))
    out_diff = (ours[0] - fp32[0]).abs().max().item() if ours[0].numel() else 0.0
    assert torch.allclose(ours[0], fp32[0], atol=1e-4, rtol=1e-4), (
        f"output not allclose(1e-4) to the fp32 reference: max diff {out_diff:.3g} ({spec}, batch {batch})")
    for name, (e_ours, e_ref) in report.items():
        bar = max(4 * e_ref, 1e-6)
        assert e_ours <= bar, f"{name}: rel. error {e_ours:.3g} > bar {bar:.3g} ({spec}, batch {batch}, seed {seed})"
    report["max_out_diff"] = out_diff
    return report
