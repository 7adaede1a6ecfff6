"""Structural equality and hashing, up to renaming of variables and buffers.

Variables and buffers are matched by where they are *defined* (function parameters and buffer
map, loop variables, lets, buffer allocations and declarations, kernel index definitions): two
functions that differ only in names are equal. A variable used without a definition (free) must
be the same object on both sides, unless ``map_free_vars=True``. Which fields define is data of
the node classes (``Node._def_fields``, ``Node._buffer_def_fields``), so this module imports no
statement, function or buffer module, and those may use it.
"""

from __future__ import annotations

import enum
import math
from typing import Any

from .dtype import DataType
from .expr import Var
from .node import Node
from .op import Op
from .recursion import depth_error, recursion_guard

__all__ = ["assert_structural_equal", "structural_equal", "structural_hash"]


def _def_fields(node: Node) -> frozenset[str]:
    """The fields whose variables/buffers ``node`` defines (each node class declares them)."""
    return node._def_fields


def _is_buffer(x: Any) -> bool:
    """A buffer (its class sets ``_buffer_def_fields``): matched, like a variable, by where it
    is defined. No buffer class is named here: the buffer and layout modules compare
    expressions with this module, so it sits below them."""
    return isinstance(x, Node) and x._buffer_def_fields is not None


class _Mismatch(Exception):
    def __init__(self, path: str, lhs: Any, rhs: Any, why: str) -> None:
        super().__init__(path)
        self.path, self.lhs, self.rhs, self.why = path, lhs, rhs, why


class _Equal:
    def __init__(self, map_free_vars: bool) -> None:
        self.map_free_vars = map_free_vars
        self.lmap: dict[int, Any] = {}
        self.rmap: dict[int, Any] = {}

    def fail(self, path: str, a: Any, b: Any, why: str) -> None:
        raise _Mismatch(path, a, b, why)

    def bind(self, path: str, a: Any, b: Any) -> None:
        la, rb = self.lmap.get(id(a)), self.rmap.get(id(b))
        if la is None and rb is None:
            self.lmap[id(a)] = b
            self.rmap[id(b)] = a
            return
        if la is not b or rb is not a:
            self.fail(path, a, b, "defined twice or bound to different objects")

    def var(self, a: Var, b: Var, path: str, define: bool) -> None:
        mapped = self.lmap.get(id(a))
        if mapped is not None and not define:
            if mapped is not b:
                self.fail(path, a, b, f"variable {a.name} corresponds to {getattr(mapped, 'name', mapped)}, not {b.name}")
            return
        if not define and not self.map_free_vars:
            if a is not b:
                self.fail(path, a, b, f"free variables {a.name} and {b.name} are different objects")
            return
        self.fields(a, b, path)
        self.bind(path, a, b)

    def buffer(self, a: Any, b: Any, path: str, define: bool) -> None:
        mapped = self.lmap.get(id(a))
        if mapped is not None:
            if mapped is not b:
                self.fail(path, a, b, f"buffer {a.name} corresponds to another buffer, not {b.name}")
            return
        if not define and not self.map_free_vars:
            if a is b:
                return
            self.fail(path, a, b, f"buffers {a.name} and {b.name} are not defined here and differ")
        if id(a.data) in self.lmap:
            self.value(a.data, b.data, f"{path}.data")
        else:
            self.var(a.data, b.data, f"{path}.data", define=True)
        shape_fields = a._buffer_def_fields
        for name, va in a.fields():
            if name != "data":
                # A defined buffer defines the variables its shape introduces (T.match_buffer's n)
                self.value(va, getattr(b, name), f"{path}.{name}",
                           define and name in shape_fields)
        self.bind(path, a, b)

    def fields(self, a: Node, b: Node, path: str) -> None:
        defs = _def_fields(a)
        for name, va in a.fields():
            self.value(va, getattr(b, name), f"{path}.{name}", name in defs)

    def value(self, a: Any, b: Any, path: str, define: bool = False) -> None:
        if a is b and not define and not isinstance(a, (Node, list, dict)):
            return
        if isinstance(a, Node):
            self.node(a, b, path, define)
        elif isinstance(a, (list, tuple)):
            self.sequence(a, b, path, define)
        elif isinstance(a, dict):
            self.mapping(a, b, path, define)
        else:
            self.leaf(a, b, path)

    def node(self, a: Node, b: Any, path: str, define: bool) -> None:
        if isinstance(a, Var):
            if not isinstance(b, Var):
                self.fail(path, a, b, "a variable against something else")
            self.var(a, b, path, define)
            return
        if _is_buffer(a):
            if not _is_buffer(b):
                self.fail(path, a, b, "a buffer against something else")
            self.buffer(a, b, path, define)
            return
        if type(a) is not type(b):
            self.fail(path, a, b, f"{type(a).__name__} against {type(b).__name__}")
        if a is b and not define and not self.lmap:
            return
        self.fields(a, b, f"{path}")

    def sequence(self, a: list[Any] | tuple[Any, ...], b: Any, path: str, define: bool) -> None:
        if not isinstance(b, (list, tuple)) or len(a) != len(b):
            other = len(b) if isinstance(b, (list, tuple)) else "?"
            self.fail(path, a, b, f"sequences of length {len(a)} and {other}")
        for i, (x, y) in enumerate(zip(a, b)):
            self.value(x, y, f"{path}[{i}]", define)

    def mapping(self, a: dict[Any, Any], b: Any, path: str, define: bool) -> None:
        if not isinstance(b, dict):
            self.fail(path, a, b, "a dict against something else")
        if all(isinstance(k, Var) for k in a):  # a buffer map: keys are parameters
            self.buffer_map(a, b, path, define)
            return
        if set(a) != set(b):
            self.fail(path, sorted(map(str, a)), sorted(map(str, b)), "different keys")
        for k in a:
            self.value(a[k], b[k], f"{path}[{k!r}]", define)

    def buffer_map(self, a: dict[Any, Any], b: dict[Any, Any], path: str, define: bool) -> None:
        if len(a) != len(b):
            self.fail(path, a, b, "buffer maps of different sizes")
        for k, v in a.items():
            kb = self.lmap.get(id(k))
            if kb is None or kb not in b:
                self.fail(path, k, None, f"parameter {k.name} has no buffer on the other side")
            self.value(v, b[kb], f"{path}[{k.name}]", define)

    def leaf(self, a: Any, b: Any, path: str) -> None:
        """Ops, dtypes and plain values (NaN equals NaN; 1 is not True)."""
        if isinstance(a, Op):
            if a is not b:
                self.fail(path, a, b, f"op {a.name} against {getattr(b, 'name', b)}")
        elif isinstance(a, DataType):
            if a != b:
                self.fail(path, a, b, f"dtype {a} against {b}")
        elif isinstance(a, float) and isinstance(b, float):
            if a != b and not (math.isnan(a) and math.isnan(b)):
                self.fail(path, a, b, f"{a!r} against {b!r}")
        elif isinstance(a, enum.Enum) or a is None or isinstance(a, (str, int, bool, float)):
            if type(a) is not type(b) or a != b:
                self.fail(path, a, b, f"{a!r} against {b!r}")
        elif a != b:
            self.fail(path, a, b, f"{a!r} against {b!r}")

def structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> bool:
    """True if ``lhs`` and ``rhs`` are the same IR up to renaming of defined variables."""
    try:
        _Equal(map_free_vars).value(lhs, rhs, type(lhs).__name__,
                                    (isinstance(lhs, Var) or _is_buffer(lhs)) and map_free_vars)
    except _Mismatch:
        return False
    except RecursionError as exc:
        raise depth_error(exc, "structural_equal") from None
    return True


def assert_structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> None:
    """Raise ValueError saying where ``lhs`` and ``rhs`` first differ."""
    try:
        with recursion_guard("assert_structural_equal"):
            _Equal(map_free_vars).value(lhs, rhs, type(lhs).__name__, False)
    except _Mismatch as m:
        def show(x: Any) -> str:
            try:
                text = x.script() if isinstance(x, Node) and not isinstance(x, Var) else repr(x)
            except Exception:
                text = repr(x)
            return text if len(text) < 400 else text[:400] + " ..."

        raise ValueError(
            f"IR differs at {m.path}: {m.why}\n  lhs: {show(m.lhs)}\n  rhs: {show(m.rhs)}"
        ) from None


class _Hasher:
    def __init__(self, map_free_vars: bool) -> None:
        self.map_free_vars = map_free_vars
        self.ids: dict[int, int] = {}

    def var_id(self, v: Any, define: bool) -> int:
        got = self.ids.get(id(v))
        if got is not None:
            return got
        if define or self.map_free_vars:
            self.ids[id(v)] = len(self.ids) + 1
            return self.ids[id(v)]
        return hash(("free", id(v)))

    def h(self, x: Any, define: bool = False) -> int:
        if isinstance(x, Var):
            known = id(x) in self.ids
            vid = self.var_id(x, define)
            if known or not (define or self.map_free_vars):
                return hash(("var", vid))
            return hash(("var", str(x.dtype), self.h([x.ptr_dtype, x.ptr_scope])))
        if _is_buffer(x):
            known = id(x) in self.ids
            vid = self.var_id(x, define)
            if known or not (define or self.map_free_vars):
                return hash(("buf", vid))
            self.var_id(x.data, True)
            shape_fields = x._buffer_def_fields
            return hash(("buf", tuple(self.h(v, define and k in shape_fields)
                                      for k, v in x.fields() if k != "data")))
        if isinstance(x, Node):
            defs = _def_fields(x)
            return hash((type(x).__name__, tuple(self.h(v, k in defs) for k, v in x.fields())))
        if isinstance(x, (list, tuple)):
            return hash(("seq", tuple(self.h(v, define) for v in x)))
        if isinstance(x, dict):
            if all(isinstance(k, Var) for k in x):
                return hash(("bmap", tuple(self.h(v, define) for v in x.values())))
            return hash(("dict", tuple(sorted((str(k), self.h(v, define)) for k, v in x.items()))))
        if isinstance(x, Op):
            return hash(("op", x.name))
        if isinstance(x, DataType):
            return hash(str(x))
        if isinstance(x, enum.Enum):
            return hash(x.value)
        try:
            return hash(x)
        except TypeError:
            return hash(repr(x))


def structural_hash(node: Any, map_free_vars: bool = False) -> int:
    """A hash consistent with :func:`structural_equal`."""
    try:
        return _Hasher(map_free_vars).h(node)
    except RecursionError as exc:
        raise depth_error(exc, "structural_hash") from None
