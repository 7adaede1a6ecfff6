"""Compiling and linking kernels that call NVSHMEM: finding the wheels (``nvidia-nvshmem-cu13``,
``nvidia-cuda-cccl``, ``nvidia-nvjitlink``), NVRTC with relocatable device code, the nvJitLink
step against ``libnvshmem_device.a`` (cached), and :func:`compile_auto`, which takes that path
only for a source that calls NVSHMEM. Nothing here needs a driver; running is ``nvshmem.py``."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from tvm.backend.sdk import cache_key, compile_cache
from tvm.error import BackendNotInstalledError, CompileError

from .compiler import compile_cuda, include_dirs, parse_arch
from .compiler import toolchain_key as toolchain_key_nvrtc

# The packages of the 'nvshmem' extra, from PyPI (the extra itself would need tvm-backend-cuda
# from an index, which it is not on)
PIP_HINT = "pip install nvidia-nvshmem-cu13 'nvidia-nvjitlink>=13.0,<14' 'nvidia-cuda-cccl>=13.0,<14'"

# -- finding the wheel -----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class NvshmemInstall:
    """Where NVSHMEM's pieces are."""

    root: Path
    include_dir: Path
    device_library: Path  # libnvshmem_device.a
    host_library: Path  # libnvshmem_host.so[.3]
    version: tuple[int, int, int]  # from non_abi/nvshmem_version.h; (0, 0, 0) if unreadable

    @property
    def version_string(self) -> str:
        return ".".join(map(str, self.version))


def _candidate_roots() -> list[Path]:
    roots: list[Path] = []
    for var in ("TVM_NVSHMEM_HOME", "NVSHMEM_HOME"):
        v = os.environ.get(var)
        if v:
            roots.append(Path(v))
    for entry in sys.path:
        if entry and os.path.isdir(entry):
            roots.append(Path(entry) / "nvidia" / "nvshmem")
    return roots


def _lib(root: Path, names: Sequence[str]) -> Path | None:
    for d in (root / "lib", root / "lib64"):
        for n in names:
            if (d / n).is_file():
                return d / n
    return None


def _read_version(include_dir: Path) -> tuple[int, int, int]:
    try:
        text = (include_dir / "non_abi" / "nvshmem_version.h").read_text(errors="replace")
    except OSError:
        return (0, 0, 0)
    parts = []
    for what in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(rf"#define\s+NVSHMEM_VENDOR_{what}_VERSION\s+(\d+)", text)
        parts.append(int(m.group(1)) if m else 0)
    return tuple(parts)  # type: ignore[return-value]


@functools.lru_cache(maxsize=1)
def _find() -> NvshmemInstall | str:
    """The install, or the reason there is none (cached; :func:`find_nvshmem` raises)."""
    tried = []
    for root in _candidate_roots():
        inc = root / "include"
        if not (inc / "nvshmem.h").is_file():
            tried.append(str(root))
            continue
        dev = _lib(root, ["libnvshmem_device.a"])
        host = _lib(root, ["libnvshmem_host.so.3", "libnvshmem_host.so"])
        if dev is None or host is None:
            return (f"NVSHMEM at {root} has headers but no "
                    f"{'libnvshmem_device.a' if dev is None else 'libnvshmem_host.so'}")
        return NvshmemInstall(root, inc, dev, host, _read_version(inc))
    return ("NVSHMEM is not installed (no nvidia/nvshmem/include/nvshmem.h on sys.path, and "
            f"TVM_NVSHMEM_HOME/NVSHMEM_HOME unset); {PIP_HINT}")


def find_nvshmem() -> NvshmemInstall:
    """The NVSHMEM install in use. Raises BackendNotInstalledError naming the wheel."""
    found = _find()
    if isinstance(found, str):
        raise BackendNotInstalledError(found)
    return found


def is_available() -> bool:
    """True when NVSHMEM's headers and libraries are installed (no GPU needed)."""
    return not isinstance(_find(), str)


def unavailable_reason() -> str:
    """Why :func:`is_available` is False ('' when it is True)."""
    found = _find()
    return found if isinstance(found, str) else ""


@functools.lru_cache(maxsize=1)
def _cccl_include_dirs() -> tuple[str, ...]:
    """Folders that hold ``cuda/std/cstdint``, which NVSHMEM's device headers include."""
    cands: list[Path] = []
    for d in include_dirs():
        cands += [Path(d) / "cccl", Path(d)]
    for entry in sys.path:
        if entry and os.path.isdir(entry):
            cands += [Path(entry) / "nvidia" / "cu13" / "include" / "cccl",
                      Path(entry) / "nvidia" / "cuda_cccl" / "include"]
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            cands += [Path(os.environ[var]) / "include" / "cccl", Path(os.environ[var]) / "include"]
    cands += [Path("/usr/local/cuda/include/cccl"), Path("/usr/local/cuda/include")]
    for c in cands:
        if (c / "cuda" / "std" / "cstdint").is_file():
            return (str(c),)
    return ()  # NVRTC's bundled headers (13.x after 13.0) carry CCCL too: compile_cuda adds them


def nvshmem_compile_options() -> list[str]:
    """The NVRTC options a kernel using NVSHMEM needs on top of :func:`compile_cuda`'s."""
    inst = find_nvshmem()
    return ["-rdc=true", f"-I{inst.include_dir}", *(f"-I{d}" for d in _cccl_include_dirs())]


# An NVSHMEM device call or header in CUDA source. Comments are not stripped: a false positive only
# costs a link, a false negative would be a link error, so we err towards linking.
_USES_RE = re.compile(r"\bnvshmemx?_\w+\s*\(|#\s*include\s*[<\"]nvshmemx?\.h[>\"]")


def uses_nvshmem(source: str) -> bool:
    """Whether CUDA ``source`` calls NVSHMEM (and so must be linked with its device library)."""
    return _USES_RE.search(source) is not None


# -- linking ---------------------------------------------------------------------------------------


def _nvjitlink():
    try:
        from cuda.bindings import nvjitlink
    except ImportError as e:  # pragma: no cover - cuda-bindings is a hard dependency
        raise BackendNotInstalledError(f"cuda.bindings.nvjitlink is unavailable: {e}") from e
    return nvjitlink


def _link_logs(nvjitlink, handle) -> str:
    out = []
    for size_fn, get_fn, what in (
        (nvjitlink.get_error_log_size, nvjitlink.get_error_log, "error"),
        (nvjitlink.get_info_log_size, nvjitlink.get_info_log, "info"),
    ):
        try:
            n = size_fn(handle)
            if n > 1:
                buf = bytearray(n)
                get_fn(handle, buf)
                text = bytes(buf).rstrip(b"\x00").decode(errors="replace").strip()
                if text:
                    out.append(f"[nvJitLink {what} log]\n{text}")
        except Exception:  # noqa: BLE001 - a log we cannot read must not hide the real error
            pass
    return "\n".join(out)


@functools.lru_cache(maxsize=1)
def nvjitlink_version() -> tuple[int, int]:
    major, minor = _nvjitlink().version()
    return int(major), int(minor)


def _file_stamp(path: Path) -> str:
    st = path.stat()
    return f"{path}:{st.st_size}:{st.st_mtime_ns}"


def link_nvshmem(
    objects: Sequence[bytes],
    arch: str,
    *,
    lto: bool = False,
    options: Sequence[str] = (),
) -> bytes:
    """Link relocatable cubins (or LTO-IR when ``lto``) with ``libnvshmem_device.a`` for ``arch``.

    Returns an executable cubin. Raises CompileError carrying nvJitLink's error and info logs.
    """
    num, suffix = parse_arch(arch)
    inst = find_nvshmem()
    nvjitlink = _nvjitlink()
    opts = [f"-arch=sm_{num}{suffix}", *(["-lto"] if lto else []), *options]
    kind = nvjitlink.InputType.LTOIR if lto else nvjitlink.InputType.CUBIN
    command = "nvJitLink " + " ".join(opts) + f" <{len(objects)} object(s)> {inst.device_library}"
    try:
        handle = nvjitlink.create(len(opts), opts)
    except Exception as e:  # noqa: BLE001 - bad options surface here
        raise CompileError(f"nvJitLink rejected the options {opts}: {e}", command=command) from e
    try:
        step = "adding the kernel object"
        try:
            for i, obj in enumerate(objects):
                nvjitlink.add_data(handle, kind, bytes(obj), len(obj), f"kernel{i}")
            step = f"adding {inst.device_library.name}"
            nvjitlink.add_file(handle, nvjitlink.InputType.LIBRARY, str(inst.device_library))
            step = "linking"
            nvjitlink.complete(handle)
            n = nvjitlink.get_linked_cubin_size(handle)
            out = bytearray(n)
            nvjitlink.get_linked_cubin(handle, out)
        except Exception as e:  # noqa: BLE001 - nvJitLinkError; the log says what went wrong
            log = _link_logs(nvjitlink, handle)
            major, minor = nvjitlink_version()
            raise CompileError(
                f"nvJitLink {major}.{minor} failed while {step} for {arch} against NVSHMEM "
                f"{inst.version_string} ({e})",
                log=log,
                command=command,
            ) from e
        return bytes(out)
    finally:
        with contextlib.suppress(Exception):
            nvjitlink.destroy(handle)


# NVSHMEM before 3.8 (3.4.5 is what the H200 image's torch brings) does not compile under NVRTC as
# shipped: its device headers use std:: type traits, which NVRTC lacks (3.8 says ::cuda::std::), and
# nvshmem_tensor.h has a constructor with no __host__/__device__ (NVRTC: "host functions are not
# allowed in JIT mode"; -default-device makes it a device function). Seen on the H200, 2026-12-02.
_RTC_CLEAN_VERSION = (3, 8, 0)
_OLD_HEADERS_PRELUDE = """\
#include <cuda/std/type_traits>
namespace std {  // NVSHMEM < 3.8 under NVRTC: the traits its headers name as std::
using ::cuda::std::enable_if; using ::cuda::std::false_type; using ::cuda::std::is_empty;
using ::cuda::std::is_floating_point; using ::cuda::std::is_integral; using ::cuda::std::is_same;
using ::cuda::std::is_signed; using ::cuda::std::is_unsigned; using ::cuda::std::true_type;
}
"""

# NVSHMEM's device library lacks the put-with-signal functions its headers declare but do not
# define: nvJitLink reports "Undefined reference to nvshmemi_transfer_put_signal_dispatch<...>"
# (3.8.0) or "nvshmemi_transfer_put_signal<...>" (3.4.5), for the thread, warp and block forms.
# (Defining NVSHMEM_ENABLE_ALL_DEVICE_INLINING makes 3.8's headers define them, but 3.4.5's then
# need infiniband/mlx5dv.h.) So a source that calls them gets, after its NVSHMEM includes, the same
# operation composed of calls the library has: the put, ``nvshmem_fence`` (which orders it before
# the signal update to the same PE, the guarantee put-with-signal gives) and
# ``nvshmemx_signal_op``. The warp/block forms let every thread take part in the put, then one
# thread signals after the group has synchronised.
_PUT_SIGNAL_RE = re.compile(r"\bnvshmemx?_putmem_signal_nbi(?:_warp|_block)?\s*\(")
_NVSHMEM_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]nvshmemx?\.h[>"].*$', re.M)
_PUT_SIGNAL_SHIM = """\
// tvm: put-with-signal from put + fence + signal_op (libnvshmem_device.a lacks it; nvshmem.py)
static __device__ __forceinline__ void tvm_nvshmem_putmem_signal_nbi(
    void* dst, const void* src, size_t n, uint64_t* sig, uint64_t value, int op, int pe) {
  nvshmem_putmem_nbi(dst, src, n, pe);
  nvshmem_fence();
  nvshmemx_signal_op(sig, value, op, pe);
}
static __device__ __forceinline__ void tvm_nvshmemx_putmem_signal_nbi_warp(
    void* dst, const void* src, size_t n, uint64_t* sig, uint64_t value, int op, int pe) {
  nvshmemx_putmem_nbi_warp(dst, src, n, pe);
  __syncwarp();
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  if (lane == 0) {
    nvshmem_fence();
    nvshmemx_signal_op(sig, value, op, pe);
  }
  __syncwarp();
}
static __device__ __forceinline__ void tvm_nvshmemx_putmem_signal_nbi_block(
    void* dst, const void* src, size_t n, uint64_t* sig, uint64_t value, int op, int pe) {
  nvshmemx_putmem_nbi_block(dst, src, n, pe);
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    nvshmem_fence();
    nvshmemx_signal_op(sig, value, op, pe);
  }
  __syncthreads();
}
#define nvshmem_putmem_signal_nbi tvm_nvshmem_putmem_signal_nbi
#define nvshmemx_putmem_signal_nbi_warp tvm_nvshmemx_putmem_signal_nbi_warp
#define nvshmemx_putmem_signal_nbi_block tvm_nvshmemx_putmem_signal_nbi_block
"""


def _with_put_signal_shim(source: str) -> str:
    """``source`` with :data:`_PUT_SIGNAL_SHIM` after its last NVSHMEM include (see above)."""
    if not _PUT_SIGNAL_RE.search(source):
        return source
    includes = list(_NVSHMEM_INCLUDE_RE.finditer(source))
    if not includes:
        return "#include <nvshmem.h>\n#include <nvshmemx.h>\n" + _PUT_SIGNAL_SHIM + source
    end = includes[-1].end()
    return source[:end] + "\n" + _PUT_SIGNAL_SHIM + source[end:]


_LINK_CACHE = "cuda-nvshmem-link"


def compile_nvshmem(
    source: str,
    arch: str,
    *,
    options: Sequence[str] = (),
    name: str = "kernel.cu",
    cache: bool = True,
):
    """Compile ``source`` with NVRTC (``-rdc=true``, NVSHMEM headers) and link it with NVSHMEM.

    Returns a :class:`~tvm_backend_cuda.compiler.CompiledCuda` whose ``cubin`` is the linked,
    loadable cubin and whose ``options`` are NVRTC's. Both steps are cached in core's compile
    cache: NVRTC's relocatable output (the NVSHMEM headers make that step take seconds) and the
    link (tens of milliseconds).
    """
    inst = find_nvshmem()
    extra: list[str] = []
    if inst.version < _RTC_CLEAN_VERSION:
        source = _OLD_HEADERS_PRELUDE + source
        extra.append("-default-device")
    source = _with_put_signal_shim(source)
    rel = compile_cuda(source, arch, options=[*nvshmem_compile_options(), *extra, *options],
                       name=name, cache=cache)
    store = compile_cache(_LINK_CACHE)
    key = cache_key("nvshmem-link", hashlib.sha256(rel.cubin).hexdigest(), arch,
                    _file_stamp(inst.device_library), list(nvjitlink_version()))
    linked = store.get(key) if cache else None
    if linked is None:
        linked = link_nvshmem([rel.cubin], arch)
        if cache:
            store.put(key, linked)
    return dataclasses.replace(rel, cubin=linked)


def compile_and_link_nvshmem(source: str, arch: str, options: Sequence[str] = ()) -> bytes:
    """CUDA source that calls NVSHMEM -> a loadable cubin for ``arch`` (``"sm_90a"``, ...)."""
    return compile_nvshmem(source, arch, options=options).cubin


def toolchain_key(source: str) -> list[object]:
    """What a cubin of ``source`` depends on besides source, arch and options: NVRTC and the
    headers, and for NVSHMEM kernels the NVSHMEM device library and nvJitLink."""
    key = toolchain_key_nvrtc()
    if uses_nvshmem(source):
        inst = find_nvshmem()
        key += [_file_stamp(inst.device_library), list(nvjitlink_version())]
    return key


def compile_auto(source: str, arch: str, *, options: Sequence[str] = (), name: str = "kernel.cu",
                 cache: bool = True):
    """:func:`compile_nvshmem` when ``source`` calls NVSHMEM, else plain ``compile_cuda``."""
    if uses_nvshmem(source):
        return compile_nvshmem(source, arch, options=options, name=name, cache=cache)
    return compile_cuda(source, arch, options=options, name=name, cache=cache)
