"""Names for the TVMScript printer: unique scoped names for variables and buffers, and the
variables a subtree uses and defines (which decide what a function or statement declares)."""

from __future__ import annotations

import keyword
from typing import Any

from ..ir import expr as E
from ..ir import stmt as S
from ..ir.buffer import Buffer
from ..ir.function import PrimFunc
from ..ir.visitor import BindingVisitor

_RESERVED = frozenset(keyword.kwlist) | {"T", "I", "tvm", "range", "print"}


class _Names:
    """Unique, scoped names for variables and buffers (renamed with _1, _2, ... on clashes)."""

    def __init__(self) -> None:
        self.scopes: list[set[str]] = []
        self.of: dict[int, str] = {}

    def push(self) -> None:
        self.scopes.append(set())

    def pop(self) -> None:
        self.scopes.pop()

    def taken(self, name: str) -> bool:
        return name in _RESERVED or any(name in s for s in self.scopes)

    def define(self, obj: Any, hint: str) -> str:
        base = _identifier(hint)
        name, k = base, 0
        while self.taken(name):
            k += 1
            name = f"{base}_{k}"
        self.scopes[-1].add(name)
        self.of[id(obj)] = name
        return name


def _identifier(hint: str) -> str:
    text = "".join(c if (c.isalnum() or c == "_") else "_" for c in (hint or "v"))
    if not text or text[0].isdigit():
        text = "v" + text
    return text


class _Uses(BindingVisitor):
    """Collects used and defined variables (by id) of a subtree."""

    def __init__(self) -> None:
        self.used: dict[int, E.Var] = {}
        self.defined: set[int] = set()
        self.order: list[Any] = []  # used vars and buffers, in order of first use

    def visit_Var(self, v: E.Var) -> None:
        if id(v) not in self.used:
            self.used[id(v)] = v
            self.order.append(v)

    def _define_buffer(self, b: Buffer) -> None:
        self.defined.add(id(b.data))
        for e in b.shape + b.strides + [b.elem_offset]:
            self.visit(e)
        if b.layout is not None:
            self.visit(b.layout)

    def visit_Buffer(self, b: Buffer) -> None:
        seen = id(b.data) in self.used
        self.used.setdefault(id(b.data), b.data)
        for e in b.shape + b.strides + [b.elem_offset]:
            self.visit(e)
        if not seen:
            self.order.append(b)

    def bind(self, var: E.Var) -> None:  # loops and let statements
        self.defined.add(id(var))

    def visit_Let(self, e: E.Let) -> None:
        self.bind(e.var)
        self.generic_visit(e)

    def visit_IndexLambda(self, f: E.IndexLambda) -> None:
        for p in f.params:
            self.bind(p)
        self.generic_visit(f)

    def visit_ScopeIdDef(self, s: S.ScopeIdDef) -> None:
        self.defined.update(id(v) for v in s.vars)
        self.generic_visit(s)

    def visit_AllocBuffer(self, s: S.AllocBuffer) -> None:
        self._define_buffer(s.buffer)
        self.visit(s.annotations)

    def visit_DeclBuffer(self, s: S.DeclBuffer) -> None:
        # A view of another buffer's memory reuses a defined pointer; a fresh one is defined here.
        self._define_buffer(s.buffer)
        if s.body is not None:  # the seed's nested form
            self.visit(s.body)

    def visit_IterVar(self, iv: E.IterVar) -> None:  # an SBlock's iteration axis
        self.bind(iv.var)
        self.visit(iv.dom)

    def visit_SBlock(self, s: S.SBlock) -> None:
        for buf in s.alloc_buffers:
            self._define_buffer(buf)
        self.visit([s.iter_vars, s.reads, s.writes, s.init, s.body])


def _free_vars(f: PrimFunc) -> tuple[dict[int, E.Var], set[int]]:
    """The variables no statement of ``f`` defines (buffer shape variables and free variables),
    and the parameters printed as ``T.handle`` (their buffer uses other variables, or the body
    uses the handle itself)."""
    uses = _uses(f.body)
    param_ids = {id(p) for p in f.params}
    shape_vars: dict[int, E.Var] = {}
    handle_form: set[int] = set()
    for p in f.params:
        buf = f.buffer_map.get(p)
        if buf is None:
            continue
        bu = _uses(buf.shape + buf.strides + [buf.elem_offset]
                   + ([buf.layout] if buf.layout is not None else []))
        extra = {k: v for k, v in bu.used.items() if k not in param_ids}
        if extra or id(p) in uses.used:
            handle_form.add(id(p))
            shape_vars.update(extra)
    declared = {id(b.data) for b in f.buffer_map.values()} | param_ids
    free = {k: v for k, v in uses.used.items() if k not in uses.defined and k not in declared}
    free.update(shape_vars)
    return free, handle_form


def _uses(node: Any) -> _Uses:
    u = _Uses()
    u.visit(node)
    return u
