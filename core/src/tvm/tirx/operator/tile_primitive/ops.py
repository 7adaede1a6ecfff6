"""The tile primitives: one spec per op, registered as ``tirx.tile.<name>``.

Signatures are destination first, as in the seed: ``copy(dst, src)``, ``fill(dst, value)``,
``exp(dst, src, bias=None, scale=None)``, ``add(dst, src1, src2)``,
``sum(dst, src, axes=-1, accum=False)``, ``gemm(D, A, B, C, transpose_A=False,
transpose_B=False, alpha=1.0, beta=0.0)``, ``select(dst, true_value, false_value, pred)``.
Every op also takes ``workspace=`` and ``dispatch=`` (and ``config=``) keywords.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .... import _registry
from ....ir.op import CallEffect, Op, OpCategory

__all__ = ["COMPOSE_OP", "EXEC_SCOPE_ALIASES", "TILE_OPS", "TileOpSpec", "core_registration",
           "get_spec", "make_call", "make_compose_op"]

# Script spellings of the execution scopes (``Tx.wg.copy`` is ``Tx.warpgroup.copy``).
EXEC_SCOPE_ALIASES = {"wg": "warpgroup"}

_NO_DEFAULT = object()


@dataclass(frozen=True)
class TileOpSpec:
    """A tile primitive's signature.

    ``params`` are the parameter names in order; ``defaults`` gives defaults of trailing ones;
    ``buffer_params`` must be a Buffer or BufferRegion (the tile-only check); ``family`` groups
    ops lowered the same way (copy, unary, binary, reduce, gemm, ...).
    """

    name: str
    params: tuple[str, ...]
    family: str
    buffer_params: tuple[str, ...] = ("dst",)
    defaults: dict[str, Any] = field(default_factory=dict)
    doc: str = ""

    @property
    def op_name(self) -> str:
        return f"tirx.tile.{self.name}"

    def bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        """Positional argument list (defaults filled) from a call's args and kwargs."""
        if len(args) > len(self.params):
            raise TypeError(f"Tx.{self.name} takes at most {len(self.params)} arguments "
                            f"({', '.join(self.params)}), got {len(args)}")
        out: list[Any] = list(args)
        for name in self.params[len(args):]:
            if name in kwargs:
                out.append(kwargs.pop(name))
            elif name in self.defaults:
                out.append(self.defaults[name])
            else:
                raise TypeError(f"Tx.{self.name} is missing argument {name!r} "
                                f"(signature: {self.signature()})")
        dup = [k for k in kwargs if k in self.params]
        if dup:
            raise TypeError(f"Tx.{self.name} got multiple values for {dup}")
        if kwargs:
            raise TypeError(f"Tx.{self.name} got unexpected keyword argument(s) {sorted(kwargs)} "
                            f"(signature: {self.signature()})")
        return out

    def signature(self) -> str:
        parts = []
        for p in self.params:
            parts.append(f"{p}={self.defaults[p]!r}" if p in self.defaults else p)
        return f"{self.name}({', '.join(parts)})"


UNARY_OPS = ("exp", "exp2", "log", "sqrt", "rsqrt", "reciprocal", "abs", "neg", "silu", "tanh", "sigmoid", "relu")
BINARY_OPS = ("add", "sub", "mul", "fdiv", "maximum", "minimum")
REDUCE_OPS = ("sum", "max", "min")

TILE_OPS: dict[str, TileOpSpec] = {}


def _add(spec: TileOpSpec) -> None:
    TILE_OPS[spec.name] = spec


_add(TileOpSpec("copy", ("dst", "src"), "copy", ("dst", "src"), doc="dst = src"))
_add(TileOpSpec("copy_async", ("dst", "src"), "copy", ("dst", "src"),
                doc="dst = src, asynchronously (completion is the variant's contract)"))
_add(TileOpSpec("fill", ("dst", "value"), "fill", doc="dst[...] = value"))
_add(TileOpSpec("memset", ("dst", "value"), "fill", doc="dst[...] = value"))
_add(TileOpSpec("zero", ("dst",), "fill", doc="dst[...] = 0"))
_add(TileOpSpec("cast", ("dst", "src"), "cast", ("dst", "src"), doc="dst = cast(src, dst.dtype)"))
for _u in UNARY_OPS:
    _add(TileOpSpec(_u, ("dst", "src", "bias", "scale"), "unary", ("dst", "src"),
                    {"bias": None, "scale": None}, doc=f"dst = {_u}(src * scale + bias)"))
for _b in BINARY_OPS:
    _add(TileOpSpec(_b, ("dst", "src1", "src2"), "binary", ("dst",),
                    doc=f"dst = {_b}(src1, src2); a source may be a scalar"))
_add(TileOpSpec("fma", ("dst", "src1", "src2", "src3"), "fma", ("dst",), doc="dst = src1 * src2 + src3"))
_add(TileOpSpec("select", ("dst", "true_value", "false_value", "pred"), "select", ("dst",),
                doc="dst = pred ? true_value : false_value (pred: a bool expression of the element "
                    "indices, a bool buffer, or a scalar)"))
for _r in REDUCE_OPS:
    _add(TileOpSpec(_r, ("dst", "src", "axes", "accum"), "reduce", ("dst", "src"),
                    {"axes": -1, "accum": False},
                    doc=f"dst = {_r} of src over axes (dst keeps the other axes); accum adds to dst"))
_add(TileOpSpec("gemm", ("D", "A", "B", "C", "transpose_A", "transpose_B", "alpha", "beta"), "gemm",
                ("D", "A", "B"), {"C": None, "transpose_A": False, "transpose_B": False, "alpha": 1.0, "beta": 0.0},
                doc="D = alpha * op(A) @ op(B) + beta * C"))
_add(TileOpSpec("gemm_async", ("D", "A", "B", "transpose_A", "transpose_B", "accum"), "gemm",
                ("D", "A", "B"), {"transpose_A": False, "transpose_B": False, "accum": False},
                doc="D[M, N] (+)= A @ B^T with A [M, K] and B [N, K] (both K-major, as the tensor "
                    "cores and the seed take them); transpose_A: A is [K, M]; transpose_B: B is "
                    "[K, N]; issued asynchronously"))
_add(TileOpSpec("permute_layout", ("dst", "src"), "copy", ("dst", "src"),
                doc="dst = src where the two buffers have different layouts"))
_add(TileOpSpec("binary_chain", ("dst", "src1", "src2", "src3", "op1", "op2"), "compose", ("dst",),
                doc="dst = (src1 op1 src2) op2 src3"))
_add(TileOpSpec("binary_reduce", ("dst", "reduce_dst", "src1", "src2", "op", "reduce_op", "axes"),
                "compose", ("dst", "reduce_dst"), {"axes": -1},
                doc="dst = src1 op src2; reduce_dst = reduce_op of dst over axes"))
_add(TileOpSpec("unary_reduce", ("dst", "reduce_dst", "src", "op", "reduce_op", "axes", "bias", "scale"),
                "compose", ("dst", "reduce_dst", "src"), {"axes": -1, "bias": None, "scale": None},
                doc="dst = op(src * scale + bias); reduce_dst = reduce_op of dst over axes"))
_add(TileOpSpec("reduce_negate", ("dst", "src", "reduce_op", "axes"), "compose", ("dst", "src"),
                {"axes": -1}, doc="dst = -(reduce_op of src over axes)"))
# ``with Tx.compose_op(...):`` -- the call's arguments are the tile primitive calls of the block
COMPOSE_OP = "compose_op"
_add(TileOpSpec(COMPOSE_OP, (), "compose", (),
                doc="the tile primitive calls of a `with Tx.compose_op(...):` block, as one op"))


@contextlib.contextmanager
def core_registration() -> Iterator[None]:
    """Register as core, outside any backend's transaction.

    Core's tile ops and fallback variants are registered when this package is first imported,
    which may happen while a backend's registration runs; they must not become that backend's
    entries, nor be rolled back if it fails.
    """
    token = _registry._journal.set(None)
    try:
        with _registry.owner_scope(_registry.CORE_OWNER):
            yield
    finally:
        _registry._journal.reset(token)


def _register() -> None:
    with core_registration():
        for spec in TILE_OPS.values():
            Op.register(spec.op_name, category=OpCategory.TILE_PRIMITIVE,
                        effect=CallEffect.UPDATE_STATE, signature=spec.params, tile_spec=spec)


_register()


def get_spec(name: str) -> TileOpSpec:
    spec = TILE_OPS.get(name.removeprefix("tirx.tile."))
    if spec is None:
        raise AttributeError(f"{name!r} is not a tile primitive; tile primitives: {sorted(TILE_OPS)}")
    return spec


def make_call(name: str, *args: Any, scope: str = "thread", dispatch: str | None = None,
              workspace: dict[str, Any] | None = None, config: dict[str, Any] | None = None,
              **kwargs: Any) -> Any:
    """A :class:`~tvm.ir.TilePrimitiveCall` of tile primitive ``name`` with its arguments bound
    in parameter order (defaults filled), after the tile-only check of ``buffer_params``.

    This is what ``Tx.<op>(...)`` and ``Tx.<scope>.<op>(...)`` build.
    """
    from ....ir import Buffer, BufferRegion, TilePrimitiveCall

    spec = get_spec(name)
    bound = spec.bind(args, dict(kwargs))
    for pname, value in zip(spec.params, bound):
        if pname in spec.buffer_params and not isinstance(value, (Buffer, BufferRegion)):
            raise TypeError(f"Tx.{spec.name} is tile-only and expects `{pname}` to be a Buffer or "
                            f"BufferRegion; use T.{spec.name} for expression/builtin calls")
    scope = EXEC_SCOPE_ALIASES.get(scope, scope)
    return TilePrimitiveCall(Op.get(spec.op_name), bound, scope=scope, dispatch=dispatch,
                             workspace=workspace, config=config)


def make_compose_op(calls: list[Any], *, scope: str = "thread", dispatch: str | None = None,
                    workspace: dict[str, Any] | None = None,
                    config: dict[str, Any] | None = None) -> Any:
    """The :class:`~tvm.ir.TilePrimitiveCall` of ``tirx.tile.compose_op`` over ``calls`` (what
    ``with Tx.compose_op(...):`` builds from the calls of its block)."""
    from ....ir import TilePrimitiveCall

    bad = [c for c in calls if not isinstance(c, TilePrimitiveCall)]
    if bad:
        raise TypeError(f"Tx.compose_op composes tile primitive calls only; got a "
                        f"{type(bad[0]).__name__}")
    scope = EXEC_SCOPE_ALIASES.get(scope, scope)
    return TilePrimitiveCall(Op.get(f"tirx.tile.{COMPOSE_OP}"), list(calls), scope=scope,
                             dispatch=dispatch, workspace=workspace, config=config)
