"""PyTorch custom ops from tvm kernels (``tvm.torch``).

:func:`custom_op` registers a kernel as a ``torch.library.custom_op``: eager calls compile it
once per shape and device (target ``"c"`` for CPU tensors, ``"cuda"`` for CUDA tensors, or the
``target=`` given) and launch it; its fake (meta) implementation allocates the outputs from the
PrimFunc's output buffers, so ``torch.compile(fullgraph=True)`` traces the op without running
it and without a graph break, and a CUDA graph captures the launch (it goes to torch's current
stream). torch is imported when this module's functions are called, never by ``import tvm``.

    op = tvm.torch.custom_op("mylib::vadd", vadd)        # vadd(A, B, C): returns C
    c = op(a, b)
    torch.compile(lambda a, b: op(a, b) * 2, fullgraph=True)(a, b)

Outputs: by default the last buffer parameter is the output, allocated by the op and returned;
``outputs=("C", "D")`` names several (returned as a tuple). ``mutates_args=("C",)`` instead
makes the op write ``C`` in place (it takes every parameter and returns nothing).

A *factory* (``factory(*args) -> PrimFunc``, e.g. ``softmax_func(m, n, dtype)``) works for
every shape: ``args=`` maps the op's inputs to the factory's arguments and ``example=`` is one
set of them (it names the parameters): ``custom_op("lib::softmax", softmax_func,
args=lambda x: (*x.shape, tvm.torch.dtype_name(x.dtype)), example=(1, 8, "float32"))``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .driver import compile as tvm_compile
from .ir import IntImm, PrimFunc

__all__ = ["DEVICE_TARGETS", "custom_op", "dtype_name", "torch_dtype"]

#: the target a call compiles for, by the device type of its tensors (when ``target=`` is None)
DEVICE_TARGETS = {"cpu": "c", "cuda": "cuda"}
_SCALARS = {"int": "int", "uint": "int", "float": "float", "bool": "bool"}


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise ImportError("tvm.torch needs PyTorch: pip install torch") from None
    return torch


def torch_dtype(name: str) -> Any:
    """The torch dtype of a tvm dtype name (``"bfloat16"`` -> ``torch.bfloat16``)."""
    dt = getattr(_torch(), str(name), None)
    if dt is None or not isinstance(dt, _torch().dtype):
        raise TypeError(f"tvm.torch: no torch dtype for {name!r}")
    return dt


def dtype_name(dtype: Any) -> str:
    """The tvm dtype name of a torch dtype (``torch.bfloat16`` -> ``"bfloat16"``)."""
    return str(dtype).removeprefix("torch.")


@dataclass(frozen=True)
class _Param:
    name: str
    buffer: Any  # the Buffer, or None for a scalar
    dtype: str

    @property
    def schema_type(self) -> str:
        if self.buffer is not None:
            return "Tensor"
        kind = next((v for k, v in _SCALARS.items() if self.dtype.startswith(k)), None)
        if kind is None:
            raise TypeError(f"tvm.torch: parameter {self.name!r} of type {self.dtype} has no "
                            f"torch schema type")
        return kind


def _params(func: PrimFunc) -> list[_Param]:
    out = []
    for var in func.params:
        buf = func.buffer_map.get(var)
        out.append(_Param(var.name, buf, str(buf.dtype if buf is not None else var.dtype)))
    return out


def _static_shape(buf: Any, where: str) -> tuple[int, ...]:
    dims = []
    for d in buf.shape:
        if not isinstance(d, IntImm):
            raise TypeError(f"{where}: output {buf.name!r} has the symbolic shape "
                            f"{list(buf.shape)}; an op's outputs need static shapes (use a "
                            f"factory with args= to build one function per shape)")
        dims.append(int(d.value))
    return tuple(dims)


class _Kernel:
    """What an op call needs: the PrimFunc for the inputs' shapes and its executables."""

    def __init__(self, name: str, kernel: Any, args: Callable[..., Sequence[Any]] | None,
                 target: Any, options: Mapping[str, Any]) -> None:
        self.name = name
        self.kernel = kernel
        self.args = args
        self.target = target
        self.options = dict(options)
        self.funcs: dict[tuple[Any, ...], PrimFunc] = {}
        self.exes: dict[tuple[Any, ...], Any] = {}
        self.lock = threading.Lock()

    def func(self, inputs: Sequence[Any]) -> tuple[tuple[Any, ...], PrimFunc]:
        if isinstance(self.kernel, PrimFunc):
            return (), self.kernel
        key = tuple(self.args(*inputs)) if self.args is not None else ()
        func = self.funcs.get(key)
        if func is None:
            func = self.funcs[key] = self.kernel(*key)
            if not isinstance(func, PrimFunc):
                raise TypeError(f"{self.name}: the factory returned {type(func).__name__}, "
                                f"not a PrimFunc")
        return key, func

    def executable(self, key: tuple[Any, ...], func: PrimFunc, device: Any) -> Any:
        target = self.target or DEVICE_TARGETS.get(device.type)
        if target is None:
            raise ValueError(f"{self.name}: no tvm target for tensors on {device}; pass "
                             f"target= to tvm.torch.custom_op (known: {DEVICE_TARGETS})")
        full = (key, str(target), device.type)
        ex = self.exes.get(full)
        if ex is None:
            with self.lock:
                ex = self.exes.get(full)
                if ex is None:
                    ex = self.exes[full] = tvm_compile(func, target, **self.options)
        return ex


def custom_op(name: str, kernel: Any, *, outputs: int | Sequence[str] | None = None,
              mutates_args: Sequence[str] = (), args: Callable[..., Sequence[Any]] | None = None,
              example: Sequence[Any] | None = None, target: Any = None,
              options: Mapping[str, Any] | None = None) -> Any:
    """Register ``kernel`` (a PrimFunc, or a factory with ``args`` and ``example``) as the
    torch op ``name`` (``"namespace::op"``) and return it (module docstring)."""
    torch = _torch()
    if "::" not in name:
        raise ValueError(f"tvm.torch.custom_op: the name {name!r} must be 'namespace::op'")
    if isinstance(kernel, PrimFunc):
        sample = kernel
    elif callable(kernel):
        if args is None or example is None:
            raise TypeError(f"tvm.torch.custom_op({name!r}): a factory needs args= (the op's "
                            f"inputs -> the factory's arguments) and example= (one set of "
                            f"them, which names the parameters)")
        sample = kernel(*example)
        if not isinstance(sample, PrimFunc):
            raise TypeError(f"tvm.torch.custom_op({name!r}): the factory returned "
                            f"{type(sample).__name__}, not a PrimFunc")
    else:
        raise TypeError(f"tvm.torch.custom_op({name!r}): expected a PrimFunc or a factory of "
                        f"one, got {type(kernel).__name__}")
    params = _params(sample)
    out_names = _output_names(name, params, outputs, mutates_args)
    op_params = [p for p in params if p.name not in out_names]
    state = _Kernel(name, kernel, args, target, options or {})
    schema = _schema(op_params, out_names, mutates_args)
    positions = {p.name: i for i, p in enumerate(params)}

    def impl(*op_args: Any) -> Any:
        key, func = state.func(op_args)
        device = _device_of(op_args, name)
        full: list[Any] = [None] * len(params)
        for p, v in zip(op_params, op_args):
            mutated = p.name in mutates_args
            full[positions[p.name]] = v if mutated or not isinstance(v, torch.Tensor) \
                else v.contiguous()
        made = _outputs(func, out_names, device, torch, name)
        for n, t in zip(out_names, made):
            full[positions[n]] = t
        state.executable(key, func, device)(*full)
        return _result(made)

    def fake(*op_args: Any) -> Any:
        _, func = state.func(op_args)
        return _result(_outputs(func, out_names, _device_of(op_args, name), torch, name))

    op = torch.library.custom_op(name, impl, mutates_args=tuple(mutates_args), schema=schema)
    op.register_fake(fake)
    return op


def _output_names(name: str, params: list[_Param], outputs: int | Sequence[str] | None,
                  mutates: Sequence[str]) -> list[str]:
    names = [p.name for p in params]
    for m in mutates:
        if m not in names:
            raise ValueError(f"tvm.torch.custom_op({name!r}): mutates_args names {m!r}, which "
                             f"is not a parameter ({names})")
    if mutates:
        if outputs:
            raise ValueError(f"tvm.torch.custom_op({name!r}): give outputs= or mutates_args=, "
                             f"not both")
        return []
    buffers = [p.name for p in params if p.buffer is not None]
    if outputs is None:
        outputs = 1
    if isinstance(outputs, int):
        if not 1 <= outputs <= len(buffers):
            raise ValueError(f"tvm.torch.custom_op({name!r}): outputs={outputs}, but the "
                             f"kernel has {len(buffers)} buffer parameters")
        return buffers[-outputs:]
    for o in outputs:
        if o not in buffers:
            raise ValueError(f"tvm.torch.custom_op({name!r}): output {o!r} is not a buffer "
                             f"parameter ({buffers})")
    return list(outputs)


def _schema(op_params: list[_Param], outputs: list[str], mutates: Sequence[str]) -> str:
    parts = []
    for i, p in enumerate(op_params):
        alias = f"(a{i}!)" if p.name in mutates else ""
        parts.append(f"{p.schema_type}{alias} {p.name}")
    ret = "()" if not outputs else "Tensor" if len(outputs) == 1 else \
        "(" + ", ".join("Tensor" for _ in outputs) + ")"
    return f"({', '.join(parts)}) -> {ret}"


def _device_of(op_args: Sequence[Any], name: str) -> Any:
    torch = _torch()
    for a in op_args:
        if isinstance(a, torch.Tensor):
            return a.device
    raise TypeError(f"{name}: no tensor argument says which device to run on")


def _outputs(func: PrimFunc, names: list[str], device: Any, torch: Any, where: str) -> list[Any]:
    by_name = {p.name: p for p in _params(func)}
    return [torch.empty(_static_shape(by_name[n].buffer, where),
                        dtype=torch_dtype(by_name[n].dtype), device=device) for n in names]


def _result(made: list[Any]) -> Any:
    if not made:
        return None
    return made[0] if len(made) == 1 else tuple(made)
