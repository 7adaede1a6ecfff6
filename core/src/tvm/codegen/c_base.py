"""The state and data of a C-style printer: :class:`ParamInfo`, :class:`FunctionInfo`, and
:class:`CBase` (the data a dialect changes, types, names, parameters, scopes, helpers)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..error import CodegenError
from ..ir import expr as E
from ..ir.buffer import Buffer
from ..ir.dtype import DataType
from ..ir.function import PrimFunc
from ..ir.span import Span
from .bounds import bounds_check_enabled
from .c_rules import _BASE_TEMPLATES, _BF16_HELPERS, _C_KEYWORDS, _F16_HELPERS, OpTemplate


@dataclass
class ParamInfo:
    """One C parameter of a generated function.

    ``kind`` is ``buffer`` (a pointer to the buffer's data), ``scalar``, ``handle`` (an opaque
    pointer), ``shape_var`` (a symbolic extent or stride that the caller derives from the
    buffers: ``source`` lists ``(param index, "shape" | "strides", dim)`` places to read it from)
    or ``ret`` (where the host function stores what ``T.ret`` returns; the caller provides it).
    ``shape``/``strides`` entries are ints, C names of shape variables, or ``None`` (an expression
    the runtime cannot check).
    """

    name: str
    c_name: str
    kind: str
    dtype: str
    shape: list[Any] | None = None
    strides: list[Any] | None = None
    source: list[tuple[int, str, int]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "c_name": self.c_name, "kind": self.kind, "dtype": self.dtype,
                "shape": self.shape, "strides": self.strides,
                "source": [list(s) for s in self.source]}

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> ParamInfo:
        return ParamInfo(d["name"], d["c_name"], d["kind"], d["dtype"], d.get("shape"),
                         d.get("strides"), [tuple(s) for s in d.get("source", [])])  # type: ignore[misc]


@dataclass
class FunctionInfo:
    """A generated function: its IR name, C symbol, parameters (in C order) and kind."""

    name: str
    symbol: str
    params: list[ParamInfo]
    is_kernel: bool = False

    @property
    def user_params(self) -> list[ParamInfo]:
        """The parameters the caller passes (everything but derived shape variables and the
        return slot)."""
        return [p for p in self.params if p.kind not in ("shape_var", "ret")]

    @property
    def ret(self) -> ParamInfo | None:
        """The return slot of a function that returns a value through ``T.ret``, or None."""
        return next((p for p in self.params if p.kind == "ret"), None)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "symbol": self.symbol, "is_kernel": self.is_kernel,
                "params": [p.to_dict() for p in self.params]}

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> FunctionInfo:
        return FunctionInfo(d["name"], d["symbol"], [ParamInfo.from_dict(p) for p in d["params"]],
                            bool(d.get("is_kernel", False)))


class CBase:
    """The data and state of a C-style printer; the printing is in its subclasses."""

    # -- data a subclass changes ------------------------------------------------------------
    target_kind: ClassVar[str] = "c"
    kernel_prefix: ClassVar[str] = ""
    function_prefix: ClassVar[str] = ""
    kernel_return_type: ClassVar[str] = "void"
    function_return_type: ClassVar[str] = "int32_t"
    restrict_keyword: ClassVar[str] = "restrict"
    pointer_qualifiers: ClassVar[dict[str, str]] = {}
    storage_qualifiers: ClassVar[dict[str, str]] = {}
    align_attribute: ClassVar[str] = "__attribute__((aligned({n})))"
    alloc_alignment: ClassVar[int] = 64
    # Allocations in these scopes (or smaller than max_stack_bytes) are stack/static arrays.
    stack_scopes: ClassVar[frozenset[str]] = frozenset({"local", "shared", "shared.dyn"})
    max_stack_bytes: ClassVar[int] = 16 * 1024
    thread_index_names: ClassVar[dict[str, str]] = {}
    # Names the dialect predefines (CUDA's ``blockIdx``, ``warpSize``): a variable so named is
    # renamed (``blockIdx_``), as a C keyword is, so it cannot hide the builtin.
    reserved_names: ClassVar[frozenset[str]] = frozenset()
    type_names: ClassVar[dict[str, str]] = {
        "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
        "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
        "float32": "float", "float64": "double", "bool": "bool", "handle": "void*", "void": "void",
    }
    # Instance-overridable: the host picks _Float16 only when its compiler supports it.
    half_type: str | None = None
    bfloat16_type: str | None = None
    barrier: ClassVar[str | None] = None
    unroll_pragma: ClassVar[str | None] = "#pragma unroll"
    vectorize_pragma: ClassVar[str | None] = None
    op_templates: ClassVar[dict[str, OpTemplate]] = _BASE_TEMPLATES
    # What TVM_BOUNDS_FAIL(message) does before a failed bounds check takes the assert path
    # (CUDA: printf, as the trap that follows loses the message); a target may define the
    # macro itself before the source (the Metal emulator records the message).
    bounds_report: ClassVar[str] = "((void)0)"
    # (name, definition) of the helpers that convert emulated 16-bit floats (``to_storage_fn``,
    # ``from_storage_fn``, ``round_fn``); a dialect without memcpy supplies its own.
    float16_helpers: ClassVar[tuple[tuple[str, str], ...]] = _F16_HELPERS
    bfloat16_helpers: ClassVar[tuple[tuple[str, str], ...]] = _BF16_HELPERS
    # Device dialects: print only the kernels of a split module (the host part is the
    # executable's launch plan), every other function as a kernel.
    kernels_only: ClassVar[bool] = False
    # What C helpers (written "static inline ...") start with instead (CUDA, HIP: device code).
    helper_prefix: ClassVar[str] = "static inline "
    # per function being printed: the span of the statement behind each line, and the current
    _line_spans: list[Span | None]
    _span: Span | None
    # The suffix of 64-bit integer literals ("LL" -> 5LL, 5ULL); None: INT64_C()/UINT64_C().
    int64_suffix: ClassVar[str | None] = None
    # A handle parameter whose pointer type is known is a typed buffer pointer (a kernel
    # receives buffers as their data handles).
    typed_handles: ClassVar[bool] = False
    includes: ClassVar[tuple[str, ...]] = (
        "stdint.h", "stdbool.h", "stddef.h", "string.h", "math.h",
    )

    _lines: list[str]
    _indent: int
    _cur_info: FunctionInfo

    def __init__(self, target: Any = None) -> None:
        self.target = target
        #: check every buffer access at run time (``bounds_check=True`` / TVM_BOUNDS_CHECK=1)
        self.bounds_check = bounds_check_enabled()
        self.functions: list[FunctionInfo] = []
        self._helpers: dict[str, str] = {}
        self._chunks: list[str] = []
        self._global_names: set[str] = set()
        self._reset_function_state()
    # -- helpers for rules ------------------------------------------------------------------------
    def add_helper(self, name: str, code: str) -> str:
        """Add a C helper definition (once per translation unit); returns its name."""
        if code.startswith("static inline ") and self.helper_prefix != "static inline ":
            code = self.helper_prefix + code[len("static inline "):]
        self._helpers.setdefault(name, code)
        return name

    def emit(self, line: str) -> None:
        self._lines.append("  " * self._indent + line if line else "")
        self._line_spans.append(self._span)

    def c_string(self, text: str) -> str:
        out = []
        for byte in text.encode("utf-8"):
            ch = chr(byte)
            if ch in '"\\':
                out.append("\\" + ch)
            elif 32 <= byte < 127:
                out.append(ch)
            else:
                out.append(f"\\{byte:03o}")
        return '"' + "".join(out) + '"'

    # -- types ------------------------------------------------------------------------------------
    def is_emulated(self, dt: DataType) -> bool:
        """A 16-bit float without a native type here: computed in float, stored as uint16_t."""
        dt = dt.element_of()
        if dt.code == "bfloat":
            return self.bfloat16_type is None
        if dt.code == "float" and dt.bits == 16:
            return self.half_type is None
        return False

    def _emul_suffix(self, dt: DataType) -> str:
        return "bf16" if dt.code == "bfloat" else "f16"

    def to_storage_fn(self, dt: DataType) -> str:
        self._need_emulation(dt)
        return f"tvm_f32_to_{self._emul_suffix(dt)}"

    def from_storage_fn(self, dt: DataType) -> str:
        self._need_emulation(dt)
        return f"tvm_{self._emul_suffix(dt)}_to_f32"

    def round_fn(self, dt: DataType) -> str:
        self._need_emulation(dt)
        return f"tvm_round_{self._emul_suffix(dt)}"

    def _need_emulation(self, dt: DataType) -> None:
        for name, code in (self.bfloat16_helpers if dt.code == "bfloat" else self.float16_helpers):
            self.add_helper(name, code)

    def c_type(self, dt: DataType | str) -> str:
        """The C type of a *value* of ``dt`` (emulated 16-bit floats compute in ``float``)."""
        dt = DataType(dt)
        if dt.lanes > 1:
            raise CodegenError(f"target {self.target_kind!r}: vector type {dt} has no C spelling here; "
                           "vector expressions are printed lane by lane")
        if self.is_emulated(dt):
            return "float"
        return self.storage_type(dt)

    def storage_type(self, dt: DataType | str) -> str:
        """The C type of ``dt`` in memory."""
        dt = DataType(dt).element_of()
        if dt.code == "bfloat":
            return self.bfloat16_type or "uint16_t"
        if dt.code == "float" and dt.bits == 16:
            return self.half_type or "uint16_t"
        name = self.type_names.get(str(dt))
        if name is None:
            raise CodegenError(f"data type {dt} is not supported by target {self.target_kind!r}")
        return name

    # -- names ------------------------------------------------------------------------------------
    def _reset_function_state(self) -> None:
        self._lines = []
        self._line_spans = []
        self._span = None
        self._indent = 0
        self._names: dict[int, str] = {}
        self._used: set[str] = set(self._global_names)
        self._buffer_ptrs: dict[int, str] = {}
        self._nonneg_vars: set[int] = set()
        self._ranges: dict[int, tuple[int, int]] = {}  # constant ranges of enclosing loops
        self._scopes: list[list[str]] = []
        self._parallel: list[str] = []
        self._label_counter = 0

    def _sanitize(self, hint: str) -> str:
        name = re.sub(r"\W", "_", hint) or "v"
        if name[0].isdigit():
            name = "v_" + name
        if self._reserved(name) or name.startswith("tvm_") or name.startswith("__"):
            name = name.lstrip("_") + "_"
            if self._reserved(name) or name.startswith("tvm_"):
                name = "v_" + name
        return name

    def _reserved(self, name: str) -> bool:
        return name in _C_KEYWORDS or name in self.reserved_names

    def _fresh(self, hint: str) -> str:
        return self._fresh_internal(self._sanitize(hint))

    def _fresh_internal(self, base: str) -> str:
        """An unused name from ``base`` as given (a name the code generator makes, not the
        user's): ``base``, else ``base_1``, ``base_2``, ..."""
        name, i = base, 1
        while name in self._used:
            name = f"{base}_{i}"
            i += 1
        self._used.add(name)
        return name

    def _symbol_name(self, name: str) -> str:
        symbol = self._fresh(name)
        self._global_names.add(symbol)
        return symbol

    def var_name(self, var: E.Var, hint: str | None = None) -> str:
        """The C name of ``var`` (allocated on first use, unique within the function)."""
        found = self._names.get(id(var))
        if found is None:
            found = self._fresh(hint or var.name)
            self._names[id(var)] = found
        return found

    def buffer_ptr(self, buffer: Buffer) -> str:
        ptr = self._buffer_ptrs.get(id(buffer))
        return ptr if ptr is not None else self.var_name(buffer.data, buffer.name)

    # -- parameters -------------------------------------------------------------------------------
    def _collect_params(self, func: PrimFunc) -> list[ParamInfo]:
        params: list[ParamInfo] = []
        for p in func.params:
            buf = func.buffer_map.get(p)
            if buf is not None:
                name = self.var_name(buf.data, buf.name)
                self._names[id(p)] = name
                params.append(ParamInfo(buf.name, name, "buffer", str(buf.dtype)))
            elif p.dtype.is_handle and self.typed_handles and p.ptr_dtype is not None:
                params.append(ParamInfo(p.name, self.var_name(p), "buffer",
                                        str(p.ptr_dtype.element_of())))
            elif p.dtype.is_handle:
                params.append(ParamInfo(p.name, self.var_name(p), "handle", "handle"))
            else:
                params.append(ParamInfo(p.name, self.var_name(p), "scalar", str(p.dtype)))
        shape_vars: dict[int, ParamInfo] = {}
        for index, p in enumerate(func.params):
            buf = func.buffer_map.get(p)
            if buf is None:
                continue
            params[index].shape = [self._dim(d, index, "shape", k, shape_vars, params)
                                   for k, d in enumerate(buf.shape)]
            if buf.strides:
                params[index].strides = [self._dim(d, index, "strides", k, shape_vars, params)
                                         for k, d in enumerate(buf.strides)]
        params.extend(shape_vars.values())
        return params

    def _dim(self, d: E.PrimExpr, index: int, where: str, k: int,
             shape_vars: dict[int, ParamInfo], params: list[ParamInfo]) -> Any:
        if isinstance(d, E.IntImm):
            return d.value
        if not isinstance(d, E.Var):
            return None
        self._nonneg_vars.add(id(d))
        known = id(d) in self._names
        name = self.var_name(d)
        if known and id(d) not in shape_vars:
            for p in params:  # a scalar parameter: the runtime checks it against the array
                if p.c_name == name:
                    p.source.append((index, where, k))
            return name
        info = shape_vars.get(id(d))
        if info is None:
            info = shape_vars[id(d)] = ParamInfo(d.name, name, "shape_var", str(d.dtype))
        info.source.append((index, where, k))
        return name

    # -- scopes -----------------------------------------------------------------------------------
    def _push_scope(self) -> None:
        self._scopes.append([])

    def _pop_scope(self) -> None:
        for line in reversed(self._scopes.pop()):
            self.emit(line)
