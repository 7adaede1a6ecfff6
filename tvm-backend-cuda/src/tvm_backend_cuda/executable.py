"""The CUDA backend's build contract and executable: codegen -> NVRTC cubin -> launches.

:class:`CudaBuilder` is what ``tvm_builders`` returns for kind ``cuda``: ``codegen`` prints CUDA
C++ (:mod:`.codegen`) and derives each host function's :class:`~tvm.runtime.launch_plan.LaunchPlan`;
``compile`` runs NVRTC (and nvJitLink for NVSHMEM kernels, :mod:`.nvshmem`); ``load`` makes a
:class:`CudaExecutable`. Core caches the cubins (``TVM_CACHE=0``, ``TVM_CACHE_DIR`` apply), dumps
the stages and writes/reads exported files. Building needs no GPU and no driver (NVRTC from the
wheel): ``tvm.compile(f, target="nvidia/nvidia-h100")`` works on a CPU-only machine; calling the
result there raises :class:`~tvm_backend_cuda.runtime.CudaDeviceUnavailable`.

A call runs the host function from its launch plan without generating host code: core's
argument checks, launch sizes evaluated from the argument values, kernels launched in order
through :class:`tvm_backend_cuda.runtime.CudaModule` on the current torch stream when the arrays
are torch tensors.

Once a call has loaded the kernels, a function whose shapes and launch sizes are constant gets a
fast call (:func:`.fast_call.make_fast_call`) built from that plan: it accepts exactly what core's checks
accept from plain torch tensors and Python scalars (anything else goes to the full path, which
raises core's errors), checking the tensors with one call of torch's C++ tensor guard where
torch has one, then launches with a launch config made once. Host time per call against a bare
``cuda.core.launch``: ``docs/perf.md`` (bench/cuda_launch_overhead.py).
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from tvm.backend.sdk import (
    ARRAY,
    ArgumentChecker,
    Artifact,
    Binary,
    Builder,
    Executable,
    LaunchPlan,
    Options,
    evaluate_tree,
    function_signature,
    launch_plans,
    option,
)
from tvm.error import TVMError
from tvm.ir.function import IRModule
from tvm.target import Target

from . import compiler as _compiler
from . import emulator as _emulator
from . import fast_call as _fc
from . import nvshmem as _nvshmem
from . import runtime as rt
from .codegen import generate_cuda
from .fast_call import (
    _TORCH_TENSOR_TYPES,
    _cai_pointer,
    _dims,
    _Launch,
    _torch_dtypes,
    _torch_tensor_type,
)
from .tags import validate_arch

__all__ = ["DEFAULT_ARCH", "EMULATED_ARCH", "CudaBuilder", "CudaExecutable", "CudaFunction", "CudaOptions",
           "EmulatedCudaExecutable", "default_arch", "emulating"]

GRID_CONSTANT = "grid_constant"  # ptr_scope of a T.TensorMap parameter (codegen.GRID_CONSTANT)
TENSOR_MAP = "tensormap"  # its parameter kind (codegen.TENSOR_MAP, runtime.TENSOR_MAP)


# -- build ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CudaOptions(Options):
    """Compile options of target kind ``cuda`` (``tvm.compile(f, "cuda", arch="sm_90a")``)."""

    arch: str | None = option(None, "the SM arch to compile for (default: the target's, else "
                                    "the GPU's, else sm_80)")
    options: tuple[str, ...] = option((), "extra NVRTC options, e.g. ('-lineinfo', "
                                          "'--use_fast_math')")
    emulate: bool | None = option(None, "run the generated CUDA on the CPU (the CUDA emulator: "
                                        "CPU arrays, bounds and barrier checks); default: "
                                        "$TVM_CUDA_EMULATE=1")


def emulating(options: CudaOptions) -> bool:
    """Whether a build with ``options`` targets the CPU emulator (``emulate=``, else
    ``$TVM_CUDA_EMULATE``)."""
    if options.emulate is not None:
        return bool(options.emulate)
    return os.environ.get("TVM_CUDA_EMULATE", "").strip().lower() in ("1", "true", "yes", "on")


class CudaBuilder(Builder):
    """Kind ``cuda``: CUDA C++ compiled by NVRTC to a cubin, launched with cuda.core."""

    kind = "cuda"
    options_type = CudaOptions
    language = "cu"
    binary_suffix = "cubin"
    format = 2

    def codegen(self, mod: IRModule, target: Any, options: CudaOptions) -> Artifact:
        emulate = emulating(options)
        # the target's, settled by resolve_target (the same as options.arch, except where an
        # emulated build replaced the arch resolved for this machine)
        arch = validate_arch(str(target.attrs.get("arch") or options.arch
                                 or default_arch(target, emulate)))
        source, kernels = generate_cuda(mod, target, emulate=emulate)
        plans = launch_plans(mod, "cuda", target_name="cuda")
        extra: dict[str, Any] = {}
        if emulate:  # what inspect_source() shows: the kernels as a GPU build would have them
            extra["gpu_source"] = generate_cuda(mod, target)[0]
        return Artifact(source, {
            **extra,
            "format": self.format,
            "emulate": emulate,
            "arch": arch,
            "kernels": {k.name: {"params": [[p.name, _kernel_param_type(p)] for p in k.info.params],
                                 "vector_align": k.vector_align} for k in kernels},
            "plans": {p.name: p.to_dict() for p in plans},
            "tensor_maps": _tensor_map_params(mod),
        })

    def resolve_target(self, target: Any, options: CudaOptions | None = None) -> Any:
        """``target`` with its arch settled before lowering: ``arch=`` if given, else the
        target's, else the GPU's in this process (``sm_90a`` on compute capability 9.0), else
        :data:`DEFAULT_ARCH`; for the emulator, the emulated device's in place of the GPU's.
        Dispatch and codegen then see the same arch."""
        emulate = emulating(options if options is not None else CudaOptions())
        arch = validate_arch(str((options.arch if options is not None else None)
                                 or default_arch(target, emulate)))
        if target.attrs.get("arch") == arch:
            return target
        config = target.export()
        if config.get("arch"):  # arch= overrides what the tag says: not that tag any more
            config.pop("tag", None)
        config["arch"] = arch
        return Target(config)

    def compile_key(self, artifact: Artifact, options: CudaOptions) -> Any:
        if artifact.metadata.get("emulate"):
            return _emulator.build_key()
        return _nvshmem.toolchain_key(artifact.source)

    def compile(self, artifact: Artifact, options: CudaOptions) -> tuple[bytes, dict[str, Any]]:
        if artifact.metadata.get("emulate"):
            kernels = {k: v["params"] for k, v in artifact.metadata["kernels"].items()}
            return _emulator.build(artifact.source, kernels), {}
        # kernels that call NVSHMEM are compiled relocatable and linked with its device library
        compiled = _nvshmem.compile_auto(artifact.source, artifact.metadata["arch"],
                                         options=options.options, cache=False)
        return compiled.cubin, {"nvrtc_options": list(compiled.options), "nvrtc_log": compiled.log}

    def load(self, binary: Binary, metadata: Mapping[str, Any], target: Any) -> CudaExecutable:
        if int(metadata.get("format", 0)) != self.format:
            raise TVMError(f"this CUDA executable has format {metadata.get('format')}; this "
                           f"tvm-backend-cuda reads {self.format}: compile it again")
        if metadata.get("emulate"):
            return EmulatedCudaExecutable(target, binary, metadata)
        return CudaExecutable(target, binary, metadata)


@functools.lru_cache(maxsize=1)
def _device_arch() -> str | None:
    if not rt.has_cuda_device():
        return None
    from cuda.bindings import driver

    attr = driver.CUdevice_attribute
    _, major = driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0)
    _, minor = driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0)
    num = int(major) * 10 + int(minor)
    return f"sm_{num}a" if num >= 90 else f"sm_{num}"


DEFAULT_ARCH = "sm_80"  # target "cuda" on a machine without a GPU
#: the emulated device's arch unless ``$TVM_CUDA_EMULATE_ARCH`` says otherwise (the emulator's)
EMULATED_ARCH = _emulator.EMULATED_ARCH


def default_arch(target: Any, emulate: bool | None = None) -> str:
    """The arch a build for ``target`` uses: the target's ``arch``, else the emulated device's
    for the emulator (``emulate``; None: ``$TVM_CUDA_EMULATE``; :func:`.emulator.device_arch`,
    :data:`EMULATED_ARCH` by default), else device 0's (with the arch-specific suffix:
    ``sm_90a``, ``sm_100a``), else :data:`DEFAULT_ARCH`."""
    arch = target.attrs.get("arch")
    if arch:
        return str(arch)
    if emulating(CudaOptions()) if emulate is None else emulate:
        return _emulator.device_arch()
    return _device_arch() or DEFAULT_ARCH


def _kernel_param_type(p: Any) -> str:
    """A kernel parameter's type for the runtime: ``ptr``, ``tensormap`` or a scalar dtype."""
    if p.kind == TENSOR_MAP:
        return TENSOR_MAP
    return "ptr" if p.kind in ("buffer", "handle") else p.dtype


def _tensor_map_params(mod: IRModule) -> dict[str, list[int]]:
    """Per host function, the indices of its ``T.TensorMap`` parameters (passed by value)."""
    out: dict[str, list[int]] = {}
    for name, func in mod.functions.items():
        if not func.attrs.get("tirx.is_host"):
            continue
        found = [i for i, s in enumerate(function_signature(func))
                 if s.kind == "scalar" and s.var is not None and s.var.ptr_scope == GRID_CONSTANT]
        if found:
            out[str(func.attrs.get("global_symbol", name))] = found
    return out


# -- calling ---------------------------------------------------------------------------------------


class _CallsItsCall:
    """Called through the instance's ``_call``: ``__call__`` is a property C code reads
    (attrgetter), so that a call runs ``_call`` with no Python frame of its own in between, the
    generated call of ``fast_call._single_launch_call`` once prepared (issue 21's launch
    budget). ``obj(*args, stream=None)`` runs on device arrays and scalars, asynchronously on
    ``stream`` or, by default, the caller's current torch stream (cuda.core's default stream
    where torch is not imported): :func:`~.runtime.launch_stream`."""

    if TYPE_CHECKING:
        def __call__(self, *args: Any, stream: Any = None) -> Any: ...
    else:
        __call__ = property(attrgetter("_call"))


class CudaFunction(_CallsItsCall):
    """One host function of a :class:`CudaExecutable`, callable on device arrays:
    ``f(*arrays_and_scalars, stream=None)`` (the stream rule: :func:`~.runtime.launch_stream`)."""

    def __init__(self, exe: CudaExecutable, plan: LaunchPlan, tensor_maps: Sequence[int] = ()
                 ) -> None:
        self.name = plan.name
        self.plan = plan
        self._exe = exe
        self.specs = plan.signature.params
        self._checker = ArgumentChecker(plan.signature)
        # indices of T.TensorMap parameters: checked here, passed by value
        self._tensor_maps: tuple[int, ...] = tuple(tensor_maps)
        self._launches: list[_Launch] | None = None
        self._fast: list[tuple[int, str, tuple[int, ...]]] | None = self._fast_plan()
        self._align = self._alignment_plan(exe.meta["kernels"])
        self._buffers = tuple(i for i, s in enumerate(self.specs) if s.kind == "buffer")
        # None: not prepared yet (after the first full call); False: not applicable
        self._fast_plan_torch: Any = None
        # the prepared fast call ((args, stream) -> launched?), see fast_call.make_fast_call
        self._fast_call: Callable[[Sequence[Any], Any], bool] | None = None
        # what a call of this object runs (``__call__`` reads it): the checked call, replaced
        # by the generated one once prepared (fast_call._single_launch_call)
        self._call: Callable[..., None] = self._checked_call

    def _fast_plan(self) -> list[tuple[int, str, tuple[int, ...]]] | None:
        """(index, dtype, shape) of every buffer when all shapes are constant and arrays are
        contiguous: then a torch tensor is checked with a few attribute reads."""
        plan = []
        for i, s in enumerate(self.specs):
            if s.kind != "buffer":
                continue
            if s.strides or not all(isinstance(d, int) for d in s.shape):
                return None
            plan.append((i, s.dtype, tuple(d for d in s.shape if isinstance(d, int))))
        return plan

    def _alignment_plan(self, kernels: Mapping[str, Any]) -> list[tuple[int, int]]:
        out: dict[int, int] = {}
        for step in self.plan.steps:
            need = kernels[step.kernel].get("vector_align", {})
            params = kernels[step.kernel]["params"]
            for (pname, _), ref in zip(params, step.args):
                if ref[0] == ARRAY and pname in need:
                    out[ref[1]] = max(out.get(ref[1], 0), int(need[pname]))
        return sorted(out.items())

    def _build_launches(self) -> list[_Launch]:
        kernels = self._exe.module()
        return [_Launch(step, kernels.get_kernel(step.kernel)) for step in self.plan.steps]

    # -- argument checks ------------------------------------------------------------------------
    def _check(self, args: Sequence[Any]) -> dict[str, Any]:
        fast = self._fast
        # a shortcut for torch tensors of static shape; scalars always get core's checks (type,
        # range), so only functions without any take it
        if fast is not None and len(fast) == len(self.specs) == len(args):
            torch_dtypes = _torch_dtypes()
            for i, dtype, shape in fast:
                a = args[i]
                if (type(a) not in _TORCH_TENSOR_TYPES or a.dtype is not torch_dtypes.get(dtype)
                        or a.shape != shape or not a.is_cuda or not a.is_contiguous()):
                    break
            else:
                return {}
        return self._checker(args)

    def _tensor_map_args(self, args: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        """(args with each tensor map converted for the launch, args for core's check)."""
        launch_args, check_args = list(args), list(args)
        if len(args) != len(self.specs):
            return launch_args, check_args  # core's check names the count
        for i in self._tensor_maps:
            try:
                launch_args[i] = rt.tensor_map_arg(args[i])
            except TypeError as e:
                raise TypeError(f"{self.name}: argument {self.specs[i].name!r}: {e}") from None
            check_args[i] = None
        return launch_args, check_args

    def _check_alignment(self, args: Sequence[Any]) -> None:
        for i, align in self._align:
            a = args[i]
            ptr = a.data_ptr() if hasattr(a, "data_ptr") else _cai_pointer(a)
            if ptr is not None and ptr % align:
                raise ValueError(f"{self.name}: argument {self.specs[i].name!r} starts at address "
                                 f"{ptr:#x}, which is not {align}-byte aligned; the kernel reads "
                                 f"it with vector loads. Pass an aligned (e.g. freshly allocated "
                                 f"or .clone()d) array")

    def _device_of(self, args: Sequence[Any]) -> int | None:
        """The CUDA device of the first array argument (None for raw pointers)."""
        for i in self._buffers:
            try:
                _, dev, _ = rt._pointer(args[i], i, self.specs[i].name)
            except (TypeError, ValueError):
                continue  # the launch names the problem
            if dev >= 0:
                return dev
        return None

    def _derive(self, ref: tuple[int, str, tuple[Any, ...]], args: Sequence[Any]) -> Any:
        index, kind, params = ref
        return rt.derive(kind, args[index], params,
                         what=f"{self.name}: argument {self.specs[index].name!r}")

    # -- the fast path: torch tensors, static shapes and launch sizes -----------------------------
    def _prepare_fast(self, args: Sequence[Any] | None = None) -> Any:
        """Build the fast call once a full call (of ``args``) has loaded the kernels; mark it not
        applicable (False) for good when the function does not fit it."""
        dtypes = _torch_dtypes()
        if self._launches is None or not dtypes:
            return False  # not yet: no call has loaded the kernels, or no torch
        self._fast_plan_torch = False
        if self._fast is None or not all(x.static for x in self._launches):
            return False
        shapes = {i: shape for i, _, shape in self._fast}
        plan: list[tuple[int, Any, Any]] = []
        for i, spec in enumerate(self.specs):
            if spec.kind == "buffer":
                tdt = dtypes.get(spec.dtype)
                if tdt is None:
                    return False
                plan.append((_fc.BUF, tdt, shapes[i]))
            else:
                kind = _fc.SCALAR_KINDS.get(spec.dtype)
                if kind is None:
                    return False  # handles and the like: the full path
                plan.append((kind, None, None))
        launches = []
        for launch in self._launches:
            prepared = _fc.prepare_launch(launch, self.specs)
            if prepared is None:
                return False
            launches.append(prepared)
        self._fast_call = _fc.make_fast_call(tuple(plan), tuple(self._align), launches,
                                          _torch_tensor_type(), self.specs, self.name,
                                          full=self._full_call)
        self._fast_plan_torch = plan
        direct = getattr(self._fast_call, "direct", None)
        if direct is not None:
            # the hot call when the full call's tensors fit it (see fast_call._single_launch_call)
            hot = self._fast_call.hot(args) if args is not None else None  # type: ignore[attr-defined]
            self._call = hot or direct
            if self._exe._entry is self:
                self._exe._call = self._call
        return plan

    # -- call -----------------------------------------------------------------------------------
    def _checked_call(self, *args: Any, stream: Any = None) -> None:
        fast = self._fast_call
        if fast is not None and fast(args, stream):
            return
        self._full_call(args, stream)

    def _full_call(self, args: Sequence[Any], stream: Any = None) -> None:
        """Core's argument checks (their errors), launch dimensions evaluated from the values,
        launches through :class:`~tvm_backend_cuda.runtime.CudaKernel` on the stream of
        :func:`~tvm_backend_cuda.runtime.launch_stream`."""
        plan = self.launch_plan(args)
        device = self._device_of(args)
        for kernel, grid, block, smem, kargs in plan:
            kernel.launch(grid, block, kargs, shmem=smem, stream=stream, on_device=device)
        if self._fast_plan_torch is None:
            self._prepare_fast(args)

    def launch_plan(self, args: Sequence[Any]) -> list[tuple[Any, Any, Any, int, list[Any]]]:
        """What a call with ``args`` launches, after the same checks: per kernel launch, in
        order, ``(CudaKernel, grid, block, dynamic shared bytes, kernel arguments)`` (derived
        tensor maps encoded). For callers that launch themselves (``NvshmemContext.run``
        launches cooperatively)."""
        exe = self._exe
        if not exe.device_ready():
            raise rt.CudaDeviceUnavailable(
                f"no CUDA device is present: {rt.no_device_reason()}. This executable was "
                f"compiled for {exe.arch} (compiling needs no GPU); run it on a machine with an "
                "NVIDIA GPU and driver")
        if self._tensor_maps:
            args, checked = self._tensor_map_args(args)
            values = self._check(checked)
        else:
            values = self._check(args)
        if self._align:
            self._check_alignment(args)
        launches = self._launches
        if launches is None:
            launches = self._launches = self._build_launches()
        scalars = self._scalar_names
        plan = []
        for launch in launches:
            kargs = [evaluate_tree(ref, values) if kind == "tree" else
                     self._derive(ref, args) if kind == "derived" else
                     values.get(scalars[ref], args[ref]) if ref in scalars else args[ref]
                     for kind, ref in launch.args]
            if launch.static:
                grid, block, smem = launch.grid, launch.block, launch.smem
            else:
                grid, block, smem = _dims(launch, values)
            plan.append((launch.kernel, grid, block, smem, kargs))
        return plan

    @functools.cached_property
    def _scalar_names(self) -> dict[int, str]:
        """Scalar parameters by index -> the name their checked value is bound to."""
        return {i: s.var for i, s in enumerate(self.specs)
                if s.kind == "scalar" and s.var is not None}

    def __repr__(self) -> str:
        params = ", ".join(f"{s.name}: {s.dtype}" for s in self.specs)
        return f"<CudaFunction {self.name}({params})>"


class CudaExecutable(_CallsItsCall, Executable):
    """CUDA source + cubin + the host functions' launch plans. Callable on device arrays."""

    backend = "cuda"
    #: the class of its host functions (:meth:`get_function`)
    function_type: type[CudaFunction] = CudaFunction

    def __init__(self, target: Any, binary: Binary, metadata: Mapping[str, Any]) -> None:
        plans = [LaunchPlan.from_dict(p) for p in metadata["plans"].values()]
        super().__init__(target, [p.name for p in plans], binary=binary, metadata=metadata)
        self.plans = {p.name: p for p in plans}
        self.arch = str(metadata["arch"])
        self.nvrtc_options = list(metadata.get("nvrtc_options", ()))
        self._module: Any = None
        self._functions: dict[str, CudaFunction] = {}
        self._device_ok: bool | None = None
        self._entry: CudaFunction | None = None
        # what a call of the executable runs (``__call__`` reads it): the entry function's
        # call once the entry is known
        self._call: Callable[..., Any] = self._call_entry

    @property
    def meta(self) -> dict[str, Any]:
        """The build metadata (kernels, launch plans, arch, NVRTC options)."""
        return self.metadata

    @property
    def source(self) -> str:
        return self.inspect_source()

    @property
    def cubin(self) -> bytes:
        return bytes(self.binary.data)

    @property
    def kernel_names(self) -> list[str]:
        return list(self.meta["kernels"])

    def device_ready(self) -> bool:
        ok = self._device_ok
        if ok is None:
            ok = self._device_ok = rt.has_cuda_device()
        return ok

    def module(self) -> Any:
        """The :class:`~tvm_backend_cuda.runtime.CudaModule` of the cubin (made on first use); an
        :class:`~tvm_backend_cuda.nvshmem.NvshmemModule` when the source calls NVSHMEM."""
        if self._module is None:
            specs = {name: [tuple(p) for p in k["params"]] for name, k in self.meta["kernels"].items()}
            # NVSHMEM kernels: bound to this process's NvshmemContext when first loaded
            nvshmem = _nvshmem.uses_nvshmem(self.source)
            cls = _nvshmem.NvshmemModule if nvshmem else rt.CudaModule
            self._module = cls(self.cubin, specs, arch=self.arch)
        return self._module

    def get_function(self, name: str) -> CudaFunction:
        func = self._functions.get(name)
        if func is not None:
            return func
        plan = self.plans.get(name)
        if plan is None:
            raise self._no_function(name)
        tensor_maps = self.meta.get("tensor_maps", {}).get(name, ())
        func = self._functions[name] = self.function_type(self, plan, tensor_maps)
        return func

    def _call_entry(self, *args: Any, stream: Any = None) -> Any:
        func = self._entry
        if func is None:
            func = self._entry = self.get_function(self.entry_name)
        func._call(*args, stream=stream)
        self._call = func._call
        return None

    def inspect_source(self, kind: str = "") -> str:
        """``""``/``"cuda"``: the CUDA C++; ``"ptx"``: PTX for this arch (compiled now)."""
        if kind in ("", "cuda", "cu"):
            return str(self.metadata.get("source", ""))
        if kind == "ptx":
            return _compiler.compile_ptx(self.source, self.arch)
        raise ValueError(f"unknown source kind {kind!r}: use 'cuda' or 'ptx'")


# -- the CPU emulator ------------------------------------------------------------------------------


class EmulatedCudaFunction(CudaFunction):
    """A host function of an :class:`EmulatedCudaExecutable`: the GPU's argument checks and
    launch plan, on CPU arrays (numpy, CPU torch tensors, DLPack), every launch on the CPU."""

    def __init__(self, exe: CudaExecutable, plan: LaunchPlan, tensor_maps: Sequence[int] = ()
                 ) -> None:
        super().__init__(exe, plan, tensor_maps)
        self._checker = ArgumentChecker(dataclasses.replace(plan.signature, device="cpu"))
        self._fast = None  # the fast path is for CUDA torch tensors
        self._fast_plan_torch = False

    def _device_of(self, args: Sequence[Any]) -> int | None:
        return None

    def _derive(self, ref: tuple[int, str, tuple[Any, ...]], args: Sequence[Any]) -> Any:
        index, kind, params = ref
        if kind == rt.TENSOR_MAP_KIND:  # the emulator's map, filled in at the launch
            return _emulator.TensorMapArg(
                args[index], params, what=f"{self.name}: argument {self.specs[index].name!r}")
        return super()._derive(ref, args)


class EmulatedCudaExecutable(CudaExecutable):
    """The generated CUDA compiled for the CPU emulator (:mod:`.emulator`):
    ``tvm.compile(f, "cuda", emulate=True)`` or ``TVM_CUDA_EMULATE=1``. Called like the GPU
    executable, with CPU arrays; runs synchronously."""

    function_type = EmulatedCudaFunction

    def device_ready(self) -> bool:
        return True

    @property
    def emulated(self) -> bool:
        return True

    def module(self) -> Any:
        if self._module is None:
            self._module = _emulator.EmulatedModule(self.binary.file(), self.meta["kernels"],
                                                    arch=self.arch)
        return self._module

    def inspect_source(self, kind: str = "") -> str:
        """``""``/``"cuda"``: the CUDA C++ a GPU build of the same module compiles (inline PTX,
        as on the device); ``"emulated"``: the CUDA C++ the emulator compiles (intrinsics as
        their emulation bodies); ``"emulator"``: that source as the emulator rewrites it
        (checked pointers; its line numbers are those of the emulator's reports); ``"ptx"``:
        the PTX of the GPU source."""
        emulated = str(self.metadata.get("source", ""))  # what the emulator compiled
        if kind == "emulator":
            kernels = {k: v["params"] for k, v in self.meta["kernels"].items()}
            return _emulator.prepare(emulated, kernels)
        if kind == "emulated":
            return emulated
        gpu = self.metadata.get("gpu_source")
        if kind in ("", "cuda", "cu") and gpu is not None:
            return str(gpu)
        if kind == "ptx" and gpu is not None:
            return _compiler.compile_ptx(str(gpu), self.arch)
        return super().inspect_source(kind)
