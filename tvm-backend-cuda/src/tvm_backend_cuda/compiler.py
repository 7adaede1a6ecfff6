"""CUDA C++ source to cubin with NVRTC, through ``cuda.bindings.nvrtc``.

No CUDA toolkit and no driver are needed: NVRTC comes from the ``nvidia-cuda-nvrtc`` wheel and the
headers (``cuda_fp16.h``, ``cuda_bf16.h``, ``cuda_fp8.h``) from the ``nvidia-cuda-runtime`` wheel.
We call the raw bindings rather than ``cuda.core.Program`` because cuda.core consults the driver
on its PTX path, which fails on a machine without one (backend-notes B2).

:func:`compile_cuda` caches cubins in core's compile cache (namespace ``cuda-nvrtc``, keyed by
source, arch, options, NVRTC version and header version): ``TVM_CACHE=0``, ``TVM_CACHE_DIR``
and ``XDG_CACHE_HOME`` apply, and a damaged entry is rebuilt, never loaded. ``tvm.compile``
goes through the build contract instead, whose cache holds the final cubins.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from tvm.backend.sdk import cache_dir, cache_key, compile_cache
from tvm.error import CompileError, TargetError

from .tags import parse_arch

__all__ = [
    "CompiledCuda",
    "compile_cuda",
    "compile_ptx",
    "default_options",
    "include_dirs",
    "needed_headers",
    "nvrtc_version",
    "parse_arch",
    "toolchain_key",
]

# Bump when the meaning of a cache key changes.
_CACHE_FORMAT = 2
_CACHE = "cuda-nvrtc"


@dataclasses.dataclass(frozen=True)
class CompiledCuda:
    """A cubin and what produced it."""

    cubin: bytes
    arch: str
    options: tuple[str, ...]  # the exact options given to NVRTC, include paths too
    log: str
    source: str
    name: str = "kernel.cu"
    from_cache: bool = False
    compile_time_s: float = 0.0  # 0.0 on a cache hit


# -- arch --------------------------------------------------------------------------------------
# parse_arch is in tags (loaded with the plugin): runtime reaches it without this module.


def _check_supported(arch: str) -> None:
    num, _ = parse_arch(arch)
    supported = _supported_archs()
    if supported and num not in supported:
        major, minor = nvrtc_version()
        raise TargetError(
            f"NVRTC {major}.{minor} cannot compile for {arch}; it supports sm_"
            + ", sm_".join(str(a) for a in supported)
            + ". Install a matching nvidia-cuda-nvrtc wheel."
        )


# -- NVRTC -------------------------------------------------------------------------------------


def _nvrtc():
    from cuda.bindings import nvrtc  # lazy: 0.1 s, and absent in core-only installs

    return nvrtc


def _check(result, what: str) -> None:
    nvrtc = _nvrtc()
    if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, msg = nvrtc.nvrtcGetErrorString(result)
        raise CompileError(f"NVRTC {what} failed: {msg.decode(errors='replace')}")


@functools.lru_cache(maxsize=1)
def nvrtc_version() -> tuple[int, int]:
    """(major, minor) of the loaded NVRTC library."""
    err, major, minor = _nvrtc().nvrtcVersion()
    _check(err, "nvrtcVersion")
    return int(major), int(minor)


@functools.lru_cache(maxsize=1)
def _supported_archs() -> tuple[int, ...]:
    nvrtc = _nvrtc()
    if not hasattr(nvrtc, "nvrtcGetSupportedArchs"):
        return ()
    err, archs = nvrtc.nvrtcGetSupportedArchs()
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        return ()
    return tuple(int(a) for a in archs)


def _run_nvrtc(source: str, name: str, options: Sequence[str], want: str) -> tuple[bytes, str]:
    """Compile and return (cubin or PTX bytes, log). Raises CompileError with log and options."""
    nvrtc = _nvrtc()
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], [])
    _check(err, "nvrtcCreateProgram")
    try:
        opts = [o.encode() for o in options]
        (result,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        log = _program_log(prog)
        if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            _, msg = nvrtc.nvrtcGetErrorString(result)
            major, minor = nvrtc_version()
            raise CompileError(
                f"NVRTC {major}.{minor} failed to compile {name} "
                f"({msg.decode(errors='replace')})",
                log=log,
                command="nvrtc " + " ".join(options) + f" {name}",
            )
        if want == "cubin":
            err, size = nvrtc.nvrtcGetCUBINSize(prog)
            _check(err, "nvrtcGetCUBINSize")
            buf = b" " * size
            (err,) = nvrtc.nvrtcGetCUBIN(prog, buf)
            _check(err, "nvrtcGetCUBIN")
        else:
            err, size = nvrtc.nvrtcGetPTXSize(prog)
            _check(err, "nvrtcGetPTXSize")
            buf = b" " * size
            (err,) = nvrtc.nvrtcGetPTX(prog, buf)
            _check(err, "nvrtcGetPTX")
            buf = buf.rstrip(b"\x00")
        return buf, log
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def _program_log(prog) -> str:
    nvrtc = _nvrtc()
    err, size = nvrtc.nvrtcGetProgramLogSize(prog)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS or size <= 1:
        return ""
    buf = b" " * size
    nvrtc.nvrtcGetProgramLog(prog, buf)
    return buf.rstrip(b"\x00").decode(errors="replace")


# -- headers -----------------------------------------------------------------------------------

# Where the wheels put the CUDA headers: 13.x uses nvidia/cu13/include for every component, 12.x
# one folder per component.
_WHEEL_INCLUDE_DIRS = (
    "nvidia/cu13/include",
    "nvidia/cuda_runtime/include",
    "nvidia/cu12/include",
    "nvidia/cuda_nvrtc/include",
)


@functools.lru_cache(maxsize=1)
def include_dirs() -> tuple[str, ...]:
    """The header folders given to NVRTC, best first.

    1. ``TVM_CUDA_INCLUDE`` (os.pathsep-separated), if set: an explicit override.
    2. The ``nvidia-cuda-runtime`` wheel's include folder (has ``cuda_fp16.h`` and friends).
    3. Only when no wheel headers exist: ``$CUDA_HOME/include`` / ``$CUDA_PATH/include``.
    An empty result means :func:`default_options` falls back to NVRTC's bundled headers where the
    installed NVRTC has them (13.x later than 13.0).
    """
    override = os.environ.get("TVM_CUDA_INCLUDE")
    if override:
        return tuple(p for p in override.split(os.pathsep) if p)
    found = _wheel_include_dirs()
    if found:
        return found
    for var in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(var)
        if root and (Path(root) / "include" / "cuda_fp16.h").is_file():
            return (str(Path(root) / "include"),)
    return ()


def _wheel_include_dirs() -> tuple[str, ...]:
    dirs: list[str] = []
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        for rel in _WHEEL_INCLUDE_DIRS:
            cand = os.path.join(entry, rel)
            if os.path.isfile(os.path.join(cand, "cuda_fp16.h")) and cand not in dirs:
                dirs.append(cand)
        if dirs:
            # The first site-packages that has them wins, so two CUDA majors never mix.
            break
    return tuple(dirs)


@functools.lru_cache(maxsize=1)
def _header_version() -> str:
    """CUDART_VERSION of the headers in use ('' when none): part of the cache key."""
    for d in include_dirs():
        path = Path(d) / "cuda_runtime_api.h"
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        m = re.search(r"#define\s+CUDART_VERSION\s+(\d+)", text)
        if m:
            return m.group(1)
    return ""


def _bundled_headers_dir() -> str:
    return str(cache_dir() / f"nvrtc-headers-{'.'.join(map(str, nvrtc_version()))}")


@functools.lru_cache(maxsize=1)
def _bundled_headers_supported() -> bool:
    """Whether this NVRTC accepts --use-bundled-headers (13.0 does not; 13.5 does)."""
    opt = f"--use-bundled-headers={_bundled_headers_dir()}"
    try:
        _run_nvrtc('#include <cuda_fp16.h>\n', "probe.cu", ["-arch=compute_80", opt], "ptx")
    except CompileError:
        return False
    return True


def _header_options() -> list[str]:
    dirs = include_dirs()
    if dirs:
        return [f"-I{d}" for d in dirs]
    if _bundled_headers_supported():
        return [f"--use-bundled-headers={_bundled_headers_dir()}"]
    return []


_HEADER_USES = (
    ("cuda_fp16.h", re.compile(
        r"\b(__half2?|half2?|__float2half\w*|__half2float|__half22float2|"
        r"__h(?:add|sub|mul|div|fma|max|min|neg|abs|eq|ne|lt|le|gt|ge|isnan)2?\w*)\b"
    )),
    ("cuda_bf16.h", re.compile(r"\b(__nv_bfloat16\w*|__float2bfloat16\w*|__bfloat162float)\b")),
    ("cuda_fp8.h", re.compile(r"\b(__nv_fp8\w*|__nv_cvt_\w*fp8\w*)\b")),
)


def needed_headers(source: str) -> list[str]:
    """The CUDA type headers that ``source`` uses but does not include yet, in include order.

    Codegen can prepend ``#include <h>`` for each, so a kernel that uses no half types pays no
    header parsing at all (``cuda_fp8.h`` pulls in the other two).
    """
    out = []
    for header, pattern in _HEADER_USES:
        if f"<{header}>" in source or f'"{header}"' in source:
            continue
        if pattern.search(source):
            out.append(header)
    return out


# -- options -----------------------------------------------------------------------------------

_ARCH_FLAGS = ("-arch", "--gpu-architecture", "--gpu-name")


def default_options(arch: str, *, ptx: bool = False) -> list[str]:
    """The options every compile gets: the arch, C++17 and the header folders."""
    num, suffix = parse_arch(arch)
    target = f"compute_{num}{suffix}" if ptx else f"sm_{num}{suffix}"
    return [f"--gpu-architecture={target}", "-std=c++17", *_header_options()]


def _full_options(arch: str, options: Sequence[str], *, ptx: bool) -> list[str]:
    if isinstance(options, str):
        raise TypeError("options must be a sequence of strings, not one string")
    for o in options:
        if o.split("=")[0] in _ARCH_FLAGS:
            raise ValueError(f"give the arch through the arch argument, not the option {o!r}")
    _check_supported(arch)
    return [*default_options(arch, ptx=ptx), *options]


# -- cache -------------------------------------------------------------------------------------


def toolchain_key() -> list[object]:
    """What a cubin depends on besides source, arch and options: NVRTC's and the headers'
    versions (part of every cache key)."""
    return [_CACHE_FORMAT, list(nvrtc_version()), _header_version()]


def _cache_key(source: str, arch: str, options: Sequence[str]) -> str:
    return cache_key("nvrtc", source, arch, list(options), toolchain_key())


# -- public entry points -----------------------------------------------------------------------


def compile_cuda(
    source: str,
    arch: str,
    *,
    options: Sequence[str] = (),
    name: str = "kernel.cu",
    cache: bool = True,
) -> CompiledCuda:
    """Compile CUDA C++ ``source`` to a cubin for ``arch`` (``"sm_80"``, ``"sm_90a"``, ...).

    ``options`` are extra NVRTC options (e.g. ``["-lineinfo", "--use_fast_math"]``); the arch,
    ``-std=c++17`` and the header folders are added here. Raises :class:`tvm.error.CompileError`
    carrying NVRTC's log and the exact options, and :class:`tvm.error.TargetError` for a bad or
    unsupported arch.
    """
    full = _full_options(arch, options, ptx=False)
    store = compile_cache(_CACHE)
    key = _cache_key(source, arch, full) if cache else ""
    if cache:
        cubin = store.get(key)
        if cubin is not None:
            log = str(store.metadata(key).get("log", ""))
            return CompiledCuda(cubin, arch, tuple(full), log, source, name, from_cache=True)
    t0 = time.perf_counter()
    cubin, log = _run_nvrtc(source, name, full, "cubin")
    elapsed = time.perf_counter() - t0
    if cache:
        store.put(key, cubin, {"arch": arch, "log": log, "name": name})
    return CompiledCuda(cubin, arch, tuple(full), log, source, name, compile_time_s=elapsed)


def compile_ptx(
    source: str,
    arch: str,
    *,
    options: Sequence[str] = (),
    name: str = "kernel.cu",
) -> str:
    """Compile ``source`` to PTX text for ``compute_XX[a]`` (a debugging aid; not cached).

    PTX from a newer NVRTC may be rejected by an older driver's JIT, so the runtime loads cubins.
    """
    full = _full_options(arch, options, ptx=True)
    ptx, _ = _run_nvrtc(source, name, full, "ptx")
    return ptx.decode(errors="replace")
