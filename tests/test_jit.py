"""Tests for fusegen/runtime/jit.py, the build/cache layer (CPU only: C++ extensions).

Tests marked slow run the real C++ compiler (~30-60 s each); there are four
real compiles in total.
"""

import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fusegen.runtime import jit

REPO = Path(__file__).resolve().parents[1]


def add_src(offset):
    """A C++-only extension exposing add_one(x) -> x + offset."""
    return (
        "#include <torch/extension.h>\n"
        "int64_t add_one(int64_t x) { return x + %d; }\n"
        "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"add_one\", &add_one); }\n" % offset
    )


# Child process: load the extension whose source is in argv[1] and print add_one(41).
LOAD_CHILD = r"""
import sys
from fusegen.runtime import jit
src = open(sys.argv[1]).read()
kw = {}
if len(sys.argv) > 2 and sys.argv[2] == "no-compile":
    def refuse(**kwargs):
        raise AssertionError("compiled although the build is cached")
    kw["_compile"] = refuse
mod = jit.load_extension("t_add", src, fusegen_version="test", **kw)
print("RESULT", mod.add_one(41))
"""

# Child process: a build that writes part of its output, signals the parent and hangs.
HANGING_CHILD = r"""
import os, sys, time
from fusegen.runtime import jit
def hang(**kw):
    with open(os.path.join(kw["build_directory"], "main.o"), "w") as f:
        f.write("half an object file")
    with open(sys.argv[2] + ".tmp", "w") as f:
        f.write(kw["build_directory"])
    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    time.sleep(600)
jit.load_extension("t_add", open(sys.argv[1]).read(), fusegen_version="test", _compile=hang)
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A private FUSEGEN_CACHE_DIR; messages on, verbose off."""
    root = tmp_path / "cache"
    monkeypatch.setenv("FUSEGEN_CACHE_DIR", str(root))
    monkeypatch.delenv("FUSEGEN_QUIET", raising=False)
    monkeypatch.delenv("FUSEGEN_VERBOSE", raising=False)
    return root


def child_env(cache_root):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["FUSEGEN_CACHE_DIR"] = str(cache_root)
    env.pop("FUSEGEN_QUIET", None)
    env.pop("FUSEGEN_VERBOSE", None)
    return env


def spawn(code, args, cache_root):
    return subprocess.Popen([sys.executable, "-c", code] + [str(a) for a in args], cwd=str(REPO),
                            env=child_env(cache_root), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True)


def build_dirs(root):
    return sorted(p.name for p in Path(root).iterdir() if ".build-" in p.name)


def never_compile(calls):
    def compile_fn(**kwargs):
        calls.append(kwargs)
        raise AssertionError("must not compile")
    return compile_fn


# --- 1. arch flags (pure) ----------------------------------------------------

@pytest.mark.parametrize("env, cap, expected", [
    ("8.0;9.0", None, ["-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=sm_90"]),
    ("8.0 9.0+PTX", None, ["-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=sm_90",
                           "-gencode=arch=compute_90,code=compute_90"]),
    ("9.0a", None, ["-gencode=arch=compute_90a,code=sm_90a"]),
    ("10.0", None, ["-gencode=arch=compute_100,code=sm_100"]),
    (" 8.6+ptx ; 8.6 ", None, ["-gencode=arch=compute_86,code=sm_86", "-gencode=arch=compute_86,code=compute_86"]),
    ("8.0", (9, 0), ["-gencode=arch=compute_80,code=sm_80"]),  # the env var wins over the GPU
    (None, (8, 6), ["-gencode=arch=compute_86,code=sm_86"]),
    ("", (9, 0), ["-gencode=arch=compute_90,code=sm_90"]),
    ("native", (12, 0), ["-gencode=arch=compute_120,code=sm_120"]),
])
def test_cuda_arch_flags(env, cap, expected):
    assert jit._cuda_arch_flags(env, cap) == expected


@pytest.mark.parametrize("env", ["banana", "9", "sm_90", "9.0;x"])
def test_cuda_arch_flags_rejects_garbage(env):
    with pytest.raises(jit.BuildError, match="TORCH_CUDA_ARCH_LIST"):
        jit._cuda_arch_flags(env, (9, 0))


def test_cuda_arch_flags_without_gpu_or_env():
    with pytest.raises(jit.BuildError, match="TORCH_CUDA_ARCH_LIST"):
        jit._cuda_arch_flags(None, None)


def test_public_names():
    public = sorted(n for n in vars(jit) if not n.startswith("_"))
    assert public == ["BuildError", "load_extension"]
    assert issubclass(jit.BuildError, RuntimeError)


def test_extension_name_hash():
    base = dict(name="k", cpp_source="a", cuda_source="b", cflags=["-O3"],
                cuda_cflags=["-gencode=arch=compute_90,code=sm_90"], fusegen_version="1")
    ext = jit._ext_name(**base)
    assert re.fullmatch(r"k_[0-9a-f]{12}", ext)
    assert jit._ext_name(**base) == ext
    for key, value in [("cpp_source", "a2"), ("cuda_source", None), ("cflags", ["-O2"]),
                       ("cuda_cflags", ["-gencode=arch=compute_80,code=sm_80"]), ("fusegen_version", "2")]:
        assert jit._ext_name(**dict(base, **{key: value})) != ext, key


def test_cache_dir_layout(cache):
    d = Path(jit._cache_dir())
    assert d.parent.parent == cache
    assert d.parent.name == "v" + jit._RUNTIME_VERSION
    assert re.fullmatch(r"torch[A-Za-z0-9._-]+_cuda[A-Za-z0-9._-]+", d.name)
    for p in (cache, d.parent, d):
        assert stat.S_IMODE(p.stat().st_mode) & 0o077 == 0


def test_error_report_nvcc_form(tmp_path):
    failed = tmp_path / "x.failed"
    failed.mkdir()
    (failed / "cuda.cu").write_text("".join("line %d\n" % i for i in range(1, 21)))
    (failed / "main.cpp").write_text("int main;\n")
    raw = ("Error building extension 'x': [1/3] nvcc ...\nFAILED: cuda.cuda.o\n"
           "/tmp/gone.build-abc/cuda.cu(10): error: identifier \"y\" is undefined\n"
           "1 error detected in the compilation of \"/tmp/gone.build-abc/cuda.cu\".\n")
    msg = jit._compile_error_message("x", str(failed), "/tmp/gone.build-abc", raw)
    lines = msg.splitlines()
    assert lines[0] == "failed to compile fused kernels for x; generated sources: %s %s" % (
        failed / "cuda.cu", failed / "main.cpp")
    # the error names the file where it now lives, not the vanished temp dir
    i = lines.index('%s(10): error: identifier "y" is undefined' % (failed / "cuda.cu"))
    assert [l.split("|")[1].strip() for l in lines[i + 1:i + 6]] == ["line %d" % n for n in range(8, 13)]
    assert re.fullmatch(r"\s*>\s*10 \| line 10", lines[i + 3])
    assert lines[-1].startswith("1 error detected")


# --- 2. build, then load from the cache ----------------------------------------

@pytest.mark.slow
def test_build_then_load_from_cache(cache, capfd):
    src = add_src(1)
    mod = jit.load_extension("t_add", src, fusegen_version="test")
    assert mod.add_one(41) == 42
    err = capfd.readouterr().err
    assert err.count("fusegen: compiling fused kernels for t_add_") == 1
    # one line: what it does, then how long it took and where the result is
    assert re.search(r"^fusegen: compiling fused kernels for t_add_\w+ \.\.\. done in [0-9.]+ s, cached at \S+$",
                     err, re.M), err
    root = Path(jit._cache_dir())
    ext = mod.__name__
    assert (root / ext / (ext + ".so")).is_file()
    assert build_dirs(root) == []

    calls = []
    assert jit.load_extension("t_add", src, fusegen_version="test", _compile=never_compile(calls)) is mod
    jit._LOADED.clear()  # now it has to come from disk
    again = jit.load_extension("t_add", src, fusegen_version="test", _compile=never_compile(calls))
    assert again.add_one(1) == 2
    assert calls == []
    assert "compiling" not in capfd.readouterr().err

    # a fresh process finds it too
    src_file = cache.parent / "src.cpp"
    src_file.write_text(src)
    out, err = spawn(LOAD_CHILD, [src_file, "no-compile"], cache).communicate(timeout=300)
    assert "RESULT 42" in out, err
    assert "compiling" not in err


# --- 3. two processes, one build -------------------------------------------------

@pytest.mark.slow
def test_concurrent_loads_build_once(cache):
    src_file = cache.parent / "src.cpp"
    src_file.write_text(add_src(2))
    procs = [spawn(LOAD_CHILD, [src_file], cache) for _ in range(2)]
    results = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, results):
        assert p.returncode == 0, err
        assert "RESULT 43" in out, err
    compiles = sum(err.count("fusegen: compiling fused kernels for t_add_") for _, err in results)
    assert compiles == 1, [err for _, err in results]
    root = Path(jit._cache_dir())
    assert build_dirs(root) == []
    assert len([p for p in root.iterdir() if p.is_dir() and re.fullmatch(r"t_add_[0-9a-f]{12}", p.name)]) == 1


# --- 4. a build killed half-way ---------------------------------------------------

@pytest.mark.slow
def test_killed_build_does_not_block_next_load(cache):
    src_file = cache.parent / "src.cpp"
    src_file.write_text(add_src(3))
    marker = cache.parent / "started"
    child = spawn(HANGING_CHILD, [src_file, marker], cache)
    try:
        deadline = time.time() + 120
        while not marker.exists():
            if child.poll() is not None:
                pytest.fail("hanging child exited early: %s" % child.communicate()[1])
            assert time.time() < deadline, "hanging child never started its build"
            time.sleep(0.1)
        half_built = Path(marker.read_text())
        assert half_built.name.startswith("t_add_") and ".build-" in half_built.name
        assert (half_built / "main.o").is_file()
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate()
    assert half_built.exists()  # the dead build's leftovers are still there

    loader = spawn(LOAD_CHILD, [src_file], cache)
    try:
        out, err = loader.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        loader.kill()
        pytest.fail("loading after a killed build hung: %s" % (loader.communicate()[1],))
    assert loader.returncode == 0, err
    assert "RESULT 44" in out, err
    root = half_built.parent
    assert not half_built.exists()
    assert build_dirs(root) == []


# --- 5. compile errors ---------------------------------------------------------------

@pytest.mark.slow
def test_compile_error_points_at_source_line(cache, monkeypatch, capfd):
    src = (
        "#include <torch/extension.h>\n"
        "int64_t add_one(int64_t x) {\n"
        "  return x + not_declared_anywhere;\n"
        "}\n"
        "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"add_one\", &add_one); }\n"
    )
    with pytest.raises(jit.BuildError) as info:
        jit.load_extension("t_bad", src, fusegen_version="test")
    msg = str(info.value)
    first = msg.splitlines()[0]
    m = re.fullmatch(r"failed to compile fused kernels for (t_bad_[0-9a-f]{12}); generated sources: (\S+)", first)
    assert m, first
    ext, source = m.group(1), Path(m.group(2))
    root = Path(jit._cache_dir())
    assert source == root / (ext + ".failed") / "main.cpp"
    assert "not_declared_anywhere" in source.read_text()
    assert re.search(r"^%s:\d+:\d+: error: .*not_declared_anywhere" % re.escape(str(source)), msg, re.M), msg
    assert re.search(r"^\s*>\s*\d+ \|\s*return x \+ not_declared_anywhere;$", msg, re.M), msg
    assert info.value.__cause__ is not None
    assert not (root / ext).exists()
    assert build_dirs(root) == []

    # a second failure replaces the old .failed dir; FUSEGEN_QUIET silences the progress line
    monkeypatch.setenv("FUSEGEN_QUIET", "1")
    capfd.readouterr()

    def broken(**kw):
        raise RuntimeError("second attempt went wrong")
    with pytest.raises(jit.BuildError, match="second attempt went wrong") as info:
        jit.load_extension("t_bad", src, fusegen_version="test", _compile=broken)
    assert isinstance(info.value.__cause__, RuntimeError)
    assert (root / (ext + ".failed") / "main.cpp").read_text() == src  # our copy, fresh dir
    assert "fusegen:" not in capfd.readouterr().err


# --- 6. missing nvcc ------------------------------------------------------------------

def test_missing_nvcc(cache, tmp_path, monkeypatch):
    empty = tmp_path / "empty_cuda"
    empty.mkdir()
    monkeypatch.setenv("CUDA_HOME", str(empty))
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "no_bin"))
    monkeypatch.setattr(jit, "_NVCC_FALLBACKS", (str(tmp_path / "no_cuda" / "bin" / "nvcc"),))
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    cuda = "__global__ void k(float* x) { x[threadIdx.x] += 1.0f; }\n"
    calls = []
    with pytest.raises(jit.BuildError) as info:
        jit.load_extension("t_cuda", add_src(0), cuda, fusegen_version="test", _compile=never_compile(calls))
    assert calls == []
    msg = str(info.value)
    assert "nvcc" in msg and "not found" in msg
    assert "CUDA_HOME" in msg and "CUDA toolkit" in msg
    cu = re.search(r"(/\S+\.cu)\b", msg)
    assert cu, msg
    assert Path(cu.group(1)).read_text() == cuda


# --- 7. cache directory safety ---------------------------------------------------------

def test_refuses_world_writable_cache(cache):
    cache.mkdir()
    cache.chmod(0o777)
    calls = []
    with pytest.raises(jit.BuildError, match="writable") as info:
        jit.load_extension("t_add", add_src(0), fusegen_version="test", _compile=never_compile(calls))
    assert str(cache) in str(info.value)
    assert calls == []


def test_refuses_group_writable_subdir(cache):
    d = Path(jit._cache_dir())
    d.chmod(0o770)
    with pytest.raises(jit.BuildError, match="writable"):
        jit.load_extension("t_add", add_src(0), fusegen_version="test", _compile=never_compile([]))


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")
def test_refuses_cache_owned_by_someone_else(cache):
    cache.mkdir(mode=0o700)
    os.chown(str(cache), 65534, 65534)
    with pytest.raises(jit.BuildError, match="owned by uid 65534"):
        jit.load_extension("t_add", add_src(0), fusegen_version="test", _compile=never_compile([]))


def test_cache_dir_where_a_file_is(tmp_path, monkeypatch):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("")
    target = blocker / "cache"
    monkeypatch.setenv("FUSEGEN_CACHE_DIR", str(target))
    with pytest.raises(jit.BuildError) as info:
        jit.load_extension("t_add", add_src(0), fusegen_version="test", _compile=never_compile([]))
    assert str(target) in str(info.value) and "FUSEGEN_CACHE_DIR" in str(info.value)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root ignores directory permissions")
def test_cache_dir_unwritable_parent(tmp_path, monkeypatch):
    parent = tmp_path / "locked"
    parent.mkdir()
    parent.chmod(0o500)
    target = parent / "cache"
    monkeypatch.setenv("FUSEGEN_CACHE_DIR", str(target))
    try:
        with pytest.raises(jit.BuildError) as info:
            jit.load_extension("t_add", add_src(0), fusegen_version="test", _compile=never_compile([]))
    finally:
        parent.chmod(0o700)
    assert str(target) in str(info.value) and "FUSEGEN_CACHE_DIR" in str(info.value)
