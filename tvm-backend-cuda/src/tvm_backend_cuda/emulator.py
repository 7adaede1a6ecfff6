"""Run the CUDA C++ tvm generates on the CPU: ``tvm.compile(f, "cuda", emulate=True)``.

The generated source (the same codegen as for NVRTC; intrinsics render their emulation bodies,
:mod:`.intrinsics`) is compiled by the host C++ compiler (``$CXX``, default ``g++``; core's
:class:`~tvm.host.compiler.Toolchain` runs it) against ``emu/tvm_cuda_emu.h``, which provides the
CUDA built-ins on core's fiber runtime (``tvm/runtime/emu``): CTAs spread over OS threads, each
thread of a CTA a fiber. Before compiling, :func:`prepare` rewrites the declarations that need
the emulator's types, keeping every line where it was (so compiler messages and reports point at
the generated source's lines):

* a kernel's pointer parameters become checked pointers (``GPtr<T>``): every access is checked
  against the array passed for it;
* ``__shared__ T name[n]`` becomes a checked view of the CTA's shared window
  (``TVM_EMU_SHARED``), the ``extern __shared__`` array and its sub-buffers checked views of the
  dynamic part;
* the fixed-width integer typedefs NVRTC needs are dropped (``<cstdint>`` declares them).

An :class:`EmulatedModule` stands where :class:`~tvm_backend_cuda.runtime.CudaModule` does: the
executable's calls go through the same argument checks and launch plan as on the GPU, then
launch each kernel here, in a forked child (core's :func:`tvm.runtime.emu.run_isolated`), so a
failure raises a tvm error instead of killing the process: an out-of-bounds access
:class:`~tvm.error.BoundsCheckError`, a ``__syncthreads`` reached by part of a CTA
:class:`~tvm.error.BarrierDivergenceError`, a CTA whose threads all wait forever
:class:`~tvm.error.DeadlockError`.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import re
import struct
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tvm.backend.sdk import cache_dir, emu, get_toolchain, run_tool, work_folder
from tvm.error import CompileError, EmulatorError, NotModelledError

from . import emulated_streams as _streams
from . import emulator_asm as _asm
from .emulated_tensor_map import (
    EmulatedTensorMap,
    TensorMapArg,
    _encoded_map,
    encoded_tensor_map,
)
from .emulator_args import SCALAR_CTYPES as _SCALAR_CTYPES
from .emulator_args import host_array as _host_array
from .emulator_args import scalar_arg as _scalar
from .emulator_params import signatures as _signatures
from .tags import OPTIN_SHARED_MEMORY, check_arch, parse_arch

__all__ = ["DEVICE_ARCH", "EMULATED_ARCH", "EMU_DIR", "SHARED_OPTIN_BYTES", "EmulatedKernel",
           "EmulatedModule", "EmulatedTensorMap", "TensorMapArg", "build", "check_resident",
           "device_arch", "device_capability", "encoded_tensor_map", "load_source", "prepare",
           "shared_optin_bytes"]

EMU_DIR = Path(__file__).resolve().parent / "emu"
#: the emulated device's default arch: the Hopper arch the shim models (an H200's, so that
#: code written for the GPU builds the same kernels under TVM_CUDA_EMULATE=1)
EMULATED_ARCH = "sm_90a"
#: the emulated device's arch: ``$TVM_CUDA_EMULATE_ARCH``, else :data:`EMULATED_ARCH`. Target
#: ``cuda`` without an arch builds for it under the emulator, as it builds for the GPU's on a
#: GPU, and code built for an arch it cannot run is refused as the GPU's loader refuses it.
#: (The shim models Hopper: a later arch's instructions it lacks raise NotModelledError.)
DEVICE_ARCH = os.environ.get("TVM_CUDA_EMULATE_ARCH") or EMULATED_ARCH
SHARED_STATIC_BYTES = 48 * 1024  # CUDA's limit on static shared memory per block
#: the emulated device's limit on dynamic shared memory per block, with the opt-in a launch over
#: 48 KB makes (the GPU runtime opts in; the emulator refuses more, as the GPU's runtime does):
#: sm_90's, an H200's (sm_100 has the same)
SHARED_OPTIN_BYTES = OPTIN_SHARED_MEMORY[90]
_DEFAULT_STACK = 256 * 1024
#: the emulated device of a cooperative launch, whose blocks all run together (fibers): SMs
#: of 2048 threads each (a GPU checks its own occupancy; this bounds the emulator's fibers)
EMULATED_SMS = 16
THREADS_PER_SM = 2048

_KERNEL_HEAD = re.compile(
    r'extern "C" __global__\s+void\s+(?:__\w+\([^)]*\)\s+)*(\w+)\s*\(([^{]*?)\)\s*\{', re.S)
_POINTER_PARAM = re.compile(r"^(.+?)\s*\*\s*(?:__restrict__\s+)?(\w+)$", re.S)
_CLUSTER_DIMS = re.compile(r"__cluster_dims__\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)")
# a wait on global memory another block may satisfy (NVSHMEM signals)
_CROSS_BLOCK_WAIT = re.compile(r"\bnvshmem_\w*wait_until\s*\(")
# `__shared__ [alignment] T name[n] [alignment];` or a scalar `__shared__ [alignment] T name;`
# (the alignment as __attribute__((aligned(a))) or __align__(a), before the type or after)
_ALIGNED = r"(?:__attribute__\(\(aligned\((\d+)\)\)\)|__align__\((\d+)\))"
_SHARED_DECL = re.compile(
    rf"^(\s*)__shared__\s+(?:{_ALIGNED}\s+)?(.+?)\s+(\w+)(?:\[([^\]]+)\])?"
    rf"(?:\s+{_ALIGNED})?\s*;$")
_DYN_DECL = re.compile(
    r"^(\s*)extern __shared__ (?:__attribute__\(\(aligned\(\d+\)\)\) |__align__\(\d+\) )?"
    r"(.+?) (\w+)\[\];$")
_DYN_VIEW = re.compile(r"^(\s*)(.+?)\* (\w+) = \(\2\*\)\((\w+)(?: \+ (\d+))?\);$")
_INT_TYPEDEF = re.compile(r"^typedef [\w ]+ u?int(?:8|16|32|64)_t;$")



def device_arch() -> str:
    """The emulated device's arch (:data:`DEVICE_ARCH`, read at each call)."""
    parse_arch(DEVICE_ARCH)  # a clear error for a malformed $TVM_CUDA_EMULATE_ARCH
    return DEVICE_ARCH


def device_capability() -> tuple[int, int]:
    """The emulated device's compute capability, ``(9, 0)`` for sm_90a."""
    num, _ = parse_arch(device_arch())
    return num // 10, num % 10


def shared_optin_bytes() -> int:
    """The emulated device's dynamic shared memory per block with the opt-in (its arch's)."""
    major, minor = device_capability()
    return OPTIN_SHARED_MEMORY.get(major * 10 + minor, 48 * 1024)


def prepare(source: str, kernels: Mapping[str, Sequence[Sequence[str]]]) -> str:
    """The generated CUDA ``source`` with the emulator's declarations (module docstring) and a
    launcher per kernel appended; ``kernels`` maps each kernel to its ``[name, type]`` params.
    A kernel declared with ``__cluster_dims__(x, y, z)`` runs in clusters of that shape; one
    that waits on NVSHMEM signals runs its blocks together (cooperatively) where they fit the
    emulated device (:func:`check_resident`), as a GPU that holds them all would."""
    if _asm.INLINE_ASM.search(source):  # hand-written PTX: the emulator's helpers instead
        source = _asm.translate(source)
    clusters = {}
    heads = list(_KERNEL_HEAD.finditer(source))
    found = [m.group(1) for m in heads]
    for name in kernels:
        if name not in found:
            raise EmulatorError(
                f"kernel {name!r} is not in the CUDA source (its kernels: "
                f"{', '.join(found) or 'none'}); kernels must be declared extern \"C\" "
                "__global__")
    waits = set()
    for k, head in enumerate(heads):
        dims = _CLUSTER_DIMS.search(head.group(0))
        if dims:
            clusters[head.group(1)] = tuple(int(d) for d in dims.groups())
        end = heads[k + 1].start() if k + 1 < len(heads) else len(source)
        if _CROSS_BLOCK_WAIT.search(source, head.end(), end):
            waits.add(head.group(1))
    source = _KERNEL_HEAD.sub(_checked_head, source)
    lines = source.split("\n")
    dyn_names: set[str] = set()
    for i, line in enumerate(lines):
        m = _SHARED_DECL.match(line)
        if m:
            indent, a1, a2, ctype, name, n, a3, a4 = m.groups()
            align = a1 or a2 or a3 or a4 or 16
            if n is None:  # a scalar: a reference to a one-element array
                lines[i] = (f"{indent}TVM_EMU_SHARED({ctype}, {name}_tvm_cell_, 1, {align}); "
                            f"{ctype}& {name} = {name}_tvm_cell_[0];")
            else:
                n = n if n.isdigit() else f"({n})"
                lines[i] = f"{indent}TVM_EMU_SHARED({ctype}, {name}, {n}, {align});"
            continue
        m = _DYN_DECL.match(line)
        if m:
            indent, ctype, name = m.groups()
            dyn_names.add(name)
            lines[i] = f"{indent}TVM_EMU_DYN_SHARED({ctype}, {name});"
            continue
        m = _DYN_VIEW.match(line)
        if m and m.group(4) in dyn_names:
            indent, ctype, name, base, off = m.groups()
            dyn_names.add(name)  # a view of a view (a pool, then its buffers) is checked too
            lines[i] = (f"{indent}::tvm_cuda_emu::Ptr<{ctype}> {name} = "
                        f"{base}.view<{ctype}>({off or 0});")
            continue
        if _INT_TYPEDEF.match(line):
            lines[i] = ""
    return "\n".join(lines) + _launchers(kernels, clusters, waits)


def _checked_head(m: re.Match[str]) -> str:
    """A kernel's header with its pointer parameters checked (line breaks kept)."""
    params = m.group(2)
    out = []
    for p in params.split(","):
        stripped = p.strip()
        pm = _POINTER_PARAM.match(stripped)
        if pm:
            lead = p[:len(p) - len(p.lstrip())]
            trail = p[len(p.rstrip()):]
            p = f"{lead}::tvm_cuda_emu::GPtr<{pm.group(1)}> {pm.group(2)}{trail}"
        out.append(p)
    text = m.group(0)
    start = m.start(2) - m.start(0)
    return text[:start] + ",".join(out) + text[start + len(params):]


def _launchers(kernels: Mapping[str, Sequence[Sequence[str]]],
               clusters: Mapping[str, tuple[int, ...]], waits: set[str]) -> str:
    out = ["", "// ---- emulator launchers (tvm_backend_cuda.emulator) ----"]
    for name, params in kernels.items():
        cx, cy, cz = clusters.get(name, (1, 1, 1))
        together = "true" if name in waits else "false"
        names = ", ".join(f'"{p[0]}"' for p in params) or '""'
        args = ", ".join(f"::tvm_cuda_emu::Arg{{a, s, names_{name}, {i}}}"
                         for i in range(len(params)))
        out.append(f"""static const char* const names_{name}[] = {{{names}}};
static const uint64_t* sizes_{name} = nullptr;
static void entry_{name}(void** a, const ::tvm_emu::ThreadCtx&) {{
  const uint64_t* s = sizes_{name};
  (void)a; (void)s;
  {name}({args});
  ::tvm_cuda_emu::wgmma_thread_end();
}}
extern "C" int tvm_cuda_emu_launch_{name}(void** args, const uint64_t* sizes,
    const uint32_t* grid, const uint32_t* block, const uint32_t* cluster, int cooperative,
    uint64_t dyn_bytes, int workers,
    uint64_t stack_size, int race_check, char* err, int errlen) {{
  sizes_{name} = sizes;
  ::tvm_emu::LaunchConfig cfg;
  cfg.kernel = "{name}";
  cfg.strict_barriers = true;
  cfg.dynamic_bytes = dyn_bytes;
  cfg.shared_bytes = {SHARED_STATIC_BYTES} + dyn_bytes;
  cfg.stack_size = stack_size;
  cfg.cluster = ::tvm_emu::Dim3{{{cx}u, {cy}u, {cz}u}};  // __cluster_dims__, or the launch's
  if (cluster && cluster[0]) cfg.cluster = ::tvm_emu::Dim3{{cluster[0], cluster[1], cluster[2]}};
  cfg.cooperative = cooperative != 0;
  // a kernel waiting on another block's NVSHMEM signal: its blocks run together if they fit
  const uint64_t nthreads = uint64_t(block[0]) * block[1] * block[2];
  if ({together} && nthreads && uint64_t(grid[0]) * grid[1] * grid[2] <=
      {EMULATED_SMS} * ({THREADS_PER_SM} / nthreads))
    cfg.cooperative = true;
  ::tvm_cuda_emu::install_race_detector(race_check != 0);
  int rc = ::tvm_emu::launch(entry_{name}, args, grid, block, cfg, workers, err, errlen);
  if (rc) return rc;
  return ::tvm_cuda_emu::scan_poison("{name}", args, sizes, names_{name}, {len(params)}, err,
                                     errlen);
}}""")
    return "\n".join(out) + "\n"


@functools.cache
def shim_digest() -> str:
    h = hashlib.sha256(emu.header_digest().encode())
    for path in sorted(EMU_DIR.glob("*.h")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def cxx_command() -> str:
    return os.environ.get("CXX") or "g++"


def flags() -> list[str]:
    # -O1: the emulated test suite is dominated by compiling (-O2 costs 40% more per kernel)
    return ["-std=c++17", "-O1", "-fPIC", "-shared", "-pthread", "-fno-strict-aliasing",
            "-fwrapv", "-w", f"-I{EMU_DIR}", f"-I{emu.HEADER_DIR}", "-include", "tvm_cuda_emu.h"]


def build_key() -> dict[str, Any]:
    """What an emulator build depends on besides the source (its compile cache key)."""
    return {"emulator": shim_digest(), "cxx": get_toolchain(cxx_command()).version,
            "flags": flags()}


def pch_folder() -> Path | None:
    """The folder of ``tvm_cuda_emu.h.gch``, the shim precompiled with :func:`flags` (a third
    of a kernel's compile time is the shim's headers), built on first use under
    ``$TVM_CUDA_EMULATE_PCH_DIR``, else the compile cache's folder; None where it cannot be
    built (the compiler then reads the headers)."""
    root = os.environ.get("TVM_CUDA_EMULATE_PCH_DIR") or str(cache_dir() / "cuda-emu-pch")
    key = hashlib.sha256(repr(build_key()).encode()).hexdigest()[:20]
    return _pch_at(Path(root) / key)


@functools.cache
def _pch_at(folder: Path) -> Path | None:
    gch = folder / "tvm_cuda_emu.h.gch"
    if gch.exists():
        return folder
    toolchain = get_toolchain(cxx_command())
    header_flags = [f for f in flags() if f not in ("-shared", "-include", "tvm_cuda_emu.h")]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f"tmp-{os.getpid()}.gch"
        run_tool([*toolchain.command, *header_flags, "-x", "c++-header",
                  str(EMU_DIR / "tvm_cuda_emu.h"), "-o", str(tmp)],
                 "precompiling the CUDA emulator's header", tool="the C++ compiler")
        os.replace(tmp, gch)  # another process may have built it too: either is the same
    except (OSError, CompileError):
        return None
    return folder


def build(source: str, kernels: Mapping[str, Sequence[Sequence[str]]]) -> bytes:
    """Compile generated CUDA ``source`` for the emulator; the shared object's bytes."""
    text = prepare(source, kernels)
    toolchain = get_toolchain(cxx_command())
    pch = pch_folder()
    # the precompiled header is found first (gcc looks for name.gch in each -I folder)
    extra = [f"-I{pch}"] if pch is not None else []
    try:
        return toolchain.compile_shared(text, extra + flags(),
                                        what="the CUDA source for the emulator", suffix=".cpp")
    except CompileError as err:
        raise CompileError(f"{err.args[0]} (the CUDA emulator's build: a construct of the "
                           "generated code the emulator's shim lacks)", log=err.log,
                           command=err.command) from None


class EmulatedKernel:
    """One kernel of an :class:`EmulatedModule`: ``launch`` as
    :class:`~tvm_backend_cuda.runtime.CudaKernel`'s, on CPU arrays."""

    def __init__(self, module: EmulatedModule, name: str, params: Sequence[Sequence[str]]
                 ) -> None:
        self.module = module
        self.name = name
        self.params = [(str(p[0]), str(p[1])) for p in params]
        self.param_types = [t for _, t in self.params]

    def launch(self, grid: Any, block: Any, args: Sequence[Any], *, shmem: int = 0,
               stream: Any = None, on_device: Any = None, cluster: Any = None,
               cooperative: bool = False) -> None:
        """Launch on CPU arrays, on ``stream`` (:func:`.emulated_streams.launch_stream`: by
        default the current emulated stream; the default stream runs it before this returns,
        a side stream when it gets to it). ``grid`` counts blocks; ``cluster`` (a shape
        dividing it) runs the blocks in clusters, overriding the kernel's ``__cluster_dims__``;
        ``cooperative`` runs every block of the grid together (blocks may wait for each
        other), as many as :data:`EMULATED_SMS` SMs of :data:`THREADS_PER_SM` threads hold."""

        g, b = _dim3(grid, "grid"), _dim3(block, "block")
        c = (0, 0, 0) if cluster is None else _dim3(cluster, "cluster")
        if cooperative:
            check_resident(self.name, g, b)
        optin = shared_optin_bytes()
        if shmem > optin:
            raise ValueError(
                f"kernel {self.name} asks for {shmem} bytes of dynamic shared memory; the CUDA "
                f"emulator's device allows at most {optin} per block")
        if len(args) != len(self.params):
            raise TypeError(f"kernel {self.name!r} takes {len(self.params)} arguments, got "
                            f"{len(args)}")
        arrays: dict[int, Any] = {}
        copy_back: list[tuple[Any, Any]] = []
        scalars: dict[int, Any] = {}
        maps: dict[int, tuple[int, TensorMapArg, Any]] = {}
        encoded: dict[int, bytes] = {}
        for i, ((pname, ptype), value) in enumerate(zip(self.params, args)):
            if ptype == "tensormap" and not isinstance(value, TensorMapArg):
                raw = getattr(getattr(value, "buf", None), "raw", value)  # tensor_map_arg's
                if isinstance(raw, (bytes, bytearray)) and _encoded_map(bytes(raw)) is not None:
                    encoded[i] = bytes(raw)
                    continue
            if ptype == "tensormap":
                if not isinstance(value, TensorMapArg):
                    given = ("128 bytes that are not the emulator's record of a map (one the "
                             "CUDA driver encoded?)" if hasattr(value, "buf")
                             else f"a {type(value).__name__}")
                    raise NotModelledError(
                        f"kernel {self.name!r}: parameter {pname!r} is given a tensor map: "
                        f"{given}; the CUDA emulator runs the maps a launch derives from arrays "
                        "and its own encoded ones: encode it for the CPU array with "
                        "runtime.encode_tiled_tensor_map(..., emulated=True) and pass those "
                        "bytes (as bytes, a numpy array or a CUtensorMap's opaque words)")
                arr, back = _host_array(value.array, pname, self.name)
                key = next((j for j, a in arrays.items() if a.ctypes.data == arr.ctypes.data
                            and a.nbytes == arr.nbytes), None)
                if key is None:  # staged like a pointer argument (shared with one of the same)
                    key = len(args) + i
                    arrays[key] = arr
                    if back is not None:
                        copy_back.append((back, arr))
                value.record(arr, 0)  # what TMA cannot address fails here, not in the launch
                value.check_address(arr)
                maps[i] = (key, value, arr)
            elif ptype == "ptr":
                arr, back = _host_array(value, pname, self.name, i)
                arrays[i] = arr
                if back is not None:
                    copy_back.append((back, arr))
            elif ptype in _SCALAR_CTYPES:
                scalars[i] = _scalar(ptype, value, pname, i, self.name)
            else:
                raise NotModelledError(f"kernel {self.name!r}: parameter {pname!r} of type "
                                       f"{ptype!r} is not modelled by the CUDA emulator")
        rebase = self._stage_encoded(encoded, arrays, copy_back, len(args))
        sizes = (ctypes.c_uint64 * max(len(args), 1))()
        for i, arr in arrays.items():
            if i < len(args):
                sizes[i] = arr.nbytes
        fn = self.module.function(self.name)
        workers = self.module.workers

        def launch(pointers: dict[int, int]) -> None:
            ptrs = (ctypes.c_void_p * max(len(args), 1))()
            records = []
            for i in range(len(args)):
                if i in maps:
                    key, tmap, arr = maps[i]
                    holder = ctypes.create_string_buffer(192)  # a CUtensorMap is 64-byte aligned
                    at = (ctypes.addressof(holder) + 63) // 64 * 64
                    ctypes.memmove(at, tmap.record(arr, pointers[key]), 128)
                    records.append(holder)
                    ptrs[i] = at
                elif i in encoded:  # the caller's record, pointed at the staged bytes
                    key, offset = rebase[i]
                    record = bytearray(encoded[i])
                    struct.pack_into("<Q", record, 16, pointers[key] + offset)
                    holder = ctypes.create_string_buffer(192)
                    at = (ctypes.addressof(holder) + 63) // 64 * 64
                    ctypes.memmove(at, bytes(record), 128)
                    records.append(holder)
                    ptrs[i] = at
                else:
                    ptrs[i] = pointers[i] if i in pointers else ctypes.addressof(scalars[i])
            err = ctypes.create_string_buffer(4096)
            rc = fn(ptrs, sizes, (ctypes.c_uint32 * 3)(*g), (ctypes.c_uint32 * 3)(*b),
                    (ctypes.c_uint32 * 3)(*c), int(bool(cooperative)), int(shmem), workers, _DEFAULT_STACK, int(self.module.race_check), err,
                    len(err))
            emu.raise_for(rc, err.value.decode(errors="replace"), "CUDA emulator: ")

        isolate = self.module.isolate

        def run() -> None:  # the launch, when its stream reaches it
            if isolate:
                emu.run_isolated(launch, arrays, what=f"CUDA emulator: kernel {self.name!r}")
            else:
                launch({i: int(a.ctypes.data) for i, a in arrays.items()})
            for original, arr in copy_back:
                original[...] = arr

        _streams.launch_stream(stream).submit(run)


    @staticmethod
    def _stage_encoded(encoded: Mapping[int, bytes], arrays: dict[int, Any],
                       copy_back: list[tuple[Any, Any]], nargs: int
                       ) -> dict[int, tuple[int, int]]:
        """Stage the bytes each caller-encoded map spans: inside an array argument, that
        argument's copy; else a copy of its own. Returns, per map argument, (staged array
        key, the map's offset in it)."""
        import numpy as np

        rebase: dict[int, tuple[int, int]] = {}
        for i, data in encoded.items():
            base, extent = _encoded_map(data) or (0, 0)
            for key, arr in arrays.items():
                start = int(arr.ctypes.data)
                if start <= base and base + extent <= start + arr.nbytes:
                    rebase[i] = (key, base - start)
                    break
            else:
                view = np.ctypeslib.as_array((ctypes.c_uint8 * max(extent, 1)).from_address(base))
                key = 2 * nargs + i
                arrays[key] = staged = view.copy()
                copy_back.append((view, staged))
                rebase[i] = (key, 0)
        return rebase


class EmulatedModule:
    """The emulator's shared object, with one :class:`EmulatedKernel` per kernel."""

    def __init__(self, library: str | os.PathLike[str], kernels: Mapping[str, Any], *,
                 arch: str | None = None) -> None:
        self.path = str(library)
        #: the arch the code was built for (None: any), checked against the emulated device's
        #: when the module loads, as :class:`~tvm_backend_cuda.runtime.CudaModule` checks it
        self.arch = arch
        self.kernels = {name: [tuple(p) for p in k["params"]] for name, k in kernels.items()}
        self._lib: Any = None
        self._functions: dict[str, Any] = {}
        self.workers = max(1, min(os.cpu_count() or 1, 8))
        self.isolate = os.environ.get("TVM_CUDA_EMULATE_ISOLATE", "1") != "0"
        # the shared-memory race detector (on unless TVM_CUDA_EMULATE_RACECHECK=0)
        self.race_check = os.environ.get("TVM_CUDA_EMULATE_RACECHECK", "1") != "0"

    def function(self, name: str) -> Any:
        fn = self._functions.get(name)
        if fn is None:
            if self._lib is None:
                check_arch(self.arch, 0, *device_capability())
                self._lib = ctypes.CDLL(self.path)
            fn = getattr(self._lib, f"tvm_cuda_emu_launch_{name}")
            fn.restype = ctypes.c_int
            fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64, ctypes.c_int, ctypes.c_uint64, ctypes.c_int,
                           ctypes.c_char_p, ctypes.c_int]
            self._functions[name] = fn
        return fn

    def launch(self, name: str, grid: Any, block: Any, args: Sequence[Any], *, shmem: int = 0,
               stream: Any = None, cluster: Any = None, cooperative: bool = False,
               **_: Any) -> None:
        """Launch kernel ``name`` (as :meth:`CudaModule.launch`), on ``stream``
        (:func:`.emulated_streams.launch_stream`)."""
        self.get_kernel(name).launch(grid, block, args, shmem=shmem, stream=stream,
                                     cluster=cluster, cooperative=cooperative)

    def synchronize(self) -> None:
        """Wait for the work of every emulated stream (:func:`.emulated_streams.synchronize`)."""
        _streams.synchronize()

    def get_kernel(self, name: str) -> EmulatedKernel:
        if name not in self.kernels:
            raise KeyError(f"no kernel {name!r} in this module; kernels: {sorted(self.kernels)}")
        return EmulatedKernel(self, name, self.kernels[name])


def check_resident(name: str, grid: Sequence[int], block: Sequence[int]) -> None:
    """Refuse a cooperative launch whose blocks cannot all be resident on the emulated device
    (the ValueError the GPU's residency check raises)."""
    nblocks = int(grid[0]) * int(grid[1]) * int(grid[2])
    nthreads = int(block[0]) * int(block[1]) * int(block[2])
    per_sm = THREADS_PER_SM // max(nthreads, 1)
    if nblocks > per_sm * EMULATED_SMS:
        raise ValueError(
            f"collective launch of {name}: {nblocks} blocks of {nthreads} threads cannot all be "
            f"resident on the CUDA emulator's device ({per_sm} per SM x {EMULATED_SMS} SMs = "
            f"{per_sm * EMULATED_SMS}); a cross-block wait in the kernel would deadlock. Use "
            "fewer blocks")


def _dim3(v: Any, what: str) -> tuple[int, int, int]:
    dims = (int(v),) if isinstance(v, int) else tuple(int(x) for x in v)
    if not 1 <= len(dims) <= 3 or any(d < 0 for d in dims):
        raise ValueError(f"{what} must be 1 to 3 non-negative ints, got {v!r}")
    return (*dims, *(1,) * (3 - len(dims)))  # type: ignore[return-value]


def load_source(source: str,
                signatures: Sequence[str] | Mapping[str, Sequence[Any] | None], *,
                arch: str | None = None) -> EmulatedModule:
    """An :class:`EmulatedModule` of hand-written CUDA ``source`` (the emulator's counterpart of
    ``CudaModule(compile_cuda(source, arch), signatures)``): ``signatures`` maps each kernel to
    its parameters, ``(name, type)`` pairs or types alone, type ``ptr``, ``tensormap`` or a
    scalar dtype; a kernel mapped to None, or given by name alone (a list of names, as
    ``CudaModule`` takes), has the parameters of its declaration in ``source``
    (:func:`.emulator_params.source_params`). ``arch``, the arch it is built for (None: the
    emulated device's), is checked when it first launches."""
    specs = _signatures(source, signatures)
    data = build(source, specs)
    folder = work_folder("tvm-cuda-emu-")
    path = folder / "module.so"
    path.write_bytes(data)
    return EmulatedModule(path, {k: {"params": [list(p) for p in v]} for k, v in specs.items()},
                          arch=arch)
