"""GPU tests of real use: the generated file judged the kernel benchmark's way, inside torch.compile, in a CUDA
graph, with NaN and Inf input, and trained data-parallel. Skipped without CUDA and nvcc."""
import os
import pathlib
import subprocess
import sys

import pytest
import torch

from helpers import REFERENCE_FILE, REPO, gpu_available, import_file

import fusegen
from fusegen.tools.tune import capture_step

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not gpu_available(), reason="needs a CUDA GPU and nvcc")]

VISIBLE_ARCH = tuple(torch.cuda.get_device_capability()) if gpu_available() else None


def _headline_file():
    files = sorted((REPO / "generated").glob("lin_gn_lrelu2_i8192_h8192_g512_*.py"))
    assert len(files) == 1, files
    return files[0]


def _small_module(tmp_path_factory, spec):
    # run-time sizes: the same build as the other GPU tests' modules of this group width (the cache is shared)
    out = tmp_path_factory.mktemp("real_use")
    return fusegen.write_module(fusegen.plan(spec, fixed_sizes=False, arch=VISIBLE_ARCH), out)


def test_committed_file_judged_the_benchmark_way(monkeypatch):
    """Exec the reference, then the candidate, into one namespace; both models after the same seed; five trials
    with fresh get_inputs(); allclose(atol=1e-4, rtol=1e-4); CUDA-event timing (of NaN-poisoned outputs)."""
    monkeypatch.setenv("FUSEGEN_POISON", "1")
    ns = {"__name__": "benchmark"}
    exec(compile(REFERENCE_FILE.read_text(), str(REFERENCE_FILE), "exec"), ns)
    exec(compile(_headline_file().read_text(), str(_headline_file()), "exec"), ns)
    init = ns["get_init_inputs"]()
    torch.manual_seed(42)
    ref = ns["Model"](*init).cuda()
    torch.manual_seed(42)
    new = ns["ModelNew"](*init).cuda()
    times = {"reference": [], "ModelNew": []}
    with torch.no_grad():
        for trial in range(5):
            torch.manual_seed(trial)
            inputs = [x.cuda() for x in ns["get_inputs"]()]
            outs = {}
            for name, model in (("reference", ref), ("ModelNew", new)):
                model(*inputs)  # warm (the first ModelNew call builds or loads the kernels)
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                outs[name] = model(*inputs)
                end.record()
                torch.cuda.synchronize()
                times[name].append(start.elapsed_time(end))
            assert outs["ModelNew"].shape == outs["reference"].shape and outs["ModelNew"].dtype == torch.float32
            diff = (outs["ModelNew"] - outs["reference"]).abs().max().item()
            assert torch.allclose(outs["ModelNew"], outs["reference"], atol=1e-4, rtol=1e-4), (trial, diff)
    median = {k: sorted(v)[2] for k, v in times.items()}
    print(f"benchmark way: reference {median['reference']:.3f} ms, ModelNew {median['ModelNew']:.3f} ms, "
          f"speedup {median['reference'] / median['ModelNew']:.2f}x")


def test_bf16_module_judged_the_benchmark_way(tmp_path):
    """The harness in bfloat16: the reference file and a `--dtype bfloat16` module of the headline exec'd into one
    namespace, both models `.to(device, dtype=torch.bfloat16)`, inputs cast alike, five trials, allclose(1e-2,
    1e-2): on all but at most 1 in 10^5 outputs, each within 4x the tolerance (test_gpu_dtypes says why a GEMM that
    is not cuBLAS's misses a few; the count is printed)."""
    ns = {"__name__": "benchmark"}
    exec(compile(REFERENCE_FILE.read_text(), str(REFERENCE_FILE), "exec"), ns)
    init = ns["get_init_inputs"]()
    spec = fusegen.Spec(*init, dtype="bfloat16")
    path = fusegen.write_module(fusegen.plan(spec, arch=VISIBLE_ARCH, gpu=torch.cuda.get_device_name()), tmp_path)
    exec(compile(path.read_text(), str(path), "exec"), ns)
    torch.manual_seed(42)
    ref = ns["Model"](*init).to("cuda", dtype=torch.bfloat16)
    torch.manual_seed(42)
    new = ns["ModelNew"](*init).to("cuda", dtype=torch.bfloat16)
    misses = []
    with torch.no_grad():
        for trial in range(5):
            torch.manual_seed(trial)
            inputs = [x.to("cuda", dtype=torch.bfloat16) for x in ns["get_inputs"]()]
            out, want = new(*inputs), ref(*inputs)
            assert out.shape == want.shape and out.dtype == torch.bfloat16
            tol = 1e-2 + 1e-2 * want.double().abs()
            diff = (out.double() - want.double()).abs()
            misses.append(int((diff > tol).sum()))
            assert misses[-1] <= 1e-5 * out.numel() and (diff <= 4 * tol).all(), (trial, misses[-1])
    print(f"bf16 benchmark way: outputs past allclose(1e-2) per trial {misses} of {out.numel()}")


@pytest.mark.skipif(not hasattr(torch.library, "custom_op"), reason="torch.library.custom_op needs torch >= 2.4")
def test_torch_compile_fullgraph_same_results(tmp_path_factory):
    path = _small_module(tmp_path_factory, fusegen.Spec(1024, 1024, 64))  # above the compensated-GEMM size
    module = import_file(path)
    torch.manual_seed(0)
    model = module.ModelNew(1024, 1024, 64).cuda()
    compiled = torch.compile(model, fullgraph=True)  # a graph break would raise
    x = torch.rand(600, 1024, device="cuda")
    g = torch.randn(600, 1024, device="cuda")
    with torch.no_grad():
        assert torch.equal(compiled(x), model(x))
    xe, xc = x.clone().requires_grad_(), x.clone().requires_grad_()
    out_e = model(xe)
    out_e.backward(g)
    grads_e = [xe.grad] + [p.grad.clone() for p in model.parameters()]
    model.zero_grad(set_to_none=True)
    out_c = compiled(xc)
    out_c.backward(g)
    grads_c = [xc.grad] + [p.grad for p in model.parameters()]
    assert torch.equal(out_c, out_e)
    for a, b in zip(grads_c, grads_e):
        assert torch.equal(a, b)
    # inside a bigger compiled model too
    seq = torch.nn.Sequential(torch.nn.Identity(), model, torch.nn.ReLU()).cuda()
    assert torch.equal(torch.compile(seq, fullgraph=True)(x), torch.relu(model(x)))


@pytest.mark.parametrize("batch", [2, 16, 600])  # the few-rows engines, the narrow tile split-K, the wide tiles
def test_cuda_graph_replays_forward_and_backward(tmp_path_factory, batch):
    """Captured in a CUDA graph (as torch.compile's reduce-overhead mode does), forward and backward replay on new
    inputs with the bits of eager calls: no host synchronization, allocation outside torch's pool, or per-call
    host state hides in a launch."""
    import copy
    module = import_file(_small_module(tmp_path_factory, fusegen.Spec(1024, 1024, 64)))
    torch.manual_seed(5)
    model = module.ModelNew(1024, 1024, 64).cuda()
    eager = copy.deepcopy(model)
    x = torch.rand(batch, 1024, device="cuda", requires_grad=True)
    g = torch.randn(batch, 1024, device="cuda")
    graph, out = capture_step(model, x, g)
    names = ["out", "x"] + [n for n, _ in model.named_parameters()]
    for seed in (1, 2):
        gen = torch.Generator(device="cuda").manual_seed(seed)
        with torch.no_grad():
            x.copy_(torch.randn(batch, 1024, device="cuda", generator=gen))
            g.copy_(torch.randn(batch, 1024, device="cuda", generator=gen))
        graph.replay()
        torch.cuda.synchronize()
        got = [out.clone(), x.grad.clone()] + [p.grad.clone() for p in model.parameters()]
        eager.zero_grad(set_to_none=True)
        xe = x.detach().clone().requires_grad_()
        out_e = eager(xe)
        out_e.backward(g)
        want = [out_e, xe.grad] + [p.grad for p in eager.parameters()]
        for name, a, b in zip(names, got, want):
            assert torch.equal(a, b), (batch, seed, name)


def test_nan_and_inf_propagate_as_in_the_reference(tmp_path_factory):
    spec = fusegen.Spec(1024, 1024, 64)
    module = import_file(_small_module(tmp_path_factory, spec))
    ns = {}
    exec(compile(REFERENCE_FILE.read_text(), str(REFERENCE_FILE), "exec"), ns)
    torch.manual_seed(3)
    ref = ns["Model"](1024, 1024, 64).cuda()
    torch.manual_seed(3)
    new = module.ModelNew(1024, 1024, 64).cuda()
    for batch in (600, 7):  # the main engine and the compensated small-GEMM engine
        x = torch.rand(batch, 1024, device="cuda")
        x[1, 5] = float("nan")
        x[3, 0] = float("inf")
        x[4, 9] = -float("inf")
        with torch.no_grad():
            a, b = new(x), ref(x)
        assert torch.equal(torch.isnan(a), torch.isnan(b)) and torch.equal(torch.isinf(a), torch.isinf(b)), batch
        finite = torch.isfinite(b)
        assert finite.sum() >= (batch - 3) * 1024 and torch.allclose(a[finite], b[finite], atol=1e-4, rtol=1e-4)


def test_data_parallel_training_matches_the_reference(tmp_path_factory, tmp_path):
    """Two processes train ModelNew and Model under DistributedDataParallel; same final parameters."""
    path = _small_module(tmp_path_factory, fusegen.Spec(256, 512, 32))
    import_file(path).ModelNew(256, 512, 32).cuda()(torch.rand(48, 256, device="cuda"))  # build once, up front
    out = tmp_path / "final.pt"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(REPO / "tests")]), FUSEGEN_POISON="1")
    procs = [subprocess.Popen([sys.executable, str(REPO / "tests" / "ddp_worker.py"), str(path), str(rank), "2",
                               str(tmp_path), str(out)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True) for rank in range(2)]
    logs = []
    for p in procs:
        try:
            logs.append(p.communicate(timeout=240)[0])
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            pytest.fail("a data-parallel rank hung:\n" + "\n".join(logs))
    assert all(p.returncode == 0 for p in procs), "\n".join(logs)
    final = torch.load(out)
    print(f"data-parallel: 2 ranks, backend {final['backend']}, {torch.cuda.device_count()} GPU(s)")
    ref, new = final["reference"], final["fusegen"]
    assert list(ref) == list(new)
    for k in ref:
        assert torch.allclose(new[k], ref[k], rtol=1e-4, atol=1e-5), (k, (new[k] - ref[k]).abs().max())
    ns = {}
    exec(compile(REFERENCE_FILE.read_text(), str(REFERENCE_FILE), "exec"), ns)
    torch.manual_seed(0)
    start = ns["Model"](256, 512, 32).state_dict()
    for k in ("fc.weight", "gn.weight"):  # training moved them (the comparison above is not of two inits)
        assert (new[k] - start[k]).abs().max() > 1e-3, k


def _cli(args, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "fusegen"] + [str(a) for a in args], cwd=str(tmp_path), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=500)


def test_check_command_passes_and_prints_its_table(tmp_path):
    r = _cli(["check", "--hidden", "512", "--groups", "32", "--input", "256", "--batch", "7,600"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "fusegen check:" in r.stdout and r.stdout.count(" ok\n") == 4 and "MISS" not in r.stdout
    print(r.stdout)


def test_bench_command_table_json_and_plot(tmp_path):
    import importlib.util
    plot = importlib.util.find_spec("matplotlib") is not None
    args = ["bench", "--hidden", "512", "--groups", "32", "--input", "256", "--batch", "64,1024", "--reps", "5",
            "--json", tmp_path / "b.json"] + (["--plot", tmp_path / "b.png"] if plot else [])
    r = _cli(args, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    import json
    rows = json.loads((tmp_path / "b.json").read_text())["rows"]
    assert {(x["impl"], x["batch"]) for x in rows} == {(i, b) for i in ("fusegen 3xtf32", "pytorch eager",
                                                                      "torch.compile") for b in (64, 1024)}
    assert all(x["forward_ms"] > 0 and x["forward_backward_ms"] > 0 for x in rows)
    assert "torch.compile" in r.stdout and "vs eager" in r.stdout
    if plot:
        assert (tmp_path / "b.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    print(r.stdout)
