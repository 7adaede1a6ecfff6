"""The ready callables on torch tensors: argument checks, one compile per (kernel, shape, dtype,
arch, options) kept in memory, the tuned configuration, and the launch on torch's current
stream (the executable's stream rule).

Where the kernels run is where the tensors are: CUDA tensors on their GPU; CPU tensors under the
CUDA emulator when emulation is on (``TVM_CUDA_EMULATE=1``), the same generated CUDA built for
the emulated device's arch (``$TVM_CUDA_EMULATE_ARCH``, sm_90a by default) with the untuned
defaults (docs/decisions.md, "The kernel library under the CUDA emulator")."""

from __future__ import annotations

import functools
import statistics
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import tvm
from tvm import autotune

from .. import __version__ as _backend_version
from .. import emulator as _emulator
from ..executable import CudaOptions, emulating
from ..plugin import register_backend

#: executables by (kernel, factory arguments, options, arch)
_EXES: dict[tuple[Any, ...], Any] = {}
_LOCK = threading.Lock()
#: one-element float32 device tensors of Python float scales, by (value, device)
_SCALES: dict[tuple[float, Any], Any] = {}
SETUP = "tvm_backend_cuda.plugin:register_backend"
#: the SM count the emulated kernels' persistent grids assume (an H200's)
EMULATED_SMS = 132


def torch_module() -> Any:
    try:
        import torch
    except ImportError:
        raise ImportError("tvm_backend_cuda.kernels: the ready callables take torch tensors; "
                          "pip install torch (the factories *_func need no torch)") from None
    return torch


def dtype_name(t: Any) -> str:
    return str(t.dtype).removeprefix("torch.")


def check_tensor(where: str, name: str, t: Any, dtypes: Sequence[str], ndim: int | None = None
                 ) -> None:
    torch = torch_module()
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{where}: {name} must be a torch tensor, got {type(t).__name__}")
    if dtype_name(t) not in dtypes:
        raise ValueError(f"{where}: {name} has dtype {t.dtype}; supported: "
                         f"{', '.join(dtypes)}")
    if ndim is not None and t.dim() != ndim:
        raise ValueError(f"{where}: {name} must be {ndim}-d, got shape {tuple(t.shape)}")


def emulation_on() -> bool:
    """Whether CPU tensors run under the CUDA emulator (``TVM_CUDA_EMULATE=1``: the switch that
    makes every ``cuda`` build an emulated one)."""
    return emulating(CudaOptions())


def same_device(where: str, **tensors: Any) -> None:
    """Every tensor given (None: absent) is on CUDA (or, with emulation on, on the CPU), all on
    the first one's device. Called after the dtype and shape checks, so that those answer
    wherever the tensors are."""
    ref = None
    for name, t in tensors.items():
        if t is None:
            continue
        if t.device.type != "cuda" and not (t.device.type == "cpu" and emulation_on()):
            raise ValueError(f"{where}: {name} is on {t.device}; these kernels run on CUDA "
                             f"devices (move it with .cuda()), or on CPU tensors under the "
                             f"CUDA emulator with TVM_CUDA_EMULATE=1")
        if ref is None:
            ref = t
        elif t.device != ref.device:
            raise ValueError(f"{where}: {name} is on {t.device}, the other arguments on "
                             f"{ref.device}")


@functools.cache
def device_arch(index: int) -> str:
    """The arch a kernel for CUDA device ``index`` is compiled for (``sm_90a`` on an H100/H200:
    the ``a`` suffix from sm_90 on, as ``target="cuda"`` resolves it)."""
    major, minor = torch_module().cuda.get_device_capability(index)
    num = major * 10 + minor
    return f"sm_{num}a" if num >= 90 else f"sm_{num}"


@functools.cache
def device_info(index: int) -> dict[str, str]:
    """The tuning record's device key: the GPU's name and the driver's version."""
    torch = torch_module()
    try:
        from cuda.bindings import driver

        _, version = driver.cuDriverGetVersion()
        drv = f"{int(version) // 1000}.{int(version) % 1000 // 10}"
    except Exception:  # noqa: BLE001 - the key then says the driver is unknown
        drv = "?"
    return {"name": torch.cuda.get_device_name(index), "driver": drv}


def versions() -> dict[str, str]:
    return {"tvm-backend-cuda": _backend_version}


def sm_count(index: int) -> int:
    return int(torch_module().cuda.get_device_properties(index).multi_processor_count)


def scale_tensor(where: str, name: str, value: Any, device: Any) -> Any:
    """A one-element float32 tensor on ``device`` for a scale given as a float or tensor."""
    torch = torch_module()
    if isinstance(value, torch.Tensor):
        if value.numel() != 1 or value.dtype != torch.float32:
            raise ValueError(f"{where}: {name} must be a float or a one-element float32 tensor "
                             f"(as torch._scaled_mm takes), got {value.dtype} of shape "
                             f"{tuple(value.shape)}")
        if value.device != device:
            raise ValueError(f"{where}: {name} is on {value.device}, the other arguments on "
                             f"{device}")
        return value.reshape(1) if value.is_contiguous() else value.reshape(1).contiguous()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{where}: {name} must be a float or a tensor, got "
                        f"{type(value).__name__}")
    key = (float(value), device)
    t = _SCALES.get(key)
    if t is None:
        t = _SCALES[key] = torch.full((1,), float(value), dtype=torch.float32, device=device)
    return t


def gpu_timer(call: Callable[[], Any], reps: int = 10) -> float:
    """Median seconds of ``call`` timed with CUDA events on torch's current stream (one of the
    tuner's rounds, :data:`tvm.autotune.ROUNDS`)."""
    torch = torch_module()
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    return statistics.median(times)


def _capturing() -> bool:
    """True while torch captures a CUDA graph or compiles: no tuning then."""
    torch = torch_module()
    if torch.cuda.is_current_stream_capturing():
        return True
    compiler = getattr(torch, "compiler", None)
    return bool(compiler is not None and compiler.is_compiling())


@dataclass(frozen=True)
class Tuning:
    """How a callable tunes: the record's factory ``args`` and ``fixed`` options (the kernel
    measured, e.g. the GEMM without its epilogue), the candidate configurations for an arch
    and SM count (the first is the default), and ``inputs()`` giving the tuner's ``(run,
    check)``."""

    args: tuple[Any, ...]
    fixed: Mapping[str, Any]
    candidates: Callable[[str, int], list[dict[str, Any]]]
    inputs: Callable[[], tuple[Callable[[Any], Callable[[], Any]], Callable[[Any], Any]]]


def executable(kernel: str, factory: Callable[..., Any], args: tuple[Any, ...],
               options: Mapping[str, Any], device: Any, *, tuning: Tuning | None = None,
               arch_arg: bool = False) -> Any:
    """The compiled ``factory(*args, **options, **config)`` for ``device``, made once per
    process. ``config`` is the tuned configuration (:func:`tvm.autotune.tune`: an earlier
    process's record, or a search now), or the default while torch captures a CUDA graph or
    compiles (no measuring there). ``arch_arg``: the factory takes ``arch=``."""
    if device.type == "cpu":  # the CUDA emulator (same_device allowed it): no tuning there
        return _emulated_executable(kernel, factory, args, options, tuning, arch_arg)
    index = device.index if device.index is not None else torch_module().cuda.current_device()
    arch = device_arch(index)
    key = (kernel, args, tuple(sorted(options.items())), arch, index)
    ex = _EXES.get(key)
    if ex is not None:
        return ex
    with _LOCK:
        ex = _EXES.get(key)
        if ex is not None:
            return ex
        # the library belongs to this backend: a user who calls it from a source checkout (no
        # installed distribution, so no entry point) gets the backend loaded as the seed's
        # contract does it (idempotent; through the entry point when installed)
        register_backend()
        arch_kw = {"arch": arch} if arch_arg else {}
        fixed = dict(options, **arch_kw)
        config: dict[str, Any] = {}
        if tuning is not None:
            candidates = tuning.candidates(arch, sm_count(index))
            config = dict(candidates[0])
            tuned_fixed = dict(tuning.fixed, **arch_kw)
            if _capturing() and autotune.enabled():  # a record is read, nothing measured
                config = autotune.lookup(kernel, tuning.args, device_info(index), versions(),
                                         tuned_fixed) or config
            elif len(candidates) > 1:
                run, check = tuning.inputs()
                result = autotune.tune(
                    kernel, factory, tuning.args, candidates, fixed=tuned_fixed,
                    target={"kind": "cuda", "arch": arch}, run=run, check=check,
                    timer=gpu_timer, device=device_info(index), versions=versions(),
                    setup=SETUP)
                config = result.config
                if tuning.args == args and tuned_fixed == fixed:
                    ex = result.executable
        if ex is None:
            ex = tvm.compile(factory(*args, **fixed, **config), target="cuda", arch=arch)
        _EXES[key] = ex
    return ex


def _emulated_executable(kernel: str, factory: Callable[..., Any], args: tuple[Any, ...],
                         options: Mapping[str, Any], tuning: Tuning | None, arch_arg: bool
                         ) -> Any:
    """The kernel built for the CUDA emulator with the configuration an untuned GPU run uses
    (the first candidate, for :data:`EMULATED_SMS` SMs): an emulated run's time says nothing
    about the GPU's, so nothing is measured."""
    arch = _emulator.device_arch()
    key = (kernel, args, tuple(sorted(options.items())), "emulated", arch)
    ex = _EXES.get(key)
    if ex is not None:
        return ex
    with _LOCK:
        ex = _EXES.get(key)
        if ex is None:
            register_backend()
            arch_kw = {"arch": arch} if arch_arg else {}
            config = tuning.candidates(arch, EMULATED_SMS)[0] if tuning else {}
            ex = tvm.compile(factory(*args, **options, **arch_kw, **config),
                             target={"kind": "cuda", "arch": arch}, emulate=True)
            _EXES[key] = ex
    return ex
