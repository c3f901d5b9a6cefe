"""The command line (`python -m fusegen`, the `fusegen` console script) and a plain, non-editable install."""
import ast
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

from helpers import REPO

import fusegen


def run_cli(args, cwd, pythonpath=str(REPO), executable=None):
    env = dict(os.environ, PYTHONPATH=pythonpath)
    cmd = [executable] if executable else [sys.executable, "-m", "fusegen"]
    return subprocess.run(cmd + [str(a) for a in args], cwd=str(cwd), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=300)


def test_render_writes_module_and_prints_plan(tmp_path):
    out = tmp_path / "out"
    r = run_cli(["render", "--hidden", 64, "--groups", 4, "--out", out], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    p = fusegen.plan(fusegen.Spec(64, 64, 4))
    path = out / (p.module_name + ".py")
    assert lines[0] == str(path), r.stdout
    assert any(line.startswith("plan: ") for line in lines[1:]), r.stdout
    assert p.summary in r.stdout
    assert sorted(x.name for x in out.iterdir()) == sorted([path.name, path.with_suffix(".md").name])
    text = path.read_text()
    ast.parse(text)
    assert text == fusegen.render(p)
    # --input defaults to --hidden
    assert "\nINPUT_SIZE = 64\n" in text and "\nHIDDEN_SIZE = 64\n" in text and "\nNUM_GROUPS = 4\n" in text


def test_render_options(tmp_path):
    r = run_cli(["render", "--input", 100, "--hidden", 96, "--groups", 32, "--eps", "1e-3", "--negative-slope",
                 "0.2", "--dynamic-sizes", "--out", tmp_path], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    p = fusegen.plan(fusegen.Spec(100, 96, 32, eps=1e-3, negative_slope=0.2), fixed_sizes=False)
    path = tmp_path / (p.module_name + ".py")
    assert r.stdout.splitlines()[0] == str(path)
    assert path.read_text() == fusegen.render(p)
    assert "\nINPUT_SIZE = 100\n" in path.read_text()


def test_render_default_out_dir_is_generated(tmp_path):
    r = run_cli(["render", "--hidden", 16, "--groups", 2], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    p = fusegen.plan(fusegen.Spec(16, 16, 2))
    assert (tmp_path / "generated" / (p.module_name + ".py")).is_file()


@pytest.mark.parametrize("args, words", [
    (["--hidden", 10, "--groups", 3], ["divisible", "10", "3"]),
    (["--input", 8, "--hidden", 0, "--groups", 1], ["hidden_size", "0"]),
    (["--hidden", 0, "--groups", 1], ["hidden_size", "0"]),  # not input_size, which defaults to hidden
    (["--hidden", 64, "--groups", 4, "--input", -2], ["input_size", "-2"]),
    (["--hidden", 64, "--groups", 4, "--eps", 0], ["eps"]),
    (["--hidden", 64, "--groups", 4, "--eps", "nan"], ["eps", "nan"]),
    (["--hidden", 64, "--groups", 4, "--dtype", "float16", "--precision", "tf32"], ["precision", "float16"]),
])
def test_render_rejects_invalid_spec(tmp_path, args, words):
    r = run_cli(["render", *args, "--out", tmp_path / "out"], cwd=tmp_path)
    assert r.returncode != 0
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    assert r.stdout == ""


@pytest.mark.parametrize("args", [["render"], ["render", "--hidden", "x", "--groups", 2], [], ["bogus"],
                                  ["render", "--hidden", "32", "--groups", "4", "--arch", "hopper"]])
def test_bad_command_lines_are_usage_errors(tmp_path, args):
    r = run_cli(args, cwd=tmp_path)
    assert r.returncode == 2
    assert "usage:" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("args", [["--help"], ["render", "--help"], ["explain", "--help"], ["tune", "--help"],
                                  ["show-config", "--help"], ["clear-cache", "--help"], ["check", "--help"],
                                  ["bench", "--help"]])
def test_help(tmp_path, args):
    r = run_cli(args, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "usage: fusegen" in r.stdout
    if args[0] == "render":
        for opt in ("--hidden", "--groups", "--input", "--out", "--dynamic-sizes", "--arch", "--gpu", "--precision",
                    "--planes"):
            assert opt in r.stdout


def test_main_in_process(tmp_path, capsys):
    from fusegen.tools.cli import main
    assert main(["render", "--hidden", "32", "--groups", "4", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(".py") and out[1].startswith("plan: ")
    assert main(["render", "--hidden", "10", "--groups", "3", "--out", str(tmp_path)]) == 2
    assert "divisible" in capsys.readouterr().err
    # --arch picks the engine when the tuning table has nothing for this layer
    assert main(["render", "--hidden", "32", "--groups", "2", "--out", str(tmp_path), "--arch", "9.0"]) == 0
    assert "3xtf32 wgmma_3xf16s GEMM" in capsys.readouterr().out
    assert main(["render", "--hidden", "32", "--groups", "2", "--out", str(tmp_path), "--arch", "8.0"]) == 0
    assert "3xtf32 mma_3xf16s GEMM" in capsys.readouterr().out


def test_planes_choose_3xtf32s_engine_and_stay_in_the_render_command(tmp_path, capsys):
    """--planes on / off picks 3xtf32's engine against the GPU's default (planes on sm_90 and on mma.sync), and the
    module's regenerate command keeps a choice that differs from it."""
    from fusegen.tools.cli import main
    cases = [("8.0", "off", "mma_tf32", " --planes off"), ("8.0", "auto", "mma_3xf16s", ""), ("8.0", "on", "mma_3xf16s", ""),
             ("9.0", "off", "wgmma_tf32", " --planes off"), ("9.0", "auto", "wgmma_3xf16s", "")]
    for arch, planes, mainloop, flag in cases:
        out = tmp_path / f"{arch}-{planes}"
        assert main(["render", "--hidden", "64", "--groups", "2", "--out", str(out), "--arch", arch, "--planes",
                     planes, "--gpu", "none"]) == 0
        assert f"3xtf32 {mainloop} GEMM" in capsys.readouterr().out, (arch, planes)
        text = next(out.glob("*.py")).read_text()
        command = next(line for line in text.splitlines() if line.startswith("Regenerate with: "))
        assert command.endswith("--groups 2" + (" --arch 9.0" if arch == "9.0" else "") + flag), command


def test_render_twice_leaves_no_temp_files(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("someone else's file")
    for _ in range(2):
        r = run_cli(["render", "--hidden", 64, "--groups", 4, "--out", out], cwd=tmp_path)
        assert r.returncode == 0, r.stderr
    p = fusegen.plan(fusegen.Spec(64, 64, 4))
    assert sorted(x.name for x in out.iterdir()) == sorted(["keep.txt", p.module_name + ".py", p.module_name + ".md"])
    assert (out / (p.module_name + ".py")).read_text() == fusegen.render(p)
    # readable by others like any written file, not mkstemp's 0600
    assert (out / (p.module_name + ".py")).stat().st_mode & 0o044 == 0o044


def test_failed_write_leaves_no_temp_file_and_keeps_the_old_module(tmp_path, monkeypatch):
    render_module = importlib.import_module("fusegen.codegen.render")  # (fusegen.render is the function)
    p = fusegen.plan(fusegen.Spec(64, 64, 4))
    target = fusegen.write_module(p, tmp_path)
    target.write_text("old contents")

    def failing_replace(src, dst):
        raise OSError("disk full")
    monkeypatch.setattr(render_module.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        fusegen.write_module(p, tmp_path)
    monkeypatch.undo()
    assert sorted(x.name for x in tmp_path.iterdir()) == sorted([target.name, target.with_suffix(".md").name])
    assert target.read_text() == "old contents"


# --------------------------------------------------------------------------------------------------------------
# A plain (non-editable) install finds its templates
# --------------------------------------------------------------------------------------------------------------

_IGNORE = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".hypothesis",
                                 ".pytest_cache", ".benchmarks", ".whl", ".out")

PROBE = r"""
import sys, fusegen
assert "site" in fusegen.__file__, fusegen.__file__
r = sys.modules["fusegen.codegen.render"]  # (the attribute fusegen.render is the function)
print(fusegen.__file__)
print(r.TEMPLATE_DIR)
sys.stdout.flush()
with open(sys.argv[1], "w") as f:
    f.write(fusegen.render(fusegen.Spec(16, 16, 2)))
print(fusegen.render(fusegen.Spec(16, 16, 2))[:100])
"""


@pytest.mark.slow
def test_plain_install_finds_templates(tmp_path):
    if importlib.util.find_spec("setuptools") is None:
        pytest.skip("setuptools is not installed (needed to build without isolation)")
    # Install from a copy of the source tree so that the build leaves nothing (build/, *.egg-info) in the repo.
    src = tmp_path / "src"
    shutil.copytree(str(REPO), str(src), ignore=_IGNORE)
    site = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                        "--no-index", "--target", str(site), str(src)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=600)
    assert r.returncode == 0, r.stdout[-6000:]
    assert (site / "fusegen" / "templates" / "kernels.cu.j2").is_file(), sorted(
        str(p.relative_to(site)) for p in site.rglob("*") if "dist-info" not in str(p))

    work = tmp_path / "work"  # not the repo: the source tree must not be importable
    work.mkdir()
    env = dict(os.environ, PYTHONPATH=str(site))
    rendered = work / "rendered.py"
    r = subprocess.run([sys.executable, "-c", PROBE, str(rendered)], cwd=str(work), env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith(str(site)), lines[0]
    assert lines[1].startswith(str(site)), f"installed fusegen renders from {lines[1]}"
    expected = fusegen.render(fusegen.Spec(16, 16, 2))
    assert rendered.read_text() == expected, "the installed package renders different text than the source tree"

    script = site / "bin" / "fusegen"
    if script.is_file():
        gen = tmp_path / "gen"
        r = run_cli(["render", "--hidden", 16, "--groups", 2, "--out", gen], cwd=work, pythonpath=str(site),
                    executable=str(script))
        assert r.returncode == 0, r.stderr
        p = fusegen.plan(fusegen.Spec(16, 16, 2))
        path = gen / (p.module_name + ".py")
        assert r.stdout.splitlines()[0] == str(path)
        assert path.read_text() == expected


def test_explain_prints_what_render_writes_beside_the_module(tmp_path):
    r = run_cli(["explain", "--hidden", "64", "--groups", "4", "--arch", "9.0"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "## What it replaces" in r.stdout and "wgmma_3xf16s" in r.stdout
    r2 = run_cli(["render", "--hidden", "64", "--groups", "4", "--arch", "9.0", "--out", tmp_path / "g"], cwd=tmp_path)
    assert r2.returncode == 0, r2.stderr
    module = r2.stdout.splitlines()[0]
    assert (tmp_path / module).with_suffix(".md").read_text().strip() == r.stdout.strip()
    bad = run_cli(["explain", "--hidden", "10", "--groups", "3"], cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "divisible" in bad.stderr


def test_show_config_and_clear_cache(tmp_path):
    cache = tmp_path / "cache"
    env_dir = {"FUSEGEN_CACHE_DIR": str(cache)}
    build = cache / "v1" / "torch_tag" / "fg_ext_0123"
    build.mkdir(parents=True)
    (build / "lib.so").write_bytes(b"x" * 2000)
    (cache / "notes.txt").write_text("not fusegen's")
    old = dict(os.environ)
    os.environ.update(env_dir)
    try:
        r = run_cli(["show-config"], cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        for needed in (f"fusegen {fusegen.__version__}", "torch", "nvcc:", "GPU:", "target architectures:",
                       f"cache: {cache}", "1 builds", "tuning table:"):
            assert needed in r.stdout, (needed, r.stdout)
        r = run_cli(["clear-cache"], cwd=tmp_path)
        assert r.returncode == 0 and "removed 1 cached builds" in r.stdout, (r.stdout, r.stderr)
        assert not (cache / "v1").exists() and (cache / "notes.txt").is_file()  # only our own layout goes
        r = run_cli(["clear-cache"], cwd=tmp_path)
        assert r.returncode == 0 and "removed 0 cached builds" in r.stdout
        os.environ["FUSEGEN_CACHE_DIR"] = str(tmp_path / "missing")
        r = run_cli(["clear-cache"], cwd=tmp_path)
        assert r.returncode == 0 and "nothing to clear" in r.stdout
    finally:
        os.environ.clear()
        os.environ.update(old)


@pytest.mark.parametrize("command", ["check", "bench"])
def test_check_and_bench_without_a_gpu_fail_with_one_line(tmp_path, command):
    if importlib.util.find_spec("torch") and __import__("torch").cuda.is_available():
        pytest.skip("a GPU is visible: tests/test_gpu_real_use.py runs these commands")
    r = run_cli([command, "--hidden", "64", "--groups", "4"], cwd=tmp_path)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.strip() == f"fusegen {command}: needs a CUDA GPU, and none is visible"


def test_batch_lists_are_validated(tmp_path):
    r = run_cli(["bench", "--hidden", "64", "--groups", "4", "--batch", "64,-1"], cwd=tmp_path)
    assert r.returncode == 2 and "batch sizes must be >= 0" in r.stderr
