"""``Tx``: the tile-primitive facade. ``from tvm.script.tirx import tile as Tx``; ``T.tile is Tx``.

``Tx.copy(dst, src)`` builds a :class:`~tvm.ir.TilePrimitiveCall` of ``tirx.tile.copy`` at thread
scope. ``Tx.cta.copy``, ``Tx.warp.gemm``, ``Tx.wg.gemm_async`` (``Tx.warpgroup`` too),
``Tx.cluster.*`` and ``Tx.thread.*`` set the execution scope of that one call; ``T.cta`` is
``Tx.cta``. Every op takes the keywords ``dispatch=`` (force a variant), ``workspace=`` (a dict
of scratch buffers) and ``config=`` (static options).

The op set is whatever is registered as ``tirx.tile.<op>`` when the name is looked up; ops with a
``tile_spec`` attribute (a :class:`~tvm.tirx.operator.tile_primitive.ops.TileOpSpec`) get their
arguments bound and checked by it.
"""

from __future__ import annotations

import sys
import textwrap
import types
from dataclasses import dataclass
from typing import Any

from ...ir.buffer import Buffer, BufferRegion
from ...ir.op import OP_REGISTRY, Op, OpCategory
from ...ir.stmt import TilePrimitiveCall
from ...tirx.operator.tile_primitive import ops as _ops  # also registers the core tile ops
from ...tirx.operator.tile_primitive.common import simplify_regions

__all__ = ["ComposeOpBuilder", "ComposeOpSpec", "ScopeNamespace", "cluster", "compose_op", "cta",
           "thread", "warp", "warpgroup", "wg"]


_ABSENT = object()


def _tile_op(name: str) -> Op | None:
    op = OP_REGISTRY.get(f"tirx.tile.{name}")
    if op is None or op.category is not OpCategory.TILE_PRIMITIVE:
        return None
    return op


class _TileOpCaller:
    """``Tx.<op>`` / ``Tx.<scope>.<op>``: builds one TilePrimitiveCall statement.

    The instances are only the implementation: :func:`_make_caller` wraps each in a plain
    function carrying the op's real signature and help text, so ``help(Tx.sum)`` and
    ``inspect.signature(Tx.sum)`` show
    ``sum(dst, src, axes=-1, accum=False, thread_reduce=False, *, ...)``.
    """

    __slots__ = ("op", "scope")

    def __init__(self, op: Op, scope: str) -> None:
        self.op = op
        self.scope = scope

    def __call__(self, *args: Any, dispatch: str | None = None,
                 workspace: dict[str, Any] | None = None, config: dict[str, Any] | None = None,
                 **kwargs: Any) -> TilePrimitiveCall:
        name = self.op.name.removeprefix("tirx.tile.")
        spec = self.op.get_attr("tile_spec")
        if spec is not None:
            # The tile-only check comes first: `Tx.exp(x)` on an expression is a T.exp mix-up,
            # whatever else is missing.
            for pname in spec.buffer_params:
                pos = spec.params.index(pname)
                value = args[pos] if pos < len(args) else kwargs.get(pname, _ABSENT)
                if value is not _ABSENT and not isinstance(value, (Buffer, BufferRegion)):
                    raise TypeError(
                        f"Tx.{name} is tile-only and expects `{pname}` to be a Buffer or "
                        f"BufferRegion; use T.{name} for expression/builtin calls"
                    )
            kwargs, config = spec.split_config(kwargs, config)
            bound = _ops.index_functions_as_ir(spec.bind(tuple(args), kwargs))
        else:
            if kwargs:
                raise TypeError(f"Tx.{name} takes no keyword arguments {sorted(kwargs)}")
            bound = list(args)
        if dispatch is not None and not isinstance(dispatch, str):
            raise TypeError(f"Tx.{name}(dispatch=...) expects a variant name (a str)")
        return simplify_regions(TilePrimitiveCall(self.op, bound, scope=self.scope,
                                                  dispatch=dispatch, workspace=workspace,
                                                  config=config))


def _make_caller(op: Op, scope: str, label: str) -> Any:
    """A function ``Tx.<op>`` (or ``Tx.<scope>.<op>``) with the op's signature and help."""
    impl = _TileOpCaller(op, scope)
    name = op.name.removeprefix("tirx.tile.")

    def caller(*args: Any, **kwargs: Any) -> TilePrimitiveCall:
        return impl(*args, **kwargs)

    spec = op.get_attr("tile_spec")
    caller.__name__ = name
    caller.__qualname__ = f"{label}.{name}"
    caller.__module__ = __name__
    caller.__doc__ = spec.help_text() if spec is not None else f"The tile primitive {op.name}."
    if spec is not None:
        caller.__signature__ = spec.python_signature()  # type: ignore[attr-defined]
    caller.op = op  # type: ignore[attr-defined]
    caller.scope = scope  # type: ignore[attr-defined]
    caller.__tir_tile_op__ = op.name  # type: ignore[attr-defined]
    return caller


@dataclass
class ComposeOpSpec:
    """``with Tx.compose_op(...):``: the parser makes one ``tirx.tile.compose_op`` call of the
    tile primitive calls in the block."""

    scope: str
    dispatch: str | None
    workspace: dict[str, Any] | None
    config: dict[str, Any] | None


class ComposeOpBuilder:
    """``Tx.compose_op(workspace=None, dispatch=None, config=None, **config)``: compose the tile
    primitive calls of a ``with`` block into one op (a backend may lower them together; the
    generic fallback runs them in order). Keyword arguments other than these join ``config``,
    as in the seed (``Tx.compose_op(schedule="A")``)."""

    def __init__(self, scope: str) -> None:
        self.scope = scope
        self.__name__ = "compose_op"

    def __call__(self, *, workspace: dict[str, Any] | None = None, dispatch: str | None = None,
                 config: dict[str, Any] | None = None, **kwargs: Any) -> ComposeOpSpec:
        if dispatch is not None and not isinstance(dispatch, str):
            raise TypeError("Tx.compose_op(dispatch=...) expects a variant name (a str)")
        merged = {**(config or {}), **kwargs} or None
        return ComposeOpSpec(self.scope, dispatch, workspace, merged)

    def __repr__(self) -> str:
        return f"<Tx.compose_op ({self.scope} scope)>"


class ScopeNamespace:
    """``Tx.<label>``: tile primitives at one execution scope. Only tile primitives live here."""

    def __init__(self, scope: str, label: str) -> None:
        self._scope = scope
        self._label = label
        self._ops: dict[str, Any] = {}

    @property
    def scope(self) -> str:
        return self._scope

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name == "compose_op":
            return ComposeOpBuilder(self._scope)
        return _caller(self._ops, name, self._scope, f"Tx.{self._label}",
                       f"'Tx.{self._label}.{name}' is not a tile primitive; the "
                       f"'Tx.{self._label}.' scope prefix applies only to tile primitives")

    def __dir__(self) -> list[str]:
        return [op.name.removeprefix("tirx.tile.") for op in Op.list("tirx.tile.")]

    def __repr__(self) -> str:
        return f"<Tx.{self._label}: tile primitives at {self._scope} scope>"


def _caller(cache: dict[str, Any], name: str, scope: str, label: str, missing: str) -> Any:
    op = _tile_op(name)
    if op is None:
        cache.pop(name, None)
        hint = _ops.suggest_op(name)
        raise AttributeError(f"{missing}; {hint}" if hint else missing)
    got = cache.get(name)
    if got is None or got.op is not op:  # re-registered (e.g. by a test) -> new caller
        got = _make_caller(op, scope, label)
        cache[name] = got
    return got


cluster = ScopeNamespace("cluster", "cluster")
cta = ScopeNamespace("cta", "cta")
warpgroup = ScopeNamespace("warpgroup", "warpgroup")
wg = ScopeNamespace("warpgroup", "wg")
warp = ScopeNamespace("warp", "warp")
thread = ScopeNamespace("thread", "thread")

compose_op = ComposeOpBuilder("thread")

_THREAD_OPS: dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _caller(_THREAD_OPS, name, "thread", "Tx",
                   f"module 'tvm.script.tirx.tile' has no attribute {name!r}: {name!r} is not a "
                   f"tile primitive (tile primitives are ops registered as 'tirx.tile.<name>')")


#: what ``dir(Tx)`` lists besides the ops: the scope prefixes and compose_op
_PUBLIC = ("cluster", "compose_op", "cta", "thread", "warp", "warpgroup", "wg")


def __dir__() -> list[str]:
    """The ops registered now and the scope prefixes; not the module's internals (its imports,
    helpers and classes stay reachable by name)."""
    return sorted({*_PUBLIC, *(op.name.removeprefix("tirx.tile.") for op in Op.list("tirx.tile."))})


class _TxModule(types.ModuleType):
    """The module's type: its docstring ends with the tile primitives registered when it is
    read, one line each, so that ``help(Tx)`` lists them (backends may add ops later)."""

    @property
    def __doc__(self) -> str:  # type: ignore[override]  # computed: ops register after import
        return (f"{_DOC}\nTile primitives (help(Tx.<op>) shows one in full; Tx.<scope>.<op> "
                f"runs it at a scope):\n\n{textwrap.indent(_ops.op_summary(), '    ')}\n")


_DOC = __doc__ or ""
sys.modules[__name__].__class__ = _TxModule
