"""Load host shared objects with ctypes and call their entry points on arrays.

Every call checks its arguments first (count, kind, dtype, rank, shape, strides/contiguity,
device) and raises naming the parameter; only then does it call into C. A non-zero status from
C (a failed assert, an allocation failure) raises :class:`~tvm.error.TVMError` with the message
the C code recorded.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..codegen.c_style import FunctionInfo
from ..error import TVMError
from ..runtime.arguments import bind_arguments
from ..runtime.executable import Executable
from .codegen import ERROR_SYMBOL

__all__ = ["HostExecutable", "HostFunction"]

_CTYPES = {
    "int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32,
    "int64": ctypes.c_int64, "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16,
    "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64, "float32": ctypes.c_float,
    "float64": ctypes.c_double, "float16": ctypes.c_float, "bfloat16": ctypes.c_float,
    "bool": ctypes.c_bool,
}


class HostFunction:
    """One exported C function, callable on arrays and numbers."""

    def __init__(self, lib: ctypes.CDLL, info: FunctionInfo, external_check: Any = None) -> None:
        self.info = info
        self._lib = lib
        self._external_check = external_check
        fn = getattr(lib, info.symbol)
        fn.restype = ctypes.c_int32
        fn.argtypes = [self._ctype(p.kind, p.dtype) for p in info.params]
        self._fn = fn

    @staticmethod
    def _ctype(kind: str, dtype: str) -> Any:
        if kind in ("buffer", "handle"):
            return ctypes.c_void_p
        try:
            return _CTYPES[dtype]
        except KeyError:
            raise TVMError(f"scalar parameters of type {dtype} cannot be passed to C") from None

    @property
    def name(self) -> str:
        return self.info.name

    def __call__(self, *args: Any) -> None:
        if self._external_check is not None:
            self._external_check(args)
        values = bind_arguments(self.info, args, "cpu")
        c_args = [v.ctypes.data if p.kind == "buffer" else v
                  for p, v in zip(self.info.params, values)]
        status = self._fn(*c_args)
        if status != 0:
            raise TVMError(f"{self.info.name}: {self._last_error()}")

    def _last_error(self) -> str:
        get = getattr(self._lib, ERROR_SYMBOL)
        get.restype = ctypes.c_char_p
        get.argtypes = []
        raw = get()
        return raw.decode("utf-8", "replace") if raw else "failed with no message"

    def __repr__(self) -> str:
        params = ", ".join(f"{p.name}: {p.dtype}" for p in self.info.user_params)
        return f"<HostFunction {self.info.name}({params})>"


class HostExecutable(Executable):
    """A compiled shared object of the host target ``c``."""

    backend = "c"

    def __init__(self, target: Any, lib_path: str | Path, source: str,
                 functions: Sequence[FunctionInfo], *, compiler: dict[str, Any] | None = None,
                 external_checks: dict[str, Any] | None = None) -> None:
        super().__init__(target, [f.name for f in functions])
        self.lib_path = str(lib_path)
        self.source = source
        self.functions = {f.name: f for f in functions}
        self.compiler = dict(compiler or {})
        try:
            self._lib = ctypes.CDLL(self.lib_path)
        except OSError as err:
            raise TVMError(f"could not load the compiled module {self.lib_path}: {err}") from err
        self._external_checks = dict(external_checks or {})
        self._loaded: dict[str, HostFunction] = {}

    def get_function(self, name: str) -> HostFunction:
        func = self._loaded.get(name)
        if func is not None:
            return func
        info = self.functions.get(name)
        if info is None:
            raise KeyError(f"this executable has no function {name!r}; it has "
                           f"{sorted(self.functions)}")
        func = self._loaded[name] = HostFunction(self._lib, info, self._external_checks.get(name))
        return func

    def inspect_source(self, kind: str = "") -> str:
        return self.source

    def export_header(self) -> dict[str, Any]:
        return {"signatures": {n: f.to_dict() for n, f in self.functions.items()},
                "compiler": self.compiler}

    def export_payload(self) -> bytes:
        return Path(self.lib_path).read_bytes()
