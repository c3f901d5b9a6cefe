"""BatchNorm1d modules on the GPU, beyond test_gpu_chains (which checks every model file in training mode, forward
and every gradient against fp64): the running statistics after three training steps (forward and backward of both on
the same weights and a fresh input, an SGD step), then the trained layers in eval against fp64 (the
running statistics as an affine; without them, still the batch's), and batch 1 (refused in training with torch's
message, accepted in eval). At each file's own size and at a size that runs the tensor-core engines."""
import pytest
import torch

from helpers import REPO, engine_ran, gpu_available, import_file, log_accuracy, prebuild
from test_gpu_chains import MODELS, scaled_copy

import fusegen
from fusegen.frontend import load_model_file, model_spec
from fusegen.tools.accuracy import DISTRIBUTIONS, compare_models, draw_input

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="needs a CUDA GPU and nvcc")]

BN_FILES = sorted(p.name for p in MODELS.glob("bn_*.py"))
SIZES = ("small", "big")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("bn")
    (out / "big").mkdir()
    arch = tuple(torch.cuda.get_device_capability())
    paths = {}
    for name in BN_FILES:
        for size in SIZES:
            f = MODELS / name if size == "small" else scaled_copy(MODELS / name, out / "big")
            plan = fusegen.plan(model_spec(f)[0], arch=arch, fixed_sizes=False)
            paths[name, size] = (f, fusegen.write_module(plan, out / size))
    prebuild(sorted({p for _, p in paths.values()}))
    return paths


def _buffers(m):
    return {n: b for n, b in m.named_buffers()}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", BN_FILES)
def test_running_statistics_then_eval_match(name, size, built):
    f, path = built[name, size]
    model_file, module = load_model_file(f), import_file(path)
    init = model_file.get_init_inputs()
    shape = tuple(model_file.get_inputs()[0].shape)
    torch.manual_seed(5)
    ref = model_file.Model(*init).cuda()
    torch.manual_seed(5)
    new = module.ModelNew(*init).cuda()
    gen = torch.Generator().manual_seed(11)
    problems = []
    for step in range(3):
        # both layers normalize the same batch with the same weights (the reference's, after its SGD step): the
        # running statistics then differ by how each computes the statistics alone. (The gradients are checked
        # against fp64 in test_gpu_chains; some are zero in exact arithmetic, e.g. a bias right before the
        # BatchNorm, and their fp32 noise would make the two layers' weights drift apart.)
        new.load_state_dict({k: v for k, v in ref.state_dict().items() if "running" not in k and "batches" not in k},
                            strict=False)
        x = draw_input(shape, DISTRIBUTIONS[step % len(DISTRIBUTIONS)], gen).float().cuda()
        grad = None
        for m in (ref, new):
            m.zero_grad(set_to_none=True)
            out = m(x)
            grad = torch.randn(out.shape, generator=gen).cuda() / shape[0] if grad is None else grad
            out.backward(grad)
        with torch.no_grad():
            for p in ref.parameters():
                p -= 0.05 * p.grad
    rb, nb = _buffers(ref), _buffers(new)
    assert list(rb) == list(nb), f"buffers differ: {list(nb)} vs {list(rb)}"
    for n in rb:
        if rb[n].dtype == torch.long:
            ok = torch.equal(rb[n], nb[n])
        else:  # torch sums in fp32, we in fp64: a few ulps, far below the statistics' own sampling noise
            ok = torch.allclose(nb[n], rb[n], rtol=1e-5, atol=1e-6 * rb[n].abs().max().item())
        if not ok:
            problems.append(f"buffer {n}: ours {nb[n].flatten()[:4].tolist()}, torch {rb[n].flatten()[:4].tolist()}")
        print(f"\n{name} {size}: {n} max |diff| {(nb[n].double() - rb[n].double()).abs().max().item():.3g}")
    # the trained state (weights and running statistics) in eval, against fp64
    state = {k: v.clone() for k, v in ref.state_dict().items()}

    def to_eval(r, m):
        r.load_state_dict(state)
        m.load_state_dict(state)
        r.eval()
        m.eval()

    batch = shape[0]
    report, found = compare_models(module.ModelNew, model_file.Model, init, shape, seed=7, dist="normal",
                                   setup=to_eval)
    engine = engine_ran(module, batch, shape[-1])
    print(f"{name} {size} eval [{engine}]: " + ", ".join(
        f"{k} {v[0]:.2g}/{v[1]:.2g}" for k, v in report.items() if isinstance(v, tuple) and k != "kink_flips"))
    log_accuracy(report, chain=f"{name} {size} eval", engine=engine, strategy=module.GROUP_STRATEGY, batch=batch,
                 seed=7, dist="normal", precision=module.PRECISION)
    problems += found
    # batch 1: refused in training as torch refuses it; in eval with running statistics an affine, any batch
    x1 = torch.randn(1, shape[1], device="cuda")
    new.train()
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        new(x1)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        ref.train()(x1)
    tracked = any(b.dtype == torch.long for b in nb.values())
    if tracked:
        new.load_state_dict(state)  # the reference stepped once more after new last took its weights
        new.eval()
        ref.eval()
        if not torch.allclose(new(x1), ref(x1), rtol=1e-4, atol=1e-4):
            problems.append("eval, batch 1: output differs from the reference")
    assert not problems, f"{name} {size}: " + "\n".join(problems)
