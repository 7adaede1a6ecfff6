"""Statements."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

from .buffer import Buffer, BufferRegion
from .expr import FloorDiv, IntImm, IterVar, Mul, PrimExpr, StringImm, Var, convert
from .node import Node
from .op import Op
from .span import Span
from .visitor import Mutator

__all__ = [
    "ALLOCATED_ADDR", "EXEC_SCOPES", "AllocBuffer", "AssertStmt", "AttrStmt", "Bind", "BufferStore",
    "DeclBuffer",
    "Evaluate", "ExecScope", "For", "ForKind", "IfThenElse", "LetStmt", "SBlock", "SBlockRealize",
    "SCOPE_ID_KINDS", "ScopeIdDef", "SeqStmt", "Stmt", "TilePrimitiveCall", "While", "fold_binds",
    "resolve_scope_ids", "seq",
]


class Stmt(Node):
    """Base of statements."""

    #: where the node was written (the parser sets it on every statement and call); not part
    #: of the structure: equality, hashing and printing ignore it, rewrites keep it
    span: Span | None = None


class BufferStore(Stmt):
    _fields = ("buffer", "value", "indices")

    def __init__(self, buffer: Buffer, value: Any, indices: Sequence[Any]) -> None:
        self.buffer = buffer
        self.value = convert(value, buffer.dtype)
        self.indices = [convert(i) for i in indices]


class Evaluate(Stmt):
    """Evaluate an expression for its side effects (usually a :class:`Call`)."""

    _fields = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = convert(value)


class SeqStmt(Stmt):
    _fields = ("seq",)

    def __init__(self, seq: Sequence[Stmt]) -> None:
        self.seq = list(seq)

    def __len__(self) -> int:
        return len(self.seq)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.seq)

    @property
    def body(self) -> Stmt:
        """The seed's nested view of a block that opens with a scope statement: the statements
        after its first one. The seed nests the rest of the block in ``T.device_entry()`` (an
        attribute statement there) and in each declaration; here they are flat, so
        ``func.body.body`` is what the seed's reaches the same way. Any other sequence has no
        body (``.seq`` holds its statements)."""
        if len(self.seq) < 2 or not _opens_scope(self.seq[0]):
            first = type(self.seq[0]).__name__ if self.seq else "nothing"
            raise AttributeError(
                f"'SeqStmt' object has no attribute 'body': it starts with {first}, not with "
                f"T.device_entry() or a declaration that scopes the rest; its statements are .seq")
        return seq(self.seq[1:])


def _opens_scope(stmt: Stmt) -> bool:
    """Whether the seed's form of ``stmt`` holds the rest of its block as its body."""
    if isinstance(stmt, (AllocBuffer, DeclBuffer, ScopeIdDef, Bind)):
        return True
    call = stmt.value if isinstance(stmt, Evaluate) else None
    return getattr(getattr(call, "op", None), "name", None) == "tirx.device_entry"


def seq(stmts: Sequence[Stmt]) -> Stmt:
    """One statement from several: flattens nested sequences; a single one is returned as is."""
    flat: list[Stmt] = []
    for s in stmts:
        if isinstance(s, SeqStmt):
            flat.extend(s.seq)
        elif s is not None:
            flat.append(s)
    if len(flat) == 1:
        return flat[0]
    return SeqStmt(flat)


class ForKind(enum.Enum):
    SERIAL = "serial"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLLED = "unroll"
    THREAD_BINDING = "thread_binding"


class For(Stmt):
    """``for loop_var in [min, min + extent)``. A thread-bound loop names its ``thread_tag``
    (``blockIdx.x``, ``threadIdx.x``, ...)."""

    _fields = ("loop_var", "min", "extent", "kind", "body", "thread_tag", "annotations")
    _def_fields = frozenset({"loop_var"})

    def __init__(self, loop_var: Var, min: Any, extent: Any, kind: ForKind, body: Stmt,  # noqa: A002
                 *, thread_tag: str | None = None, annotations: dict[str, Any] | None = None) -> None:
        self.loop_var = loop_var
        self.min = convert(min, loop_var.dtype)
        self.extent = convert(extent, loop_var.dtype)
        self.kind = kind
        self.body = body
        self.thread_tag = thread_tag
        self.annotations = dict(annotations or {})


class IfThenElse(Stmt):
    _fields = ("condition", "then_case", "else_case")

    def __init__(self, condition: Any, then_case: Stmt, else_case: Stmt | None = None) -> None:
        self.condition = convert(condition)
        self.then_case = then_case
        self.else_case = else_case


class While(Stmt):
    """``while condition: body`` (the condition is evaluated before every iteration)."""

    _fields = ("condition", "body")

    def __init__(self, condition: Any, body: Stmt) -> None:
        self.condition = convert(condition)
        if not self.condition.dtype.is_bool or self.condition.dtype.lanes != 1:
            raise TypeError(f"a while loop's condition must be a bool, got a "
                            f"{self.condition.dtype} value; compare it, e.g. x != 0")
        self.body = body


class LetStmt(Stmt):
    """Bind ``var = value`` for ``body``."""

    _fields = ("var", "value", "body")
    _def_fields = frozenset({"var"})

    def __init__(self, var: Var, value: Any, body: Stmt) -> None:
        self.var = var
        self.value = convert(value, var.dtype)
        self.body = body


class Bind(Stmt):
    """``var = value`` for the rest of the enclosing sequence: the seed's flat spelling of a let
    (``SeqStmt([Bind(x, v), ...])``). It is a construction form: a :class:`PrimFunc` folds
    each one into the :class:`LetStmt` over the statements after it (:func:`fold_binds`), so
    passes and code generators only ever see lets, and the printer writes it as a let."""

    _fields = ("var", "value")
    _def_fields = frozenset({"var"})

    def __init__(self, var: Var, value: Any) -> None:
        if not isinstance(var, Var):
            raise TypeError(f"Bind: expected a Var to bind, got {type(var).__name__}")
        self.var = var
        self.value = convert(value, var.dtype)


def fold_binds(stmt: Stmt) -> Stmt:
    """``stmt`` in the forms passes see: every :class:`Bind` made the :class:`LetStmt` over the
    statements after it in its sequence (an empty rest is ``T.evaluate(0)``), and every
    :class:`DeclBuffer` with a body (the seed's nested form) made the flat declaration followed
    by that body; a tree without either is returned as is."""
    class _Fold(Mutator):
        def visit_SeqStmt(self, node: SeqStmt) -> Stmt:
            flat = seq([x if isinstance(x, Bind) else self.visit(x) for x in node.seq])
            rest: list[Stmt] = []
            for item in reversed(flat.seq if isinstance(flat, SeqStmt) else [flat]):
                if isinstance(item, Bind):
                    rest = [LetStmt(item.var, item.value, seq(rest) if rest else Evaluate(0))]
                else:
                    rest.insert(0, item)
            return seq(rest)

        def visit_Bind(self, node: Bind) -> Stmt:
            return LetStmt(node.var, self.visit(node.value), Evaluate(0))

        def visit_DeclBuffer(self, node: DeclBuffer) -> Stmt:
            if node.body is None:
                return node
            flat = DeclBuffer(node.buffer)
            flat.span = node.span
            return self.visit(SeqStmt([flat, node.body]))

    return _Fold().visit(stmt) if _has_seed_form(stmt) else stmt


def _has_seed_form(stmt: Any) -> bool:
    """Whether a Bind or a DeclBuffer with a body is among the statements of ``stmt``
    (expressions are not entered, and the walk is iterative: deep expression trees must not
    recurse here)."""
    todo = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, Bind) or (isinstance(node, DeclBuffer) and node.body is not None):
            return True
        if isinstance(node, (list, tuple)):
            todo.extend(node)
        elif isinstance(node, Stmt):
            todo.extend(v for _, v in node.fields() if isinstance(v, (Stmt, list, tuple)))
    return False


class AttrStmt(Stmt):
    """Attach ``attr_key = value`` (about ``node``, may be None) to ``body``."""

    _fields = ("node", "attr_key", "value", "body")

    def __init__(self, node: Any, attr_key: str, value: Any, body: Stmt) -> None:
        self.node = node
        self.attr_key = attr_key
        self.value = value if isinstance(value, (PrimExpr, Node)) else convert(value)
        self.body = body


class AssertStmt(Stmt):
    """Check ``condition`` at run time; fail with ``message`` otherwise."""

    _fields = ("condition", "message")

    def __init__(self, condition: Any, message: Any) -> None:
        self.condition = convert(condition)
        self.message = message if isinstance(message, PrimExpr) else StringImm(str(message))


# the AllocBuffer annotation that says where a backend's allocator placed the buffer (a list of
# integers, e.g. Trainium's byte address in each partition); written ``allocated_addr=[...]``
ALLOCATED_ADDR = "allocated_addr"


class AllocBuffer(Stmt):
    """Allocate ``buffer`` (in its storage scope) for the rest of the enclosing block."""

    _fields = ("buffer", "annotations")
    _def_fields = frozenset({"buffer"})

    def __init__(self, buffer: Buffer, annotations: dict[str, Any] | None = None) -> None:
        self.buffer = buffer
        self.annotations = dict(annotations or {})

    @property
    def allocated_addr(self) -> list[Any] | None:
        """Where an allocator placed the buffer (``T.alloc_buffer(..., allocated_addr=[a])``),
        or None while it is not placed."""
        addr = self.annotations.get(ALLOCATED_ADDR)
        return None if addr is None else list(addr)


class DeclBuffer(Stmt):
    """Declare ``buffer`` as a view of existing memory (its ``data`` pointer) for the rest of
    the enclosing block.

    ``DeclBuffer(buffer, body)`` is the seed's nested form, the declaration over ``body``; a
    :class:`PrimFunc` makes it the flat declaration followed by the body (:func:`fold_binds`),
    so passes only see ``body=None``."""

    _fields = ("buffer", "body")
    _def_fields = frozenset({"buffer"})

    def __init__(self, buffer: Buffer, body: Stmt | None = None) -> None:
        if not isinstance(buffer, Buffer):
            raise TypeError(f"DeclBuffer: expected a Buffer to declare, got {type(buffer).__name__}")
        if body is not None and not isinstance(body, Stmt):
            raise TypeError(f"DeclBuffer: the body must be a statement, got {type(body).__name__}")
        self.buffer = buffer
        self.body = body


class SBlock(Stmt):
    """The seed's schedulable block, as a plain node: ``body`` over the block iteration axes
    ``iter_vars`` (each an :class:`IterVar` with its domain), reading ``reads`` and writing
    ``writes`` (buffer regions), with ``alloc_buffers`` allocated inside and an optional
    ``init`` statement. The visitors, structural equality and the printer know it; no pass
    schedules or lowers it (kernels here are written without blocks)."""

    _fields = ("iter_vars", "reads", "writes", "name_hint", "alloc_buffers", "annotations",
               "init", "body")
    _def_fields = frozenset({"alloc_buffers"})

    def __init__(self, iter_vars: Sequence[IterVar], reads: Sequence[BufferRegion],
                 writes: Sequence[BufferRegion], name_hint: str, body: Stmt,
                 init: Stmt | None = None, alloc_buffers: Sequence[Buffer] | None = None,
                 match_buffers: Sequence[Any] | None = None,
                 annotations: dict[str, Any] | None = None) -> None:
        _check_items("SBlock", "iter_vars", iter_vars, IterVar)
        _check_items("SBlock", "reads", reads, BufferRegion)
        _check_items("SBlock", "writes", writes, BufferRegion)
        _check_items("SBlock", "alloc_buffers", alloc_buffers or [], Buffer)
        unbounded = [iv.var.name for iv in iter_vars if iv.dom is None]
        if unbounded:
            raise ValueError(f"SBlock: iteration axes {unbounded} have no domain; give each "
                             f"IterVar its Range, e.g. IterVar(Range(0, n), var, 0)")
        if match_buffers:
            raise TypeError("SBlock: match_buffers are not supported (no buffer is matched "
                            "inside a block here); declare the view with T.decl_buffer instead")
        for name, value in (("body", body), ("init", init)):
            if value is not None and not isinstance(value, Stmt):
                raise TypeError(f"SBlock: {name} must be a statement, got {type(value).__name__}")
        self.iter_vars = list(iter_vars)
        self.reads = list(reads)
        self.writes = list(writes)
        self.name_hint = str(name_hint)
        self.alloc_buffers = list(alloc_buffers or [])
        self.annotations = dict(annotations or {})
        self.init = init
        self.body = body

    @property
    def match_buffers(self) -> list[Any]:
        """Always empty (see the constructor)."""
        return []


class SBlockRealize(Stmt):
    """Run ``block`` with its iteration axes bound to ``iter_values`` (one per axis), where
    ``predicate`` (a bool) holds."""

    _fields = ("iter_values", "predicate", "block")

    def __init__(self, iter_values: Sequence[Any], predicate: Any, block: SBlock) -> None:
        if not isinstance(block, SBlock):
            raise TypeError(f"SBlockRealize: expected an SBlock, got {type(block).__name__}")
        if len(iter_values) != len(block.iter_vars):
            raise ValueError(f"SBlockRealize: {len(iter_values)} values for the "
                             f"{len(block.iter_vars)} iteration axes of block "
                             f"{block.name_hint!r}; give one value per axis")
        self.iter_values = [convert(v) for v in iter_values]
        self.predicate = convert(predicate)
        if not self.predicate.dtype.is_bool:
            raise TypeError(f"SBlockRealize: the predicate must be a bool, got a "
                            f"{self.predicate.dtype} value; compare it, e.g. x != 0")
        self.block = block


def _check_items(node: str, field: str, items: Sequence[Any], cls: type) -> None:
    for item in items:
        if not isinstance(item, cls):
            raise TypeError(f"{node}: every entry of {field} must be a {cls.__name__}, got "
                            f"{type(item).__name__}")


SCOPE_ID_KINDS = ("cta_id", "cluster_id", "cta_id_in_cluster", "thread_id", "warp_id", "lane_id",
                  "warpgroup_id", "thread_id_in_wg", "warp_id_in_wg", "cta_id_in_pair")


#: the seed's ScopeIdDef names an id by the pair of scopes it indexes (parent, child)
_SCOPE_PAIR_KINDS = {
    ("kernel", "cta"): "cta_id", ("kernel", "cluster"): "cluster_id",
    ("cluster", "cta"): "cta_id_in_cluster", ("cta", "thread"): "thread_id",
    ("cta", "warp"): "warp_id", ("cta", "warpgroup"): "warpgroup_id",
    ("warp", "thread"): "lane_id", ("warpgroup", "thread"): "thread_id_in_wg",
    ("warpgroup", "warp"): "warp_id_in_wg",
}


class ScopeIdDef(Stmt):
    """The kernel form's index definitions, e.g. ``bx, by = T.cta_id([32, 4])``: defines
    ``vars`` with the given ``extents`` for the rest of the kernel.

    ``ScopeIdDef(kind, vars, extents)``; the seed's ``ScopeIdDef(vars, extents, parent,
    child)`` names the kind by its pair of scopes (``"kernel", "cta"`` is ``cta_id``,
    ``"warp", "thread"`` is ``lane_id``, ...)."""

    _fields = ("kind", "vars", "extents")
    _def_fields = frozenset({"vars"})

    def __init__(self, kind: str | Sequence[Var], vars: Any,  # noqa: A002
                 extents: Any = None, child: str | None = None) -> None:
        if not isinstance(kind, str):  # the seed's (vars, extents, parent, child)
            kind, vars, extents = _kind_of_scopes(extents, child), kind, vars
        elif child is not None:
            raise TypeError(f"ScopeIdDef({kind!r}, vars, extents) takes no fourth argument; "
                            f"the seed's form is ScopeIdDef(vars, extents, parent, child)")
        if kind not in SCOPE_ID_KINDS:
            raise ValueError(f"unknown scope id kind {kind!r}; expected one of {SCOPE_ID_KINDS}")
        extents = [] if extents is None else extents
        if not extents and len(vars) != 1:
            raise ValueError(f"Deferred ScopeIdDef T.{kind}() (no extents) must define exactly "
                             f"one Var, got {len(vars)}; give the extents to define several")
        if extents and len(vars) != len(extents):
            raise ValueError(f"{kind}: {len(vars)} variables for {len(extents)} extents")
        self.kind = kind
        self.vars = list(vars)
        self.extents = [convert(e) for e in extents]

    @property
    def deferred(self) -> bool:
        """``T.thread_id()``: the extent is what the kernel's other ids imply (the seed's
        deferred form; see :func:`resolve_scope_ids`)."""
        return not self.extents


def _kind_of_scopes(parent: Any, child: Any) -> str:
    kind = _SCOPE_PAIR_KINDS.get((parent, child))
    if kind is None:
        pairs = ", ".join(f"({p!r}, {c!r})" for p, c in _SCOPE_PAIR_KINDS)
        raise ValueError(f"ScopeIdDef(vars, extents, {parent!r}, {child!r}): no kernel id "
                         f"indexes {child!r} within {parent!r}; the pairs are {pairs}")
    return kind


#: the fixed extents of the ids inside a warp, a warpgroup and a CTA pair
_FIXED = {"lane_id": 32, "thread_id_in_wg": 128, "warp_id_in_wg": 4, "cta_id_in_pair": 2}
#: how a deferred id's extent follows from another id's: (kind, other kind, op, constant),
#: tried in order; op "*" is other * c, "/" is other // c
_FROM_SIBLING = (
    ("thread_id", "warp_id", "*", 32), ("thread_id", "warpgroup_id", "*", 128),
    ("warp_id", "thread_id", "/", 32), ("warp_id", "warpgroup_id", "*", 4),
    ("warpgroup_id", "thread_id", "/", 128), ("warpgroup_id", "warp_id", "/", 4),
)


def resolve_scope_ids(defs: Sequence[ScopeIdDef]) -> tuple[list[ScopeIdDef], list[ScopeIdDef]]:
    """The kernel's id definitions with each deferred one (``T.warp_id()``) given the extent
    the others imply, and the deferred ones nothing determines. ``lane_id``,
    ``thread_id_in_wg`` and ``warp_id_in_wg`` have fixed extents; ``thread_id``, ``warp_id``
    and ``warpgroup_id`` follow from each other (32 threads a warp, 4 warps a warpgroup);
    ``cta_id``, ``cluster_id`` and ``cta_id_in_cluster`` from the other two (one-dimensional:
    ``cta_id = cluster_id * cta_id_in_cluster``)."""
    known: dict[str, list[PrimExpr]] = {d.kind: d.extents for d in defs if not d.deferred}
    pending = {d.kind for d in defs if d.deferred and d.kind not in known}
    for kind in list(pending):
        if kind in _FIXED:
            known[kind] = [convert(_FIXED[kind])]
            pending.discard(kind)
    changed = True
    while changed and pending:
        changed = False
        for kind in sorted(pending):
            ext = _from_siblings(kind, known)
            if ext is not None:
                known[kind] = [ext]
                pending.discard(kind)
                changed = True
    resolved: list[ScopeIdDef] = []
    unresolved: list[ScopeIdDef] = []
    for d in defs:
        if not d.deferred:
            resolved.append(d)
        elif d.kind in known and len(known[d.kind]) == 1:
            r = ScopeIdDef(d.kind, d.vars, known[d.kind])
            r.span = d.span
            resolved.append(r)
        else:
            unresolved.append(d)
    return resolved, unresolved


def _from_siblings(kind: str, known: dict[str, list[PrimExpr]]) -> PrimExpr | None:
    for target, other, op, c in _FROM_SIBLING:
        if target != kind or other not in known or len(known[other]) != 1:
            continue
        e = known[other][0]
        if isinstance(e, IntImm):
            return IntImm(e.dtype, e.value * c if op == "*" else e.value // c)
        return Mul(e, convert(c, e.dtype)) if op == "*" else FloorDiv(e, convert(c, e.dtype))
    one = [k for k in ("cta_id", "cluster_id", "cta_id_in_cluster")
           if k != kind and k in known and len(known[k]) == 1]
    if kind in ("cta_id", "cluster_id", "cta_id_in_cluster") and len(one) == 2:
        a, b = (known[k][0] for k in one)
        if kind == "cta_id":
            if isinstance(a, IntImm) and isinstance(b, IntImm):
                return IntImm(a.dtype, a.value * b.value)
            return Mul(a, b)
        total = known["cta_id"][0]
        part = b if one[0] == "cta_id" else a
        if isinstance(total, IntImm) and isinstance(part, IntImm):
            return IntImm(total.dtype, total.value // part.value)
        return FloorDiv(total, part)
    return None


EXEC_SCOPES = ("thread", "warp", "warpgroup", "cta", "cluster")


# The seed's numbering (its ScopeKind enum): the scope's ``kind``.
_KIND = {"cluster": 2, "cta": 3, "warpgroup": 4, "warp": 5, "thread": 6}


class ExecScope(str):
    """One of ``cluster``, ``cta``, ``warpgroup``, ``warp``, ``thread``."""

    def __new__(cls, name: str) -> ExecScope:
        if name not in _KIND:
            raise ValueError(f"Unknown scope kind name {name!r}; expected one of "
                             f"{', '.join(EXEC_SCOPES)}")
        return super().__new__(cls, name)

    @property
    def name(self) -> str:
        return str(self)

    @property
    def kind(self) -> int:
        return _KIND[str(self)]

    def __repr__(self) -> str:
        return f"ExecScope({str(self)!r})"


class TilePrimitiveCall(Stmt):
    """A call of a tile primitive (``tirx.tile.<op>``) at one execution scope.

    ``args`` are buffers, buffer regions, expressions or Python constants; ``scope`` is one of
    ``thread``, ``warp``, ``warpgroup``, ``cta``, ``cluster``; ``dispatch`` forces a variant;
    ``workspace`` maps names to scratch buffers; ``config`` holds static options.
    """

    _fields = ("op", "args", "scope", "dispatch", "workspace", "config")

    def __init__(self, *positional: Any, op: Any = None, args: Sequence[Any] | None = None,
                 scope: str = "thread", dispatch: str | None = None,
                 workspace: dict[str, Any] | None = None,
                 config: dict[str, Any] | None = None) -> None:
        # TilePrimitiveCall(op, args, ...), or the seed's TilePrimitiveCall(*args, op=op, ...)
        if op is None:
            if not positional or len(positional) > 2 or (len(positional) == 1) == (args is None):
                raise TypeError("TilePrimitiveCall(op, args, ...) or TilePrimitiveCall(*args, "
                                "op=op, ...)")
            op, args = positional[0], positional[1] if len(positional) == 2 else args
        elif args is None:
            args = positional
        elif positional:
            raise TypeError("TilePrimitiveCall: give the arguments positionally or as args=, "
                            "not both")
        assert args is not None
        if scope not in EXEC_SCOPES:
            raise ValueError(f"unknown execution scope {scope!r}; expected one of {EXEC_SCOPES}")
        self.op = Op.get(op) if isinstance(op, str) else op
        self.args = [a if isinstance(a, (Buffer, BufferRegion, PrimExpr, Node)) or a is None
                     else _const_arg(a) for a in args]
        self.scope = ExecScope(scope)
        self.dispatch = dispatch
        self.workspace = dict(workspace or {})
        self.config = dict(config or {})

    _REPLACEABLE = frozenset(("op", "args", "workspace", "config", "dispatch", "scope"))

    def replace(self, **changes: Any) -> TilePrimitiveCall:
        unknown = sorted(set(changes) - self._REPLACEABLE)
        if unknown:
            raise TypeError(f"Unknown field(s) for TilePrimitiveCall.replace: {unknown}")
        kw = {k: getattr(self, k) for k in self._REPLACEABLE}
        kw.update(changes)
        new = TilePrimitiveCall(kw.pop("op"), kw.pop("args"), **kw)
        new.span = self.span
        return new

    def with_workspace(self, workspace: dict[str, Any]) -> TilePrimitiveCall:
        return self.replace(workspace=workspace)

    @property
    def op_name(self) -> str:
        return self.op.name.removeprefix("tirx.tile.")


def _const_arg(a: Any) -> Any:
    if isinstance(a, (bool, int, float)):
        return convert(a)
    if isinstance(a, str):
        return StringImm(a)
    if isinstance(a, (list, tuple)):
        return [(_const_arg(x) if not isinstance(x, Node) else x) for x in a]
    return a
