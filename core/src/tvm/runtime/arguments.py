"""The one argument check every executable runs before anything launches.

A compiled function's parameters are described by a :class:`Signature`: plain data (JSON),
derived from the IR at build time (:func:`tvm.codegen.signature.signature_from_func`), stored in
the executable and in the file ``export_library`` writes, so a freshly compiled executable and
one from ``tvm.runtime.load_module`` check their arguments with the same code and the same
messages. :class:`ArgumentChecker` turns a signature into per-parameter checks once (at build or
load time); a call then costs a few attribute reads per array.

>>> sig = Signature.from_dict(header["arguments"]["vadd"])
>>> check = ArgumentChecker(sig)
>>> values = check([a, b, c])      # {"n": 1024, ...}: scalars and symbolic dims, by name

Every message names the function and the parameter and says what was expected and what was
given, e.g. ``vadd: argument 'A': expected dtype float32, got float64``. A wrong argument count,
or an argument of the wrong kind (a list for an array, a float for an int), is a ``TypeError``;
everything else (rank, shape, dtype, device, strides, a scalar out of range) a ``ValueError``.

Arrays: numpy arrays, torch tensors, anything with ``__cuda_array_interface__``,
``__array_interface__`` or ``__dlpack__``. Dimensions in a signature are ints, the name of a
variable (bound by the first argument that has it, checked against every later one) or an
expression tree (``["Mul", "n", 2]``, evaluated once every variable is bound).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

from ..ir.dtype import DataType
from ..ir.literal import FLOAT_MAX as _FLOAT_MAX
from .arrays import _Array, _canon_dtype, _contiguous, _foreign_order, _read_array

__all__ = ["FLOAT_OVERFLOW", "ArgumentChecker", "Dim", "ParamSig", "Signature", "evaluate_tree", "show_dim"]

#: a dimension or stride: an int, a variable name, or an expression tree ``[op, *operands]``
Dim = Union[int, float, str, list]

_KINDS = ("buffer", "scalar", "handle")


@dataclass(frozen=True)
class ParamSig:
    """One parameter. ``kind``: ``buffer``, ``scalar`` or ``handle`` (an opaque pointer: an int
    address, None or an array). For buffers, ``strides`` empty means contiguous row-major. For
    scalars, ``var`` is the name the value is bound to (shapes may use it)."""

    name: str
    kind: str
    dtype: str
    shape: tuple[Dim, ...] = ()
    strides: tuple[Dim, ...] = ()
    scope: str = "global"
    var: str | None = None
    #: whether the function may write to the array (then a read-only array is refused)
    written: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "dtype": self.dtype,
                "shape": list(self.shape), "strides": list(self.strides), "scope": self.scope,
                "var": self.var, "written": self.written}

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> ParamSig:
        """The parameter of a signature read back; a malformed one (an exported file's header
        edited by hand) is a ``ValueError`` naming the parameter and the field."""
        if not isinstance(d, Mapping):
            raise ValueError(f"a parameter of a signature must be an object, not {d!r:.60}")
        name = d.get("name")
        if not isinstance(name, str):
            raise ValueError(f"parameter {name!r:.60}: field 'name' must be a string")
        if d.get("kind") not in _KINDS:
            raise ValueError(f"parameter {name!r}: kind must be one of {_KINDS}, got "
                             f"{d.get('kind')!r:.60}")
        try:
            dtype = str(DataType(d["dtype"]))
        except (KeyError, TypeError, ValueError):
            raise ValueError(f"parameter {name!r}: field 'dtype' must be a data type, not "
                             f"{d.get('dtype')!r:.60}") from None
        shape, strides = _dims(name, "shape", d.get("shape", [])), _dims(name, "strides", d.get("strides", []))
        var, written = d.get("var"), d.get("written", True)
        if not (var is None or isinstance(var, str)):
            raise ValueError(f"parameter {name!r}: field 'var' must be a string or null")
        if not isinstance(written, bool):
            raise ValueError(f"parameter {name!r}: field 'written' must be true or false")
        return ParamSig(name, str(d["kind"]), dtype, shape, strides,
                        str(d.get("scope", "global")), var, written)


@dataclass(frozen=True)
class Signature:
    """What a function expects: its name (used in messages), parameters and device kind."""

    name: str
    params: tuple[ParamSig, ...]
    device: str = "cpu"
    #: variable names -> dtype, for every variable the dims and scalars use
    variables: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "device": self.device, "variables": dict(self.variables),
                "params": [p.to_dict() for p in self.params]}

    @staticmethod
    def from_dict(d: Mapping[str, Any]) -> Signature:
        if not (isinstance(d, Mapping) and isinstance(d.get("params"), list)):
            raise ValueError(f"a signature must be an object with a 'params' list, not {d!r:.60}")
        variables = d.get("variables", {})
        if not (isinstance(variables, Mapping)
                and all(isinstance(k, str) and isinstance(v, str) for k, v in variables.items())):
            raise ValueError(f"signature {d.get('name')!r}: field 'variables' must map names to "
                             "data types")
        return Signature(str(d["name"]), tuple(ParamSig.from_dict(p) for p in d["params"]),
                         str(d.get("device", "cpu")), dict(variables))


def _dims(param: str, field_name: str, value: Any) -> tuple[Dim, ...]:
    if not isinstance(value, list) or not all(_is_dim(x) for x in value):
        raise ValueError(f"parameter {param!r}: field {field_name!r} must be a list of "
                         f"dimensions (ints, names or expression trees), not {value!r:.60}")
    return tuple(value)


def _is_dim(x: Any, depth: int = 0) -> bool:
    if isinstance(x, bool):
        return False
    if isinstance(x, (int, float, str)):
        return True
    if not (isinstance(x, list) and x and depth < 64):
        return False
    op, *rest = x
    if op == "Cast":
        return len(rest) == 2 and isinstance(rest[0], str) and _is_dim(rest[1], depth + 1)
    arity = {"Not": 1, "Select": 3}.get(op, 2)
    return ((op in _OPS or op == "Select") and len(rest) == arity
            and all(_is_dim(t, depth + 1) for t in rest))


# -- expression trees ----------------------------------------------------------------------------


def _trunc_div(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return a / b


def _floor_div(a: Any, b: Any) -> Any:
    return a // b if isinstance(a, int) and isinstance(b, int) else math.floor(a / b)


def _trunc_mod(a: Any, b: Any) -> Any:
    return a - b * _trunc_div(a, b) if isinstance(a, int) and isinstance(b, int) else math.fmod(a, b)


_OPS: dict[str, Callable[..., Any]] = {
    "Add": lambda a, b: a + b, "Sub": lambda a, b: a - b, "Mul": lambda a, b: a * b,
    "Min": min, "Max": max, "FloorDiv": _floor_div, "FloorMod": lambda a, b: a % b,
    "Div": _trunc_div, "Mod": _trunc_mod,
    "LT": lambda a, b: a < b, "LE": lambda a, b: a <= b, "GT": lambda a, b: a > b,
    "GE": lambda a, b: a >= b, "EQ": lambda a, b: a == b, "NE": lambda a, b: a != b,
    "And": lambda a, b: bool(a) and bool(b), "Or": lambda a, b: bool(a) or bool(b),
    "Not": lambda a: not a,
}
_DIVISIONS = frozenset(["FloorDiv", "FloorMod", "Div", "Mod"])
_SYMBOLS = {"Add": "+", "Sub": "-", "Mul": "*", "FloorDiv": "//", "FloorMod": "%", "Div": "/",
            "Mod": "%"}


def evaluate_tree(tree: Dim, values: Mapping[str, Any]) -> Any:
    """The value of a dimension (int, variable name or expression tree) given ``values``."""
    if isinstance(tree, str):
        try:
            return values[tree]
        except KeyError:
            raise ValueError(f"cannot evaluate `{tree}`: its value is not known") from None
    if not isinstance(tree, list):
        return tree
    op = tree[0]
    if op == "Cast":
        v = evaluate_tree(tree[2], values)
        return float(v) if str(tree[1]).startswith(("float", "bfloat")) else int(v)
    if op == "Select":
        return evaluate_tree(tree[2] if evaluate_tree(tree[1], values) else tree[3], values)
    fn = _OPS.get(op)
    if fn is None:
        raise ValueError(f"cannot evaluate a {op} on the host")
    operands = [evaluate_tree(t, values) for t in tree[1:]]
    if op in _DIVISIONS and operands[1] == 0:
        raise ZeroDivisionError(f"division by zero evaluating {show_dim(tree)}")
    return fn(*operands)


def show_dim(tree: Dim) -> str:
    """A dimension as text: ``64``, ``n``, ``n * 2``."""
    if not isinstance(tree, list):
        return str(tree)
    op, *rest = tree
    if op in _SYMBOLS:
        return f"{_paren(rest[0])} {_SYMBOLS[op]} {_paren(rest[1])}"
    if op == "Cast":
        return f"{rest[0]}({show_dim(rest[1])})"
    return f"{op.lower()}({', '.join(show_dim(t) for t in rest)})"


def _paren(tree: Dim) -> str:
    text = show_dim(tree)
    return f"({text})" if isinstance(tree, list) and tree[0] in _SYMBOLS else text


def _tuple_text(items: Sequence[Any]) -> str:
    texts = [show_dim(x) if isinstance(x, (list, str)) else str(x) for x in items]
    return "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")"


def _tree_vars(tree: Dim) -> list[str]:
    if isinstance(tree, str):
        return [tree]
    if isinstance(tree, list):
        start = 2 if tree[0] == "Cast" else 1
        return [v for t in tree[start:] for v in _tree_vars(t)]
    return []



# -- the checker ---------------------------------------------------------------------------------


class ArgumentChecker:
    """The checks of one :class:`Signature`, prepared once; calling it on the arguments returns
    ``{variable name: value}`` for every scalar parameter and symbolic dimension, or raises
    naming the function and the parameter."""

    def __init__(self, signature: Signature) -> None:
        self.signature = signature
        self.name = signature.name
        params = signature.params
        self._count_error = (f"{self.name}() takes {len(params)} argument"
                             f"{'' if len(params) == 1 else 's'} "
                             f"({', '.join(p.name for p in params)})")
        origins = _origins(params)
        self._checks: list[Callable[[Any, dict[str, Any]], None]] = []
        self._late: list[Callable[[Sequence[Any], dict[str, Any]], None]] = []
        for index, p in enumerate(params):
            if p.kind == "buffer":
                buf = _BufferCheck(self.name, index, p, signature.device, origins)
                self._checks.append(buf)
                if buf.late:
                    self._late.append(buf.check_late)
            elif p.kind == "handle":
                self._checks.append(_HandleCheck(self.name, p))
            else:
                self._checks.append(_ScalarCheck(self.name, p, origins))

    def __call__(self, args: Sequence[Any]) -> dict[str, Any]:
        if len(args) != len(self._checks):
            raise TypeError(f"{self._count_error}, got {len(args)}")
        values: dict[str, Any] = {}
        for check, arg in zip(self._checks, args):
            check(arg, values)
        for late in self._late:
            late(args, values)
        return values


def _origins(params: Sequence[ParamSig]) -> dict[str, str]:
    """Where each variable gets its value: the first parameter (in order) that has it."""
    out: dict[str, str] = {}
    for p in params:
        if p.kind == "scalar" and p.var is not None:
            out.setdefault(p.var, f"argument {p.name!r}")
        for what, dims in (("shape", p.shape), ("strides", p.strides)):
            for k, d in enumerate(dims):
                if isinstance(d, str):
                    out.setdefault(d, f"argument {p.name!r} {what}[{k}]")
    return out


class _ScalarCheck:
    def __init__(self, func: str, p: ParamSig, origins: Mapping[str, str]) -> None:
        self.where = f"{func}: argument {p.name!r}"
        self.dtype = p.dtype
        self.var = p.var or p.name
        self.origin = origins.get(self.var, "")
        self.kind = ("bool" if p.dtype == "bool" else
                     "int" if p.dtype.startswith(("int", "uint")) else "float")
        self.range: tuple[int, int] | None = None
        if self.kind == "int":
            bits = int(p.dtype.lstrip("uint") or 32)
            self.range = ((0, 2**bits - 1) if p.dtype.startswith("u")
                          else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1))

    def __call__(self, arg: Any, values: dict[str, Any]) -> None:
        value = self.convert(arg)
        bound = values.get(self.var)
        if bound is not None and bound != value:
            raise ValueError(f"{self.where}: expected {bound} (the value {self.origin} gives "
                             f"{self.var}), got {value}")
        values[self.var] = value

    def convert(self, arg: Any) -> Any:
        if hasattr(arg, "ndim") and getattr(arg, "ndim", None) == 0 and hasattr(arg, "item"):
            arg = arg.item()  # a 0-d array or a numpy scalar
        got = f"{type(arg).__name__} {arg!r}"
        if self.kind == "bool":
            if isinstance(arg, (bool, int)):
                return bool(arg)
            raise TypeError(f"{self.where}: expected a bool, got {got}")
        if self.kind == "int":
            if isinstance(arg, bool) or not hasattr(arg, "__index__"):
                raise TypeError(f"{self.where}: expected an int ({self.dtype}), got {got}")
            value = int(arg.__index__())
            lo, hi = self.range or (value, value)
            if not lo <= value <= hi:
                raise ValueError(f"{self.where}: expected an int that fits in {self.dtype} "
                                 f"({lo} to {hi}), got {value}")
            return value
        if isinstance(arg, bool) or not isinstance(arg, (int, float)):
            raise TypeError(f"{self.where}: expected a number ({self.dtype}), got {got}")
        limit = FLOAT_OVERFLOW.get(self.dtype)
        try:
            number = float(arg)
        except OverflowError:
            text = repr(arg) if len(repr(arg)) <= 40 else f"an int of {len(str(abs(arg)))} digits"
            raise ValueError(f"{self.where}: {text} is too large for {self.dtype} (the "
                             f"largest finite {self.dtype} is "
                             f"{_FLOAT_MAX.get(self.dtype, 1.7976931348623157e308)!r})") from None
        if limit is not None and math.isfinite(number) and abs(number) >= limit:
            becomes = "nan" if self.dtype == "float8_e4m3fn" else "inf"
            raise ValueError(f"{self.where}: {number!r} does not fit in {self.dtype} (it would "
                             f"become {becomes}); the largest finite {self.dtype} is "
                             f"{_FLOAT_MAX[self.dtype]!r}; pass inf explicitly if you mean it")
        return number


# Floating types narrower than Python's float: the magnitude from which a value rounds to
# infinity (or to NaN for float8_e4m3fn, which has no infinity); the largest finite value is
# tvm.ir.literal.FLOAT_MAX, the table literals are checked against.
FLOAT_OVERFLOW = {"float16": 65520.0, "bfloat16": 3.3961775292304e38,
                   "float32": 3.4028235677973366e38, "float8_e4m3fn": 464.0,
                   "float8_e5m2": 61440.0}


class _HandleCheck:
    def __init__(self, func: str, p: ParamSig) -> None:
        self.where = f"{func}: argument {p.name!r}"

    def __call__(self, arg: Any, values: dict[str, Any]) -> None:
        if arg is None or (isinstance(arg, int) and not isinstance(arg, bool)):
            return
        if hasattr(arg, "__array_interface__") or hasattr(arg, "__dlpack__"):
            return
        raise TypeError(f"{self.where}: expected a pointer (an int address, None or an array), "
                        f"got {type(arg).__name__}")


class _BufferCheck:
    """Rank, dtype, device, shape (binding variables) and strides of one array parameter."""

    def __init__(self, func: str, index: int, p: ParamSig, device: str,
                 origins: Mapping[str, str]) -> None:
        self.where = f"{func}: argument {p.name!r}"
        self.index = index
        self.ndim = len(p.shape)
        self.dtype = _canon_dtype(p.dtype)
        self.device = device
        self.shape = p.shape
        self.strides = p.strides
        self.origins = origins
        ints = tuple(d for d in p.shape if isinstance(d, int))
        self.static = ints if len(ints) == len(p.shape) else None
        self.binds = [(k, d) for k, d in enumerate(p.shape) if isinstance(d, str)]
        self.stride_binds = [(k, d) for k, d in enumerate(p.strides) if isinstance(d, str)]
        self.late = (any(isinstance(d, list) for d in p.shape) or bool(p.strides))
        # numpy arrays of the expected dtype and static shape take a fast path (numpy is
        # imported when a checker is built, never at ``import tvm``)
        self.ndarray: Any = None
        self.np_dtype: Any = None
        try:
            import numpy as np

            self.ndarray = np.ndarray
            self.np_dtype = np.dtype(self.dtype)
        except ImportError:  # pragma: no cover - numpy is a core dependency
            pass
        except TypeError:  # a dtype numpy does not know by name (bfloat16 without ml_dtypes)
            self.np_dtype = None
        self.fast = self.static is not None and self.device == "cpu" and not p.strides
        self.written = p.written

    def __call__(self, arg: Any, values: dict[str, Any]) -> None:
        if type(arg) is self.ndarray:  # no conversion, no interface dicts
            flags = arg.flags
            if (self.fast and arg.dtype == self.np_dtype and arg.shape == self.static
                    and flags.c_contiguous and (flags.writeable or not self.written)):
                return
            shape = arg.shape
            info = _Array(shape, _canon_dtype(arg.dtype.name),
                          tuple(s // (arg.itemsize or 1) for s in arg.strides), "cpu", "cpu",
                          not flags.writeable, _foreign_order(arg.dtype))
        else:
            read = _read_array(arg)
            if read is None:
                raise TypeError(f"{self.where}: expected an array ({self.dtype}, shape "
                                f"{_tuple_text(self.shape)}): a numpy array, a torch tensor or an "
                                f"object with __dlpack__, __array_interface__ or "
                                f"__cuda_array_interface__; got {type(arg).__name__}")
            info = read
        self.check(info, values)

    def check(self, info: _Array, values: dict[str, Any]) -> None:
        if info.device != self.device:
            raise ValueError(f"{self.where}: expected an array on {self.device}, got one on "
                             f"{info.where or info.device}")
        if len(info.shape) != self.ndim:
            raise ValueError(f"{self.where}: expected a {self.ndim}-d array of shape "
                             f"{_tuple_text(self.shape)}, got a {len(info.shape)}-d array of "
                             f"shape {tuple(info.shape)}")
        if info.dtype != self.dtype:
            raise ValueError(f"{self.where}: expected dtype {self.dtype}, got {info.dtype}")
        if info.byteorder:
            raise ValueError(f"{self.where}: expected {self.dtype} in the machine's byte order, "
                             f"got a {info.byteorder} array; convert it with "
                             "x.astype(x.dtype.newbyteorder('='))")
        if info.readonly and self.written:
            raise ValueError(f"{self.where}: the function writes to this array, but it is "
                             "read-only (e.g. a memmap opened with mode='r', an array over "
                             "bytes, or one with setflags(write=False)); pass a writable copy: "
                             "numpy.array(x)")
        shape = tuple(info.shape)
        if self.static is not None:
            if shape != self.static:
                raise ValueError(f"{self.where}: expected shape {self.static}, got {shape}")
        else:
            self._check_dims(shape, values)
        if not self.strides:
            self._check_contiguous(info)
        else:
            strides = info.strides if info.strides is not None else _contiguous(shape)
            for k, name in self.stride_binds:
                values.setdefault(name, strides[k])

    def _check_dims(self, shape: tuple[int, ...], values: dict[str, Any]) -> None:
        for k, d in enumerate(self.shape):
            if isinstance(d, int):
                if shape[k] != d:
                    raise ValueError(f"{self.where}: expected shape {_tuple_text(self.shape)}, "
                                     f"got {shape} (dimension {k} is {shape[k]}, expected {d})")
                continue
            if not isinstance(d, str):
                continue  # an expression: checked once every variable is bound
            bound = values.get(d)
            if bound is None:
                values[d] = shape[k]
            elif bound != shape[k]:
                raise ValueError(f"{self.where}: expected shape {_tuple_text(self.shape)} with "
                                 f"{d} = {bound} (from {self.origins.get(d, 'another argument')}), "
                                 f"got {shape}")

    def _check_contiguous(self, info: _Array) -> None:
        if info.strides is None or 0 in info.shape:
            return  # an empty array has no element whose place could be wrong
        expected = _contiguous(info.shape)
        for got, want, ext in zip(info.strides, expected, info.shape):
            if got != want and ext != 1:  # the stride of an extent-1 dimension never matters
                raise ValueError(
                    f"{self.where}: expected a contiguous (row-major) array, got strides "
                    f"{tuple(info.strides)} (in elements) for shape {tuple(info.shape)}; pass a "
                    f"contiguous copy: numpy.ascontiguousarray(x) (torch: x.contiguous())")

    def check_late(self, args: Sequence[Any], values: dict[str, Any]) -> None:
        """Expression dimensions and explicit strides, once every variable is bound."""
        info = _read_array(args[self.index])
        if info is None:  # pragma: no cover - __call__ raised already
            return
        shape = tuple(info.shape)
        for k, d in enumerate(self.shape):
            if isinstance(d, list):
                want = evaluate_tree(d, values)
                if want != shape[k]:
                    raise ValueError(f"{self.where}: expected shape {_tuple_text(self.shape)}, "
                                     f"got {shape} (dimension {k} is {shape[k]}, but "
                                     f"{show_dim(d)} is {want})")
        if not self.strides:
            return
        if 0 in shape:
            return
        actual = info.strides if info.strides is not None else _contiguous(shape)
        expected = tuple(int(evaluate_tree(s, values)) for s in self.strides)
        for got, want, ext in zip(actual, expected, shape):
            if got != want and ext != 1:
                raise ValueError(f"{self.where}: expected strides {expected} (in elements), got "
                                 f"{tuple(actual)}")
