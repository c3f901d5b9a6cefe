"""Shared test helpers: the reference layer, generated modules, and the accuracy bar."""
import importlib.util
import itertools
import json
import os
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
    """Import a generated module as `import` would (registered in sys.modules: torch.compile looks functions'
    modules up there), under a fresh name."""
    name = f"fusegen_test_module_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def gpu_available() -> bool:
    """A CUDA GPU and a CUDA compiler: what the GPU tests need."""
    nvcc = shutil.which("nvcc") or pathlib.Path("/usr/local/cuda/bin/nvcc").exists()
    return torch.cuda.is_available() and bool(nvcc)


from fusegen.accuracy import (NAMES, TF32_REL_ERR, TF32_ROUNDOFF_RATIO, compare, kink_tolerance,  # noqa: E402,F401
                              layer_fp64, rel_err, run_layer, truth_for)


def compare_with_reference(model_new_cls, spec, batch, seed, device="cuda", strict_allclose=False):
    """fusegen.accuracy.compare against the user's reference Model, asserting that nothing missed the bar;
    returns its report (and appends it to FUSEGEN_ACCURACY_LOG, one JSON line, when that is set)."""
    report, problems = compare(model_new_cls, reference_namespace()["Model"], spec, batch, seed, device,
                               strict_allclose)
    assert not problems, "\n".join(problems)
    log = os.environ.get("FUSEGEN_ACCURACY_LOG")
    if log:  # one JSON line per comparison, summarized by benchmarks/accuracy_summary.py
        with open(log, "a") as f:
            f.write(json.dumps({"spec": [spec.input_size, spec.hidden_size, spec.num_groups],
                                "precision": spec.precision, "batch": batch,
                                "seed": seed, **report}) + "\n")
    return report


def prebuild(paths, jobs=None):
    """Build generated modules' kernels in parallel processes (fusegen tune's builder): each fills the shared
    build cache, so importing the modules afterwards only loads. Raises with the compiler's output on a failure."""
    from fusegen.tune import _build_all
    failed = _build_all(list(paths), jobs or max(1, min(len(paths), os.cpu_count() or 1)))
    assert not failed, "\n\n".join(f"{p}:\n{err}" for p, err in failed.items())
