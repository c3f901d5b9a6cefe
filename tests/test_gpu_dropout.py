"""Dropout in training on the GPU (ops/elementwise.py's dropout, templates/ops/stage_dropout.cuh.j2): each dropout
model file's forward and every gradient against an fp64 run of its Model that drops what ours dropped (the masks
recomputed from the seed ours drew, tests/helpers.py's Philox copy: compare_models' fixed masks), at the file's own
size and scaled to real use; the masks' statistics (keep rate within 4 sigma overall and per row and column, kept
values z / (1 - p) bit for bit, the mask the recomputed one), the gradient zero where dropped, torch.manual_seed
repeating a run while fresh calls draw anew, eval the identity without a draw, bf16, torch.compile."""
import pytest
import torch

from helpers import (REPO, build_file_sizes, check_file_sizes_fp64, dropout_factor, fixed_masks, gpu_available,
                     import_file, prebuild, record_seeds)
from test_dropout import DROPOUT_FILES

import fusegen
from fusegen.frontend import load_model_file, model_spec
from fusegen.tools.accuracy import compare_models

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="needs a CUDA GPU and nvcc")]

MODELS = REPO / "tests" / "models"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Each file's module at its own and at the scaled size, and dropout_alone's in bf16, built in parallel."""
    arch = torch.cuda.get_device_capability()
    out = tmp_path_factory.mktemp("dropout")
    bf16 = model_spec(MODELS / "dropout_alone.py")[0]
    bf16 = fusegen.write_module(fusegen.plan(type(bf16)(**{**bf16.__dict__, "dtype": "bfloat16"}), fixed_sizes=False,
                                             arch=arch), out / "bf16")
    prebuild([bf16])
    paths = build_file_sizes(DROPOUT_FILES, MODELS, out, lambda f: fusegen.plan(model_spec(f)[0], fixed_sizes=False,
                                                                                arch=arch))
    paths["dropout_alone.py", "bf16"] = (MODELS / "dropout_alone.py", bf16)
    return paths


def _model(built, name, size="small"):
    f, path = built[name, size]
    model_file, module = load_model_file(f), import_file(path)
    torch.manual_seed(0)
    return model_file, module, module.ModelNew(*model_file.get_init_inputs()).cuda()


@pytest.mark.parametrize("name", DROPOUT_FILES)
def test_dropout_forward_and_gradients_match_fp64_with_our_mask(name, built):
    check_file_sizes_fp64(built, name, DROPOUT_FILES, "dropout, the reference given our mask")


def test_in_eval_only_the_dropout_without_a_mode_drops(built):
    """stage_dropout.py in eval: nn.Dropout and the two following self.training are identities, F.dropout(x, p=0.3)
    still drops (torch's default training=True), against the fp64 reference given that one mask."""
    f, path = built["stage_dropout.py", "small"]
    model_file, module = load_model_file(f), import_file(path)
    batch, init = 37, model_file.get_init_inputs()
    fixed = fixed_masks(f, record_seeds(module), (batch, init[1]), training=False)
    report, problems = compare_models(module.ModelNew, model_file.Model, init, (batch, init[0]), 4, dist="normal",
                                      setup=lambda ref, new: (ref.eval(), new.eval()), fixed=fixed)
    assert not problems, "\n".join(problems)


def _keep_rate_ok(mask, p, dims=None):
    """Kept fraction within 4 sigma of 1 - p (over dim `dims`: every row's or column's within 5 sigma)."""
    if dims is None:
        rate, n, sig = mask.double().mean().item(), mask.numel(), 4
        return abs(rate - (1 - p)) < sig * (p * (1 - p) / n) ** 0.5, rate
    rate, n = mask.double().mean(dims), mask.shape[dims]
    worst = (rate - (1 - p)).abs().max().item()
    return worst < 5 * (p * (1 - p) / n) ** 0.5, worst


def test_the_mask_statistics_and_the_gradient_where_dropped(built):
    """dropout_alone at the scaled size (1000 x 1000): the keep rate, every row's and column's, kept values z / (1 - p)
    exactly (z: the eval output), the mask the recomputed Philox one, eval draws nothing; backward's gradient of z is
    g / (1 - p) where kept and 0 where dropped (the bias's gradient its column sums, x's dz W)."""
    model_file, module, new = _model(built, "dropout_alone.py", "big")
    (x,) = model_file.get_inputs()
    x, p = x.cuda(), new.drop.p
    seeds = record_seeds(module)
    with torch.no_grad():
        state = torch.get_rng_state()
        z = new.eval()(x)
        assert not seeds and torch.equal(state, torch.get_rng_state()), "eval drew a seed"
        out = new.train()(x)
    mask = out != 0
    for dims in (None, 0, 1):
        ok, rate = _keep_rate_ok(mask, p, dims)
        assert ok, (dims, rate)
    one = torch.ones((), dtype=torch.float32, device="cuda")
    scale = one / (one - torch.tensor(p, dtype=torch.float32, device="cuda"))  # the kernel's, in fp32
    assert torch.equal(out[mask], z[mask] * scale)
    expected = dropout_factor(seeds[-1], 0, p, *out.shape, device="cuda") > 0
    assert torch.equal(mask | (z == 0), expected | (z == 0))
    xin, g = x.clone().requires_grad_(), torch.randn_like(out)
    new.zero_grad(set_to_none=True)
    new(xin).backward(g)
    dz = g.double() * dropout_factor(seeds[-1], 0, p, *out.shape, device="cuda")
    assert torch.allclose(new.fc.bias.grad.double(), dz.sum(0), rtol=1e-5, atol=1e-5)
    assert torch.allclose(xin.grad.double(), dz @ new.fc.weight.double(), rtol=1e-4, atol=1e-4)


def test_manual_seed_repeats_a_run_and_fresh_calls_draw_anew(built):
    model_file, module, new = _model(built, "stage_dropout.py")
    x = model_file.get_inputs()[0].cuda()
    torch.manual_seed(3)
    a = new(x)
    torch.manual_seed(3)
    b = new(x)
    c = new(x)
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_bf16_drops_as_fp32(built):
    """The bf16 module: keep rate, kept values bf16(z / (1 - p)) from the eval output z, the recomputed mask."""
    model_file, module, new = _model(built, "dropout_alone.py", "bf16")
    new = new.to(torch.bfloat16)
    x, p = torch.randn(1000, model_file.get_init_inputs()[0], device="cuda", dtype=torch.bfloat16), new.drop.p
    seeds = record_seeds(module)
    with torch.no_grad():
        z = new.eval()(x)
        out = new.train()(x)
    mask = out != 0
    assert _keep_rate_ok(mask, p)[0]
    one = torch.ones((), dtype=torch.float32, device="cuda")
    scale = one / (one - torch.tensor(p, dtype=torch.float32, device="cuda"))
    assert torch.equal(out[mask], (z[mask].float() * scale).bfloat16())
    assert torch.equal(mask | (z == 0), (dropout_factor(seeds[-1], 0, p, *out.shape, device="cuda") > 0) | (z == 0))


def test_torch_compile_drops_and_its_backward_reuses_the_mask(built):
    """Compiled (fullgraph), the seed is drawn inside the graph (inductor's own stream, seeded by torch's): a run
    repeats under torch.manual_seed, fresh calls differ, the keep rate holds and backward reads the forward's mask."""
    model_file, module, new = _model(built, "dropout_alone.py", "big")
    compiled = torch.compile(new, fullgraph=True)
    x, p = model_file.get_inputs()[0].cuda(), new.drop.p
    torch.manual_seed(9)
    a = compiled(x)
    torch.manual_seed(9)
    b = compiled(x)
    assert torch.equal(a, b) and not torch.equal(a, compiled(x))
    assert _keep_rate_ok(a != 0, p)[0]
    new.zero_grad(set_to_none=True)
    out = compiled(x)
    out.backward(torch.ones_like(out))
    one = torch.ones((), dtype=torch.float32, device="cuda")
    scale = (one / (one - torch.tensor(p, dtype=torch.float32, device="cuda"))).double()
    assert torch.allclose(new.fc.bias.grad.double(), ((out != 0).double() * scale).sum(0), rtol=1e-5, atol=1e-5)
