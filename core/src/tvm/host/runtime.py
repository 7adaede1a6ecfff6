"""Driver access of the host backend: load shared objects with ctypes, call their entry points.

Every call checks its arguments first with :class:`~tvm.runtime.arguments.ArgumentChecker`
(count, kind, dtype, rank, shape, strides/contiguity, device; the error names the function and
the parameter), then marshals them to C: arrays as data pointers (DLPack producers taken
zero-copy with ``numpy.from_dlpack``), scalars and the shape variables derived from the arrays
as numbers. A non-zero status from
C (a failed assert, an allocation failure) raises :class:`~tvm.error.TVMError` with the message
the C code recorded.

That is the full path. Numpy arrays (and Python numbers) normally take the fast one: the C
caller of :mod:`.caller` checks them against a plan precomputed from the same signature and
calls the kernel's packed entry point; anything its checks do not pass - another array type, a
wrong argument - goes to the full path, which accepts it or raises the checker's message.
"""

from __future__ import annotations

import ctypes
from typing import Any

from ..codegen.bounds import BOUNDS_MESSAGE
from ..codegen.c_style import FunctionInfo
from ..error import BoundsCheckError, TVMError
from ..runtime.arguments import ArgumentChecker, Signature
from .caller import make_caller
from .codegen import ERROR_SYMBOL

__all__ = ["HostFunction", "load_library"]

_CTYPES = {
    "int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32,
    "int64": ctypes.c_int64, "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16,
    "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64, "float32": ctypes.c_float,
    "float64": ctypes.c_double, "float16": ctypes.c_float, "bfloat16": ctypes.c_float,
    "bool": ctypes.c_bool,
}


class HostFunction:
    """One exported C function, callable on arrays and numbers."""

    def __init__(self, lib: ctypes.CDLL, info: FunctionInfo, signature: Signature) -> None:
        self.info = info
        self.signature = signature
        self._lib = lib
        self._check = ArgumentChecker(signature)
        fn = getattr(lib, info.symbol)
        fn.restype = ctypes.c_int32
        fn.argtypes = [self._ctype(p.kind, p.dtype) for p in info.params]
        self._fn = fn
        # how each C parameter gets its value: (kind, user argument index, signature var name,
        # shape-variable source)
        user = info.user_params
        index = {id(p): i for i, p in enumerate(user)}
        self._plan = [(p.kind, index.get(id(p), -1),
                       signature.params[index[id(p)]].var if id(p) in index else None,
                       p.source[0] if p.source else None) for p in info.params]
        # the C caller (None where it cannot be built or the signature needs the full path;
        # a function returning a value takes the full path, which reads the value back)
        # a failing kernel raises TVMError, or BoundsCheckError for a failed bounds check
        self._fast = None if info.ret is not None else make_caller(
            lib, info, signature, self.call_checked, (TVMError, BOUNDS_MESSAGE, BoundsCheckError))

    @staticmethod
    def _ctype(kind: str, dtype: str) -> Any:
        if kind in ("buffer", "handle"):
            return ctypes.c_void_p
        if kind == "ret":
            return ctypes.POINTER(_CTYPES[dtype])
        try:
            return _CTYPES[dtype]
        except KeyError:
            raise TVMError(f"scalar parameters of type {dtype} cannot be passed to C") from None

    @property
    def name(self) -> str:
        return self.info.name

    def __call__(self, *args: Any) -> Any:
        fast = self._fast
        if fast is not None:
            return fast(*args)
        return self.call_checked(*args)

    @property
    def fast_call(self) -> Any:
        """What a call runs first: the C caller, else :meth:`call_checked`."""
        return self._fast if self._fast is not None else self.call_checked

    @property
    def call_path(self) -> str:
        """``"C caller"`` or ``"ctypes"`` (why: :func:`tvm.host.caller.unavailable_reason`)."""
        return "C caller" if self._fast is not None else "ctypes"

    def call_checked(self, *args: Any) -> Any:
        """The full path: core's argument checker, then the call through ctypes. Returns what
        the function returns with ``T.ret`` (a Python number), else None."""
        values = self._check(args)
        arrays = [_as_numpy(a) for a in args]  # keeps DLPack views alive during the call
        c_args: list[Any] = []
        ret: Any = None
        for kind, i, var, source in self._plan:
            if kind == "ret":
                ret = _CTYPES[self.info.ret.dtype]()  # type: ignore[union-attr]
                c_args.append(ctypes.byref(ret))
            elif kind == "buffer":
                c_args.append(arrays[i].ctypes.data)
            elif kind == "handle":
                a = arrays[i]
                c_args.append(a if a is None or isinstance(a, int) else a.ctypes.data)
            elif kind == "scalar":
                c_args.append(values[var] if var is not None else args[i])
            elif source is not None:  # a shape variable: read from the array it came from
                arg, where, dim = source
                arr = arrays[arg]
                c_args.append(arr.shape[dim] if where == "shape"
                              else arr.strides[dim] // arr.itemsize)
            else:
                raise TVMError(f"{self.info.name}: shape variable of C parameter #{len(c_args)} "
                               "has no array to read it from")
        status = self._fn(*c_args)
        if status != 0:
            message = self._last_error()
            cls = BoundsCheckError if message.startswith(BOUNDS_MESSAGE) else TVMError
            raise cls(f"{self.info.name}: {message}")
        return None if ret is None else ret.value

    def _last_error(self) -> str:
        get = getattr(self._lib, ERROR_SYMBOL)
        get.restype = ctypes.c_char_p
        get.argtypes = []
        raw = get()
        return raw.decode("utf-8", "replace") if raw else "failed with no message"

    def __repr__(self) -> str:
        params = ", ".join(f"{p.name}: {p.dtype}" for p in self.info.user_params)
        return f"<HostFunction {self.info.name}({params})>"


def _as_numpy(arg: Any) -> Any:
    """A checked argument as C sees it: numpy arrays as they are, other arrays through DLPack."""
    if arg is None or isinstance(arg, (int, float, bool)) or hasattr(arg, "ctypes"):
        return arg
    if hasattr(arg, "__dlpack__") or hasattr(arg, "__array_interface__"):
        import numpy as np

        return np.from_dlpack(arg) if hasattr(arg, "__dlpack__") else np.asarray(arg)
    return arg


def load_library(path: str) -> ctypes.CDLL:
    """``dlopen`` a compiled module (it runs the module's initialisers: trusted files only)."""
    try:
        return ctypes.CDLL(path)
    except OSError as err:
        raise TVMError(f"could not load the compiled module {path}: {err}") from err
