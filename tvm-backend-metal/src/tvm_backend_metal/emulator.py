"""Run Metal compute kernels on the CPU, through the same C++ shim as the syntax check.

The kernel source is compiled by g++ (``-O2``) together with the shim's execution model into a
shared object with an ``extern "C"`` launcher, kept in core's compile cache (namespace
``metal-emu``: ``$TVM_CACHE_DIR/metal-emu``, default ``~/.cache/tvm/metal-emu``; ``TVM_CACHE=0``
turns it off), and called with ctypes.

Execution model (see ``shim/tvm_metal_shim.h``):

The execution model is core's fiber runtime (``tvm/runtime/emu/tvm_emu_fibers.h``, shared with
the CUDA emulator):

* threadgroups are spread over OS worker threads; a worker runs one threadgroup at a time;
* every thread of a threadgroup is a fiber (``ucontext``) with its own stack, run until it
  blocks; ``threadgroup`` variables are per-worker storage shared by that threadgroup's fibers;
* ``threadgroup_barrier`` releases when every live thread of the threadgroup has reached a
  barrier (threads that returned no longer count, as exited GPU threads);
* SIMD groups are 32 consecutive threads. A SIMD-group function (``simd_sum``,
  ``simd_shuffle_down``, ``simdgroup_barrier``, ``simdgroup_multiply_accumulate`` ...) is a lane
  collective: lanes deposit their value and block; once no thread can run, the lanes of a SIMD
  group waiting at the same call site are the active lanes, and each computes its result from a
  snapshot of their values. Divergent lanes (at another site or a barrier) are inactive.
* simdgroup matrices keep each lane's two elements of Apple's 8x8 layout authoritative
  (``thread_elements()`` works); multiply-accumulate gathers them from the lanes.

Usage::

    c = np.zeros(n, np.float32)
    run_msl(src, "vadd", grid=n // 64, threadgroup=64, buffers=[a, b, c, np.uint32(n)])

`grid` counts threadgroups (Metal's ``dispatchThreadgroups``), `threadgroup` threads per
threadgroup. Arrays are read and written in place; scalars become ``constant T&`` values.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import hashlib
import os
import re
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tvm.backend import sdk
from tvm.error import CompileError

from . import msl_check
from .msl_check import KernelParam, KernelSignature

__all__ = ["EmulatedKernel", "compile_msl", "run_msl"]

_MAX_THREADS = 1024
_DEFAULT_STACK = 256 * 1024

# Builtin attribute -> field of tvm_metal_emu::ThreadCtx.
_BUILTIN_FIELDS = {
    "thread_position_in_grid": "thread_position_in_grid",
    "thread_position_in_threadgroup": "thread_position_in_threadgroup",
    "threadgroup_position_in_grid": "threadgroup_position_in_grid",
    "threads_per_threadgroup": "threads_per_threadgroup",
    "dispatch_threads_per_threadgroup": "threads_per_threadgroup",
    "threadgroups_per_grid": "threadgroups_per_grid",
    "threads_per_grid": "threads_per_grid",
    "grid_size": "threads_per_grid",
    "thread_index_in_threadgroup": "thread_index_in_threadgroup",
    "thread_index_in_simdgroup": "thread_index_in_simdgroup",
    "simdgroup_index_in_threadgroup": "simdgroup_index_in_threadgroup",
    "simdgroups_per_threadgroup": "simdgroups_per_threadgroup",
    "dispatch_simdgroups_per_threadgroup": "simdgroups_per_threadgroup",
    "threads_per_simdgroup": "threads_per_simdgroup",
    "thread_execution_width": "threads_per_simdgroup",
}

# MSL element type -> numpy dtype name.
_SCALAR_DTYPES = {
    "float": "float32",
    "half": "float16",
    "bfloat": "bfloat16",
    "int": "int32",
    "uint": "uint32",
    "short": "int16",
    "ushort": "uint16",
    "char": "int8",
    "uchar": "uint8",
    "long": "int64",
    "ulong": "uint64",
    "bool": "bool",
    "int8_t": "int8",
    "uint8_t": "uint8",
    "int16_t": "int16",
    "uint16_t": "uint16",
    "int32_t": "int32",
    "uint32_t": "uint32",
    "int64_t": "int64",
    "uint64_t": "uint64",
}
_QUALIFIERS = re.compile(r"\b(device|constant|const|volatile|threadgroup|thread)\b|[*&]")


def _element_dtype(ptype: str) -> str | None:
    """numpy dtype name of a parameter's element type, or None for types we do not know
    (structs): those buffers are passed through unchecked."""
    base = re.sub(r"\s+", "", _QUALIFIERS.sub(" ", ptype.replace("metal::", "")))
    base = base.removeprefix("packed_")
    m = re.fullmatch(r"atomic_(\w+)|atomic<(\w+)>", base)
    if m:
        base = m.group(1) or m.group(2)
    if base in _SCALAR_DTYPES:
        return _SCALAR_DTYPES[base]
    m = re.fullmatch(r"([a-z]+)[234]", base)
    return _SCALAR_DTYPES.get(m.group(1)) if m else None


def _as_dim3(value: int | Sequence[int], what: str) -> tuple[int, int, int]:
    dims = (value,) if isinstance(value, int) else tuple(int(v) for v in value)
    if not 1 <= len(dims) <= 3 or any(d < 0 for d in dims):
        raise ValueError(f"{what} must be an int or 1 to 3 non-negative ints, got {value!r}")
    return (*dims, *(1,) * (3 - len(dims)))  # type: ignore[return-value]


def _launcher_source(sig: KernelSignature) -> tuple[str, list[int]]:
    """C++ appended to the kernel: a per-thread entry calling the kernel with its arguments,
    and the extern "C" launcher. Also returns the threadgroup(k) indices in slot order."""
    tg_slots: list[int] = sorted({p.index for p in sig.params if p.kind == "threadgroup"})
    args = []
    for p in sig.params:
        if p.kind == "buffer":
            args.append(f"tvm_metal_emu::arg_cast<{p.type}>(a[{p.index}])")
        elif p.kind == "threadgroup":
            args.append(f"tvm_metal_emu::arg_cast<{p.type}>(c.tgmem[{tg_slots.index(p.index)}])")
        elif p.builtin == "grid_origin":
            args.append(f"tvm_metal_emu::builtin_cast<{p.type}>(tvm_metal_emu::uint3(0))")
        else:
            field = _BUILTIN_FIELDS.get(p.builtin)
            if field is None:
                raise CompileError(
                    f"kernel {sig.name!r}: the emulator does not provide "
                    f"[[{p.builtin}]] (parameter {p.name!r})"
                )
            args.append(f"tvm_metal_emu::builtin_cast<{p.type}>(c.{field})")
    joined = ",\n      ".join(args)
    text = f"""

// ---- emulator launcher (generated by tvm_backend_metal.emulator) ----
static void tvm_emu_entry_(void** a, const tvm_metal_emu::ThreadCtx& c) {{
  (void)a; (void)c;
  {sig.name}(
      {joined});
}}
extern "C" int tvm_metal_emu_launch(void** args, const uint32_t* grid, const uint32_t* tg,
                                    const uint64_t* tgmem, int n_tgmem, int workers,
                                    uint64_t stack_size, char* err, int errlen) {{
  return tvm_metal_emu::launch(tvm_emu_entry_, args, grid, tg, tgmem, n_tgmem, workers,
                               stack_size, err, errlen);
}}
"""
    return text, tg_slots


@functools.cache
def _shim_digest() -> str:
    h = hashlib.sha256()
    for path in sorted(msl_check.SHIM_DIR.iterdir()):
        if path.is_file():
            h.update(path.name.encode())
            h.update(path.read_bytes())
    h.update(sdk.emu.header_digest().encode())  # core's fiber runtime, which the shim includes
    return h.hexdigest()


@functools.cache
def _compiler_id(cxx: str) -> str:
    try:
        out = sdk.run_tool([cxx, "--version"], "asking for its version", sdk.PROBE_TIMEOUT_S, check=False)
    except CompileError:
        return cxx
    return out.stdout.splitlines()[0] if out.stdout else cxx


@dataclasses.dataclass
class EmulatedKernel:
    """A compiled kernel; call it with ``(grid, threadgroup, buffers, ...)``."""

    name: str
    signature: KernelSignature
    library_path: Path
    command: str
    threadgroup_slots: list[int]
    _lib: Any = dataclasses.field(default=None, repr=False)

    # ---- argument marshalling -----------------------------------------------------------
    def _arrays(self, buffers: Sequence[Any]) -> tuple[list[Any], dict[int, Any], list[tuple]]:
        """numpy arrays for every bound buffer index, and (original, contiguous) pairs to copy
        back."""
        import numpy as np

        bound: dict[int, Any] = {}
        copy_back: list[tuple] = []
        for p in self.signature.params:
            if p.kind != "buffer":
                continue
            if p.index >= len(buffers) or buffers[p.index] is None:
                raise ValueError(
                    f"kernel {self.name!r} needs buffer {p.index} for parameter "
                    f"{p.name!r} ({p.type}); got {len(buffers)} buffers"
                )
            bound[p.index] = self._marshal(p, buffers[p.index], copy_back, np)
        return list(buffers), bound, copy_back

    def _marshal(self, p: KernelParam, value: Any, copy_back: list[tuple], np: Any) -> Any:
        want = _element_dtype(p.type)
        if isinstance(value, np.ndarray):
            got = value.dtype.name
            if want is not None and got != want and not (want == "bfloat16" and got == "uint16"):
                raise TypeError(
                    f"kernel {self.name!r} buffer {p.index} ({p.name!r}: {p.type}) holds {want} "
                    f"elements, got a {got} array; convert it, e.g. arr.astype(np.{want})"
                    if want != "bfloat16"
                    else f"kernel {self.name!r} buffer {p.index} ({p.name!r}: {p.type}) holds bfloat "
                    f"elements, got a {got} array; pass ml_dtypes.bfloat16 or uint16 bits"
                )
            if value.flags.c_contiguous and value.flags.writeable:
                return value
            tmp = np.ascontiguousarray(value)
            if value.flags.writeable:
                copy_back.append((value, tmp))
            return tmp
        if want is None:
            raise TypeError(
                f"kernel {self.name!r} buffer {p.index} ({p.name!r}: {p.type}): "
                f"pass a numpy array holding the value's bytes, not {type(value)!r}"
            )
        if want == "bfloat16":
            import ml_dtypes

            return np.asarray(value, dtype=ml_dtypes.bfloat16).reshape(1)
        return np.asarray(value, dtype=want).reshape(1)

    # ---- launch ---------------------------------------------------------------------------
    def __call__(
        self,
        grid: int | Sequence[int],
        threadgroup: int | Sequence[int],
        buffers: Sequence[Any],
        *,
        threadgroup_memory: dict[int, int] | None = None,
        workers: int | None = None,
        isolate: bool = True,
        stack_size: int = _DEFAULT_STACK,
    ) -> None:
        g = _as_dim3(grid, "grid")
        t = _as_dim3(threadgroup, "threadgroup")
        nthreads = t[0] * t[1] * t[2]
        if not 1 <= nthreads <= _MAX_THREADS:
            raise ValueError(
                f"a threadgroup holds 1 to {_MAX_THREADS} threads on Apple GPUs; "
                f"got {t} = {nthreads}"
            )
        tgmem = threadgroup_memory or {}
        missing = [k for k in self.threadgroup_slots if k not in tgmem]
        if missing:
            raise ValueError(
                f"kernel {self.name!r} takes threadgroup memory [[threadgroup(k)]] "
                f"for k in {missing}; pass threadgroup_memory={{k: nbytes}}"
            )
        sizes = [int(tgmem[k]) for k in self.threadgroup_slots]
        _, bound, copy_back = self._arrays(buffers)
        if workers is None:
            workers = min(os.cpu_count() or 1, 16)
        if isolate and hasattr(os, "fork"):
            self._launch_forked(bound, g, t, sizes, workers, stack_size)
        else:
            self._launch(self._pointers(bound), g, t, sizes, workers, stack_size)
        for original, tmp in copy_back:
            original[...] = tmp

    def _library(self) -> Any:
        if self._lib is None:
            lib = ctypes.CDLL(str(self.library_path))
            fn = lib.tvm_metal_emu_launch
            fn.restype = ctypes.c_int
            fn.argtypes = [
                ctypes.POINTER(ctypes.c_void_p),
                ctypes.POINTER(ctypes.c_uint32),
                ctypes.POINTER(ctypes.c_uint32),
                ctypes.POINTER(ctypes.c_uint64),
                ctypes.c_int,
                ctypes.c_int,
                ctypes.c_uint64,
                ctypes.c_char_p,
                ctypes.c_int,
            ]
            self._lib = lib
        return self._lib

    @staticmethod
    def _pointers(bound: dict[int, Any]) -> list[int]:
        n = max(bound, default=-1) + 1
        ptrs = [0] * n
        for index, arr in bound.items():
            ptrs[index] = arr.ctypes.data
        return ptrs

    def _launch(
        self, ptrs: list[int], g: tuple, t: tuple, sizes: list[int], workers: int, stack_size: int
    ) -> None:
        fn = self._library().tvm_metal_emu_launch
        args = (ctypes.c_void_p * max(len(ptrs), 1))(*ptrs)
        err = ctypes.create_string_buffer(512)
        rc = fn(
            args,
            (ctypes.c_uint32 * 3)(*g),
            (ctypes.c_uint32 * 3)(*t),
            (ctypes.c_uint64 * max(len(sizes), 1))(*sizes),
            len(sizes),
            workers,
            stack_size,
            err,
            len(err),
        )
        if rc == 1:
            raise RuntimeError(f"Metal emulator: kernel {self.name!r}: {err.value.decode()}")
        sdk.emu.raise_for(rc, err.value.decode(), f"Metal emulator: kernel {self.name!r}: ")

    def _launch_forked(
        self,
        bound: dict[int, Any],
        g: tuple,
        t: tuple,
        sizes: list[int],
        workers: int,
        stack_size: int,
    ) -> None:
        """Run in a forked child on shared memory (core's :func:`tvm.runtime.emu.run_isolated`),
        so that a kernel that crashes (an out-of-bounds access) raises here instead of killing
        the Python process."""
        self._library()  # load before fork: the child reuses it

        def launch(pointers: dict[int, int]) -> None:
            n = max(pointers, default=-1) + 1
            ptrs = [pointers.get(i, 0) for i in range(n)]
            self._launch(ptrs, g, t, sizes, workers, stack_size)

        sdk.emu.run_isolated(launch, bound, what=f"Metal emulator: kernel {self.name!r}")


#: kernels compiled in this process, by (cache folder, cache on, entry key)
_KERNEL_CACHE: dict[tuple[str, bool, str], EmulatedKernel] = {}
CACHE_NAMESPACE = "metal-emu"


def compile_msl(
    source: str,
    kernel_name: str,
    *,
    cxx: str | None = None,
    filename: str = "kernel.metal",
    extra_flags: Sequence[str] = (),
) -> EmulatedKernel:
    """Compile one kernel of an MSL source for the CPU emulator.

    The shared object goes through core's compile cache (namespace ``metal-emu``, keyed by the
    prepared source, the shim, the compiler's version and the flags), so ``TVM_CACHE=0``,
    ``TVM_CACHE_DIR`` and ``XDG_CACHE_HOME`` apply as to every other compiled binary.
    """
    compiler = msl_check.find_cxx(cxx)
    prepared, errors = msl_check.prepare_source(source, filename)
    if errors:
        raise CompileError(f"MSL check failed: {errors[0]}", log="\n".join(errors))
    kernels = msl_check.find_kernels(prepared)
    if kernel_name not in kernels:
        raise CompileError(
            f"no kernel named {kernel_name!r} in the source; kernels found: "
            f"{', '.join(kernels) or 'none'}"
        )
    sig = kernels[kernel_name]
    launcher, tg_slots = _launcher_source(sig)
    text = prepared + launcher
    flags = ["-O2", "-shared", "-fPIC", "-pthread", *msl_check.shim_flags(), *extra_flags]
    cache = sdk.compile_cache(CACHE_NAMESPACE)
    key = sdk.cache_key(CACHE_NAMESPACE, text, _shim_digest(), _compiler_id(compiler), flags)
    memo = (str(cache.directory), sdk.cache_enabled(), key)
    kernel = _KERNEL_CACHE.get(memo)
    if kernel is not None and kernel.library_path.exists():
        return kernel
    path = cache.get_path(key)
    command = f"{compiler} {' '.join(flags)} <source> -o <object>"
    if path is None:
        data, command = _build(compiler, flags, text, kernel_name)
        path = cache.put(key, data, {"kernel": kernel_name})
    kernel = _KERNEL_CACHE[memo] = EmulatedKernel(kernel_name, sig, path, command, tg_slots)
    return kernel


def _build(compiler: str, flags: list[str], text: str, kernel_name: str) -> tuple[bytes, str]:
    """Compile ``text`` into a shared object; returns its bytes and the command. The sources
    of a failed build are kept, so that the command in the error can be re-run."""
    src = msl_check.write_source(text, f"{kernel_name}-emu")
    out = src.with_suffix(".so")
    cmd = [compiler, *flags, str(src), "-o", str(out)]
    msl_check.run_compiler(cmd, f"Metal emulator build of {kernel_name!r}")
    try:
        return out.read_bytes(), shlex.join(cmd)
    finally:
        shutil.rmtree(src.parent, ignore_errors=True)


def run_msl(
    source: str,
    kernel_name: str,
    grid: int | Sequence[int],
    threadgroup: int | Sequence[int],
    buffers: Sequence[Any],
    *,
    threadgroup_memory: dict[int, int] | None = None,
    cxx: str | None = None,
    workers: int | None = None,
    isolate: bool = True,
    stack_size: int = _DEFAULT_STACK,
) -> None:
    """Run `kernel_name` of an MSL `source` on the CPU.

    grid: threadgroups per grid (1 to 3 ints); threadgroup: threads per threadgroup.
    buffers: indexed by ``[[buffer(i)]]``: numpy arrays (read and written in place) or scalars
    (converted to the parameter's type for ``constant T&``). threadgroup_memory: bytes for each
    ``[[threadgroup(k)]]`` parameter. isolate: run in a forked process so a crash raises.
    """
    kernel = compile_msl(source, kernel_name, cxx=cxx)
    kernel(
        grid,
        threadgroup,
        buffers,
        threadgroup_memory=threadgroup_memory,
        workers=workers,
        isolate=isolate,
        stack_size=stack_size,
    )
