# fusegen build layer: compile a kernel specialization into a torch extension
# once, cache it on disk, and load it from there afterwards.
#
# This text is pasted verbatim into every generated module, so it may import
# only the standard library and torch, and every top-level name other than
# load_extension and BuildError starts with "_" to stay out of the way of the
# code around it.

import hashlib as _hashlib
import importlib.util as _importlib_util
import json as _json
import os as _os
import re as _re
import shutil as _shutil
import stat as _stat
import sys as _sys
import tempfile as _tempfile
import threading as _threading
import time as _time

import torch as _torch

try:
    import fcntl as _fcntl
except ImportError:  # not POSIX; reported only when a build actually needs the lock
    _fcntl = None

# Bump when the cache layout or the build procedure changes: it is part of both
# the cache path and every extension hash, so old builds are never reused.
_RUNTIME_VERSION = "1"

# Last-resort nvcc locations after CUDA_HOME, CUDA_PATH and PATH (a module-level
# constant so tests can make nvcc unfindable).
_NVCC_FALLBACKS = ("/usr/local/cuda/bin/nvcc",)

_LIB_SUFFIX = ".so"
_NAME_RE = _re.compile(r"^[A-Za-z0-9_]+$")
_ARCH_RE = _re.compile(r"^(\d+)\.(\d)([af]?)(\+PTX)?$", _re.IGNORECASE)
_ERROR_LINE_RES = (
    # nvcc front end: /path/cuda.cu(12): error: ...
    _re.compile(r"^(?P<path>[^\s(:][^(\n]*)\((?P<line>\d+)\): (?:catastrophic )?error\b"),
    # gcc / clang: /path/main.cpp:12:5: error: ...
    _re.compile(r"^(?P<path>[^\s:][^:\n]*):(?P<line>\d+):(?:\d+:)? (?:fatal )?error\b"),
)
_MAX_REPORTED_ERRORS = 5
_OUTPUT_TAIL_LINES = 30

_LOADED = {}  # extension name -> module; repeated loads in a process are free
_LOADED_LOCK = _threading.Lock()


class BuildError(RuntimeError):
    """The fused kernels could not be compiled or loaded."""


def _cuda_arch_flags(env_value, capability):
    """-gencode flags for TORCH_CUDA_ARCH_LIST (env_value) or else the GPU capability.

    env_value: e.g. "8.0;9.0", "8.0 9.0+PTX", "9.0a"; None/""/"native" means
    "use capability", a (major, minor) tuple or None when no GPU is visible.
    """
    value = (env_value or "").strip()
    archs = []
    if value and value.lower() != "native":
        for item in _re.split(r"[;,\s]+", value):
            if not item:
                continue
            m = _ARCH_RE.match(item)
            if m is None:
                raise BuildError(
                    "cannot parse TORCH_CUDA_ARCH_LIST=%r: entry %r is not like "
                    "'8.0', '9.0+PTX' or '9.0a'" % (env_value, item))
            archs.append((m.group(1) + m.group(2) + m.group(3).lower(), m.group(4) is not None))
    else:
        if capability is None:
            raise BuildError(
                "no CUDA GPU is visible and TORCH_CUDA_ARCH_LIST is not set, so fusegen "
                "does not know which GPU to compile for; set e.g. TORCH_CUDA_ARCH_LIST=9.0")
        archs.append(("%d%d" % (int(capability[0]), int(capability[1])), False))
    flags = []
    for arch, ptx in archs:
        codes = ["sm_" + arch] + (["compute_" + arch] if ptx else [])
        for code in codes:
            flag = "-gencode=arch=compute_%s,code=%s" % (arch, code)
            if flag not in flags:
                flags.append(flag)
    return flags


def _gpu_capability():
    try:
        if _torch.cuda.is_available():
            return tuple(_torch.cuda.get_device_capability())
    except Exception:  # a broken driver reads as "no GPU"; the arch error says what to do
        pass
    return None


def _has_arch_flag(flags):
    return any(f.startswith(("-gencode", "--generate-code", "-arch", "--gpu-architecture"))
               for f in flags)


def _ext_name(name, cpp_source, cuda_source, cflags, cuda_cflags, fusegen_version):
    # Everything that changes the produced library goes into the hash, so a
    # cached build is reused only for exactly the same inputs.
    payload = _json.dumps([
        cpp_source, cuda_source, [str(f) for f in cflags], [str(f) for f in cuda_cflags],
        str(_torch.__version__), str(_torch.version.cuda), str(fusegen_version),
        _RUNTIME_VERSION,
    ])
    return "%s_%s" % (name, _hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12])


def _say(quiet, message, end="\n"):
    if not quiet:
        print(message, file=_sys.stderr, end=end, flush=True)


def _private_dir(path):
    """Create path (mode 0o700) if needed and check nobody else can write into it."""
    try:
        _os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as e:
        raise BuildError(
            "cannot create the fusegen cache directory %s: %s; set FUSEGEN_CACHE_DIR "
            "to a writable directory" % (path, e.strerror or e)) from e
    st = _os.stat(path)
    if not _stat.S_ISDIR(st.st_mode):
        raise BuildError("fusegen cache path %s exists but is not a directory; remove it "
                         "or set FUSEGEN_CACHE_DIR to another directory" % path)
    # A library in the cache is dlopen'ed as-is, so anyone who can write there
    # can run code in this process.
    euid = getattr(_os, "geteuid", None)
    if euid is not None and st.st_uid != euid():
        raise BuildError(
            "refusing to use fusegen cache directory %s: it is owned by uid %d, not by "
            "you (uid %d), so another user could plant a compiled library there; set "
            "FUSEGEN_CACHE_DIR to a directory of your own" % (path, st.st_uid, euid()))
    if st.st_mode & 0o022:
        raise BuildError(
            "refusing to use fusegen cache directory %s: it is group- or world-writable "
            "(mode %03o), so another user could plant a compiled library there; run "
            "'chmod 700 %s' or set FUSEGEN_CACHE_DIR to a private directory"
            % (path, _stat.S_IMODE(st.st_mode), path))
    if not _os.access(path, _os.W_OK | _os.X_OK):
        raise BuildError("fusegen cache directory %s is not writable; set FUSEGEN_CACHE_DIR "
                         "to a writable directory" % path)
    return path


def _cache_dir():
    root = _os.environ.get("FUSEGEN_CACHE_DIR") or _os.path.join("~", ".cache", "fusegen")
    root = _os.path.abspath(_os.path.expanduser(root))
    try:
        # the parent (e.g. ~/.cache) is not ours to lock down; only its existence matters
        _os.makedirs(_os.path.dirname(root), exist_ok=True)
    except OSError as e:
        raise BuildError(
            "cannot create the fusegen cache directory %s: %s; set FUSEGEN_CACHE_DIR "
            "to a writable directory" % (root, e.strerror or e)) from e
    tag = "torch%s_cuda%s" % (_torch.__version__, _torch.version.cuda or "none")
    path = _private_dir(root)
    for part in ("v" + _RUNTIME_VERSION, tag):
        path = _private_dir(_os.path.join(path, _re.sub(r"[^A-Za-z0-9._-]", "_", part)))
    return path


def _lock(lock_path, ext, quiet):
    if _fcntl is None:
        raise BuildError("fusegen needs fcntl.flock to guard its build cache; this "
                         "platform does not provide it")
    try:
        fd = _os.open(lock_path, _os.O_RDWR | _os.O_CREAT, 0o600)
    except OSError as e:
        raise BuildError("cannot open lock file %s: %s; set FUSEGEN_CACHE_DIR to a "
                         "writable directory" % (lock_path, e.strerror or e)) from e
    # flock (not a lock file's existence) so that the kernel drops the lock of a
    # killed process and the next load never hangs on it.
    try:
        try:
            _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
        except BlockingIOError:
            _say(quiet, "fusegen: waiting for another process building %s (lock %s)"
                 % (ext, lock_path))
            _fcntl.flock(fd, _fcntl.LOCK_EX)
    except BaseException:
        _os.close(fd)
        raise
    return fd


def _unlock(fd):
    try:
        _fcntl.flock(fd, _fcntl.LOCK_UN)
    finally:
        _os.close(fd)


def _find_nvcc():
    """(path or None, list of places looked at)."""
    candidates = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        home = _os.environ.get(var)
        if home:
            candidates.append(_os.path.join(home, "bin", "nvcc"))
    on_path = _shutil.which("nvcc")
    candidates.append(on_path if on_path else "nvcc on PATH")
    candidates.extend(_NVCC_FALLBACKS)
    for c in candidates:
        if _os.path.isfile(c) and _os.access(c, _os.X_OK):
            return c, candidates
    return None, candidates


def _write_sources(build_dir, cpp_source, cuda_source):
    # Same file names as load_inline (which rewrites them with its own include
    # lines), so a failed build directory always holds the sources.
    paths = []
    for fname, text in (("cuda.cu", cuda_source), ("main.cpp", cpp_source)):
        if text is not None:
            path = _os.path.join(build_dir, fname)
            with open(path, "w") as f:
                f.write(text)
            paths.append(path)
    return paths


def _source_paths(build_dir):
    return [p for p in (_os.path.join(build_dir, "cuda.cu"), _os.path.join(build_dir, "main.cpp"))
            if _os.path.isfile(p)]


def _keep_failed(root, ext, build_dir):
    """Move a failed build to <root>/<ext>.failed (replacing an older one) for inspection."""
    failed = _os.path.join(root, ext + ".failed")
    try:
        if _os.path.lexists(failed):
            _shutil.rmtree(failed)
        _os.rename(build_dir, failed)
    except OSError:
        return build_dir  # the next lock holder cleans it up; report it where it is
    return failed


def _rmtree_quiet(path):
    _shutil.rmtree(path, ignore_errors=True)


def _resolve_error_path(path, build_dir, failed_dir):
    # Compiler messages name files in the temporary build dir, which has since
    # been renamed to the .failed dir.
    if build_dir and (path == build_dir or path.startswith(build_dir + _os.sep)):
        path = failed_dir + path[len(build_dir):]
    elif not _os.path.isabs(path):
        path = _os.path.join(failed_dir, path)  # ninja runs in the build dir
    if _os.path.isfile(path):
        return path
    alt = _os.path.join(failed_dir, _os.path.basename(path))
    return alt if _os.path.isfile(alt) else None


def _snippet(path, lineno, context=2):
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    lo, hi = max(1, lineno - context), min(len(lines), lineno + context)
    width = len(str(hi))
    return ["    %s %*d | %s" % (">" if i == lineno else " ", width, i, lines[i - 1])
            for i in range(lo, hi + 1)]


def _compile_error_message(ext, failed_dir, build_dir, raw):
    sources = _source_paths(failed_dir) or [failed_dir]
    out = ["failed to compile fused kernels for %s; generated sources: %s"
           % (ext, " ".join(sources))]
    if build_dir and failed_dir != build_dir:
        # point at files that still exist: the temp dir became the .failed dir
        raw = raw.replace(build_dir + _os.sep, failed_dir + _os.sep)
    raw_lines = raw.splitlines()
    seen = set()
    for line in raw_lines:
        if len(seen) >= _MAX_REPORTED_ERRORS:
            break
        for regex in _ERROR_LINE_RES:
            m = regex.match(line.strip())
            if m is None:
                continue
            if line not in seen:
                seen.add(line)
                out.append("")
                out.append(line.strip())
                path = _resolve_error_path(m.group("path").strip(), build_dir, failed_dir)
                if path is not None:
                    out.extend(_snippet(path, int(m.group("line"))))
            break
    out.append("")
    out.append("compiler output (last %d lines):" % _OUTPUT_TAIL_LINES)
    out.extend(raw_lines[-_OUTPUT_TAIL_LINES:])
    return "\n".join(out)


def _import_library(ext, so_path):
    spec = _importlib_util.spec_from_file_location(ext, so_path)
    if spec is None or spec.loader is None:
        raise ImportError("cannot create an import spec for %s" % so_path)
    module = _importlib_util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _forget_torch_version(ext):
    # torch's in-process versioner hashes the build directory; a second build
    # of the same name (retry after an error, cache wiped) in a fresh temp dir
    # would otherwise be renamed <ext>_v1 and no longer be at <ext>.so.
    import torch.utils.cpp_extension as cpp_extension
    entries = getattr(getattr(cpp_extension, "JIT_EXTENSION_VERSIONER", None), "entries", None)
    if isinstance(entries, dict):
        entries.pop(ext, None)


def _load_or_build(root, ext, cpp_source, cuda_source, cflags, cuda_cflags, quiet, compile_fn):
    """Runs with the extension's lock held."""
    final_dir = _os.path.join(root, ext)
    so_path = _os.path.join(final_dir, ext + _LIB_SUFFIX)
    if _os.path.isfile(so_path):
        try:
            return _import_library(ext, so_path)
        except Exception as e:
            raise BuildError("cannot load cached fused kernels %s: %s; delete %s to rebuild"
                             % (so_path, e, final_dir)) from e

    # Only the lock holder builds, so any temp dir left here is from a dead process.
    prefix = ext + ".build-"
    for entry in _os.listdir(root):
        if entry.startswith(prefix):
            _rmtree_quiet(_os.path.join(root, entry))
    if _os.path.lexists(final_dir):  # a final dir without its library is not a build
        _rmtree_quiet(final_dir)

    build_dir = _tempfile.mkdtemp(dir=root, prefix=prefix)
    _write_sources(build_dir, cpp_source, cuda_source)
    if cuda_source is not None:
        nvcc, looked = _find_nvcc()
        if nvcc is None:
            failed = _keep_failed(root, ext, build_dir)
            raise BuildError(
                "nvcc (the CUDA compiler) was not found, so the fused kernels for %s cannot "
                "be compiled (looked at: %s). Install the CUDA toolkit (matching torch's "
                "CUDA %s) and set CUDA_HOME to its root, the directory holding bin/nvcc, or "
                "put nvcc on PATH. Generated source that would have been compiled: %s"
                % (ext, ", ".join(looked), _torch.version.cuda or "version",
                   _os.path.join(failed, "cuda.cu")))

    if compile_fn is None:
        import torch.utils.cpp_extension as cpp_extension
        compile_fn = cpp_extension.load_inline
    # One line on stderr: "compiling ... " now, "done in 41.3 s, cached at ..." when it is (the compiler's own
    # output, with FUSEGEN_VERBOSE=1, comes between: then the line ends first).
    verbose = _os.environ.get("FUSEGEN_VERBOSE") == "1"
    _say(quiet, "fusegen: compiling fused kernels for %s ..." % ext, end="\n" if verbose else "")
    start = _time.time()
    _forget_torch_version(ext)
    try:
        compile_fn(
            name=ext,
            cpp_sources=[cpp_source],
            cuda_sources=[cuda_source] if cuda_source is not None else [],
            functions=None,
            extra_cflags=list(cflags),
            extra_cuda_cflags=list(cuda_cflags),
            build_directory=build_dir,
            verbose=verbose,
            with_cuda=cuda_source is not None,
        )
    except Exception as e:
        _say(quiet, " failed")
        failed = _keep_failed(root, ext, build_dir)
        raise BuildError(_compile_error_message(ext, failed, build_dir, str(e))) from e

    if not _os.path.isfile(_os.path.join(build_dir, ext + _LIB_SUFFIX)):
        _say(quiet, " failed")
        failed = _keep_failed(root, ext, build_dir)
        raise BuildError("compiling fused kernels for %s produced no %s%s (build directory "
                         "kept at %s)" % (ext, ext, _LIB_SUFFIX, failed))
    # A directory rename is atomic: the final dir only ever exists complete.
    _os.rename(build_dir, final_dir)
    try:
        module = _import_library(ext, so_path)
    except Exception as e:
        _say(quiet, " failed")
        failed = _keep_failed(root, ext, final_dir)
        raise BuildError("compiled fused kernels for %s but cannot load them: %s (build "
                         "kept at %s)" % (ext, e, failed)) from e
    _say(quiet, "%s done in %.1f s, cached at %s" % ("fusegen: %s" % ext if verbose else "", _time.time() - start,
                                                      final_dir))
    return module


def load_extension(name, cpp_source, cuda_source=None, *, fusegen_version,
                   extra_cuda_cflags=(), extra_cflags=("-O3",), quiet=None, _compile=None):
    """Build (or load from cache) a torch extension and return the imported module.

    name: readable id of the specialization (letters, digits, underscores).
    cpp_source: C++ binding source with its own PYBIND11_MODULE(TORCH_EXTENSION_NAME, m).
    cuda_source: CUDA source, or None for a C++-only extension.
    quiet: None -> quiet only when env FUSEGEN_QUIET=1.
    _compile: replaces torch.utils.cpp_extension.load_inline (tests).
    Raises BuildError when compiling or loading fails.
    """
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ValueError("extension name must be letters, digits and underscores, got %r" % (name,))
    if quiet is None:
        quiet = _os.environ.get("FUSEGEN_QUIET") == "1"
    cflags = [str(f) for f in extra_cflags]
    cuda_cflags = [str(f) for f in extra_cuda_cflags]
    if cuda_source is not None and not _has_arch_flag(cuda_cflags):
        env = _os.environ.get("TORCH_CUDA_ARCH_LIST")
        use_env = bool(env and env.strip() and env.strip().lower() != "native")
        # explicit -gencode flags also stop torch from adding arch flags of its own
        cuda_cflags += _cuda_arch_flags(env, None if use_env else _gpu_capability())
    ext = _ext_name(name, cpp_source, cuda_source, cflags, cuda_cflags, fusegen_version)

    module = _LOADED.get(ext)
    if module is not None:
        return module
    with _LOADED_LOCK:
        module = _LOADED.get(ext)
        if module is not None:
            return module
        root = _cache_dir()
        fd = _lock(_os.path.join(root, ext + ".lock"), ext, quiet)
        try:
            module = _load_or_build(root, ext, cpp_source, cuda_source, cflags, cuda_cflags,
                                    quiet, _compile)
        finally:
            _unlock(fd)
        _LOADED[ext] = module
        return module
