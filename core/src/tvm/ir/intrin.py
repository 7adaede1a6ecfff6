"""Intrinsics declared once: ``@intrin`` on a codegen rule, kept in a backend's :class:`IntrinTable`.

A backend (and core, for its own classic intrinsics) declares each intrinsic once::

    INTRINSICS = IntrinTable("mychip")          # the target kind its rules are for

    @INTRINSICS.intrin("mychip.fma", "a, b, c", dtype="arg0", effect=PURE)
    def _fma(cg, call, args):
        return f"fma({args[0]}, {args[1]}, {args[2]})"

    INTRINSICS.declare("mychip.barrier", "", rule="barrier()")   # a rule that is data

and from that declaration come

- the op ``tirx.mychip.fma`` (``tirx.<namespace>.<name>``, ``name`` the rest of the path with
  ``_`` for ``.`` unless ``name=``), a ``device_intrin`` of namespace ``mychip`` printed
  ``T.mychip.fma(...)``; a path without a dot (``tvm_mma_sync``) is a core ``builtin`` op
  ``tirx.<path>`` printed ``T.<path>(...)``;
- its builder (:meth:`IntrinTable.builders`, named by the table's ``builder_format``, or
  ``builder=``), with the declared signature;
- its script member ``T.<path>`` (:meth:`IntrinTable.members`: what a backend's ``script.py``
  makes its namespace of); a path that is also the prefix of others is a callable group;
- an alias of the op (``alias=True``: ``tirx.<builder>``, the seed's flat names; a string:
  that name);
- the codegen rule of the table's target kind (``op.set_codegen(kind, rule)``), in the form
  that kind's code generator takes (the C-style printers: a template string, a dict by data
  type, or ``rule(cg, call, args)``); a table may adapt it (``adapt=``);
- its requirements (``requires=``): :class:`Requirement` predicates on the target, checked by
  the code generator before the rule runs (:func:`check_requirements`), so that a target
  without what the intrinsic needs fails with a :class:`~tvm.error.RequirementError` naming the
  intrinsic, what it needs and how to get it.

The second argument says how builder arguments become the op's operands: a parameter list
(``"dst, n, cta_group=1"``, ``"fmt, *args"``; defaults are Python literals) means the operands
are the arguments in that order, defaults filled in; a function means the operands are what it
returns (its signature is the builder's; give ``nargs=``), or a :class:`Typed` when the builder
also gives the call's type. ``choices`` and ``strings`` check arguments by name first.

A declaration may be a second operand form of an op declared before it (``form_of=`` that op's
path): it has its own builder and script path but no op, its calls are calls of that op told
apart by operand count, and they print ``T.<that path>("<dtype>", *operands)``.

Convenience builders over other intrinsics are declared with :meth:`IntrinTable.sugar`: a script
path and a builder, no op. Nothing is registered at import: the backend's ``tvm_register_ops``
hook calls :meth:`IntrinTable.register_ops`, inside the loader's transaction.

One declaration (:class:`IntrinSpec`, its builder, requirements and parameter lists) is in
:mod:`tvm.ir.intrin_spec`; this module has the table, the script members and the registration,
and re-exports every public name of that one.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

from .._registry import record_undo
from . import expr as E
from .intrin_spec import (
    PURE,
    SPEC_ATTR,
    UPDATE,
    Builder,
    DTypeRule,
    IntrinSpec,
    OperandFn,
    Operands,
    Requirement,
    SugarSpec,
    Typed,
    _nargs,
    check_requirements,
    element,
    requires_attr,
    target_flag,
)
from .op import OP_REGISTRY, CallEffect, Op, OpCategory

__all__ = [
    "PURE",
    "SPEC_ATTR",
    "UPDATE",
    "Builder",
    "CallableIntrinNamespace",
    "DTypeRule",
    "IntrinNamespace",
    "IntrinSpec",
    "IntrinTable",
    "Member",
    "OperandFn",
    "Operands",
    "Requirement",
    "SugarSpec",
    "Typed",
    "caller_module",
    "check_requirements",
    "element",
    "requires_attr",
    "target_flag",
]


# -- script members ------------------------------------------------------------------------------
class Member(Builder):
    """The script member ``T.<path>`` of an intrinsic: its builder.

    A ``dtype=`` keyword becomes the first argument when the spec says so (the seed's
    ``_dtype_forward``) and is dropped otherwise (its ``_op_wrapper``). With the table's
    ``raw_operands``, arguments the builder cannot take (a ``TypeError``, no keywords) are the
    op's raw operand list when their count fits (what the printer writes for an op whose
    builder computes its operands), and an alternative form's printed form
    ``T.<path>("<dtype>", *operands)`` is read back.
    """

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        spec = self.spec
        raw = spec.table is not None and spec.table.raw_operands
        if raw and not kwargs:
            call = spec.form_call(args)
            if call is not None:
                return call
        if "dtype" in kwargs:
            dtype = kwargs.pop("dtype")
            if spec.dtype_forward:
                args = (dtype, *args)
        if kwargs or not raw:
            return spec.call(*args, **kwargs)
        try:
            return spec.call(*args)
        except TypeError:  # the arguments do not bind: the raw operand list the printer wrote
            if not spec.fits(len(args)):
                raise
            return Op.get(spec.name)(*args)

    @property
    def __name__(self) -> str:  # type: ignore[override]
        return self.spec.path.rsplit(".", 1)[-1]

    def __repr__(self) -> str:
        return f"<T.{self.spec.path}>"


class IntrinNamespace:
    """A group of script members (``T.metal``, ``T.ptx.tcgen05``)."""

    __tir_namespace__ = True

    def __init__(self, path: str, members: Mapping[str, Any]) -> None:
        self._path = path
        for name, value in members.items():
            setattr(self, name, value)

    def __repr__(self) -> str:
        return f"T.{self._path}" if "." not in self._path else f"<T.{self._path}>"


class CallableIntrinNamespace(IntrinNamespace):
    """A group that is an op too: ``T.ptx.mma(...)`` beside ``T.ptx.mma.sp(...)``."""

    def __init__(self, path: str, members: Mapping[str, Any], call: Callable[..., Any]) -> None:
        super().__init__(path, members)
        self._call = call
        self.__tir_op_name__ = getattr(call, "__tir_op_name__", "")
        self.__doc__ = call.__doc__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call(*args, **kwargs)


_LEAF = ""  # the key of a node's own member in the path tree


# -- the table -----------------------------------------------------------------------------------
class IntrinTable:
    """The intrinsics one backend (or core) declares, and what derives from them.

    ``kind`` is the target kind the declared rules are for (None: declarations without rules,
    as core's, whose rules backends add with :meth:`add_rule`). ``adapt(rule)`` turns a
    declared rule into what ``op.set_codegen`` stores (CUDA adapts its ``rule(call, emit)`` to
    the C-style form). ``builder_format`` names builders from ``ns`` and ``name`` (the op
    suffix). ``raw_operands``: script members also take the op's raw operand list (see
    :class:`Member`). ``spec_type`` is a subclass of :class:`IntrinSpec` with the backend's own
    fields (CUDA's emulation body), filled from :meth:`declare`'s extra keywords.
    """

    default_alias: ClassVar[bool] = False

    def __init__(self, kind: str | None, *, adapt: Callable[[Any], Any] | None = None,
                 builder_format: str = "{ns}_{name}", raw_operands: bool = False,
                 spec_type: type[IntrinSpec] = IntrinSpec,
                 load: Callable[[], None] | None = None) -> None:
        self.kind = kind
        self.adapt = adapt
        self.builder_format = builder_format
        self.raw_operands = raw_operands
        self.spec_type = spec_type
        self._load = load  # imports the modules that declare (called once, on first use)
        self._loaded = load is None
        self._specs: list[IntrinSpec] = []
        self._sugar: list[SugarSpec] = []
        self._by_path: dict[str, IntrinSpec] = {}
        self._forms: dict[str, list[IntrinSpec]] = {}
        self._rules: list[tuple[IntrinTable, str, Any, tuple[Requirement, ...]]] = []

    def __repr__(self) -> str:
        return f"<IntrinTable {self.kind or 'core'}: {len(self._specs)} intrinsics>"

    # -- declaring ------------------------------------------------------------------------
    def intrin(self, path: str, params: str | OperandFn = "", **kwargs: Any
               ) -> Callable[[Any], Any]:
        """Declare the intrinsic printed ``T.<path>(...)``; decorates its codegen rule (the
        keywords are :meth:`declare`'s)."""

        def deco(rule: Any) -> Any:
            self.declare(path, params, rule=rule, **kwargs)
            return rule

        return deco

    def declare(
        self,
        path: str,
        params: str | OperandFn = "",
        *,
        rule: Any = None,
        nargs: int | tuple[int, int | None] | None = None,
        name: str | None = None,
        builder: str | None = None,
        alias: str | bool | None = None,
        dtype: DTypeRule = "void",
        effect: CallEffect = UPDATE,
        choices: Mapping[str, Iterable[Any]] | None = None,
        strings: tuple[str, ...] = (),
        dtype_forward: bool = False,
        script_kwargs: tuple[str, ...] = (),
        requires: Iterable[Requirement] = (),
        form_of: str | None = None,
        attrs: Mapping[str, Any] | None = None,
        doc: str = "",
        convert: Callable[[str, Any], Any] | None = None,
        **fields: Any,
    ) -> IntrinSpec:
        """Declare the intrinsic printed ``T.<path>(...)`` with its codegen ``rule``.

        ``params`` is the builder's parameter list (operands = arguments) or a function from
        the builder's arguments to the operands (then ``nargs``: an int, or ``(min, max)`` with
        ``max`` None for any, unless the function's own positional parameters say it). ``name``
        overrides the op suffix, ``builder`` the builder's name; ``alias`` True registers
        ``tirx.<builder>`` as another name of the op, a string that name. ``dtype`` is the
        result type rule (a type, ``"arg0"``, or a function of the operands), ``effect`` the call
        effect, ``requires`` the :class:`Requirement` s of the rule, ``attrs`` more op
        attributes, ``doc`` the builder's docstring (default: the operand function's or the
        rule's), ``convert(path, operand)`` a function applied to each operand the builder
        makes. ``fields`` go to the table's ``spec_type``.
        """
        ns, dot, rest = path.partition(".")
        suffix = name or (rest if dot else path).replace(".", "_")
        rng_t = _nargs(path, params, nargs)
        builder_name = builder or (self.builder_format.format(ns=ns, name=suffix) if dot
                                   else suffix)
        alias = self.default_alias if alias is None else alias
        alias_name = (f"tirx.{builder_name}" if alias is True else alias) or None
        if form_of is not None:
            host = self._by_path.get(form_of)
            if host is None or host.form_of is not None or host.namespace != (ns if dot else None):
                raise ValueError(f"intrin({path!r}): form_of={form_of!r} is no op declared before it")
            if rng_t[0] != rng_t[1] or any(f.fits(rng_t[0]) for f in (host, *host.forms)):
                raise ValueError(f"intrin({path!r}): a form needs an operand count of its own")
            suffix, alias_name = host.op_suffix, None
        if path in self._by_path:
            raise ValueError(f"intrinsic T.{path} is declared twice")
        spec = self.spec_type(
            path=path, rule=rule, params=params, nargs=rng_t, op_suffix=suffix,
            builder_name=builder_name, alias=alias_name, dtype=dtype, effect=effect,
            script_kwargs=script_kwargs, requires=tuple(requires),
            choices=tuple((k, tuple(v)) for k, v in (choices or {}).items()), strings=strings,
            dtype_forward=dtype_forward, form_of=form_of, attrs=tuple((attrs or {}).items()),
            doc_text=doc, convert=convert, table=self, **fields)
        self._specs.append(spec)
        self._by_path[path] = spec
        if form_of is not None:
            self._forms.setdefault(form_of, []).append(spec)
        return spec

    def sugar(self, path: str, *, export: bool = True
              ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Declare ``T.<path>`` as the decorated convenience builder (``export``: also one of
        :meth:`builders`, under the function's name)."""

        def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
            self._sugar.append(SugarSpec(path, fn, export))
            return fn

        return deco

    def add_rule(self, spec: IntrinSpec, rule: Any, *, requires: Iterable[Requirement] = ()
                 ) -> None:
        """Give an intrinsic declared in another table (core's ``T.webgpu`` ops) this table's
        rule; it is attached by :meth:`register_ops` and leaves with this backend."""
        if spec.table is None or spec.table is self:
            raise ValueError(f"add_rule: T.{spec.path} is declared in this table; give its rule "
                             "in the declaration")
        self._rules.append((spec.table, spec.path, rule, tuple(requires)))

    # -- reading --------------------------------------------------------------------------
    def _ensure_loaded(self) -> None:
        if not self._loaded:
            self._loaded = True
            assert self._load is not None
            self._load()

    def specs(self) -> list[IntrinSpec]:
        """Every declared intrinsic, in declaration order."""
        self._ensure_loaded()
        return list(self._specs)

    def all_sugar(self) -> list[SugarSpec]:
        self._ensure_loaded()
        return list(self._sugar)

    def spec(self, path: str) -> IntrinSpec:
        """The spec of the intrinsic at ``T.<path>``."""
        self._ensure_loaded()
        try:
            return self._by_path[path]
        except KeyError:
            raise KeyError(f"no intrinsic T.{path} is declared in {self!r}") from None

    def forms_of(self, path: str) -> tuple[IntrinSpec, ...]:
        return tuple(self._forms.get(path, ()))

    def build(self, path: str, *args: Any, **kwargs: Any) -> E.Call:
        """Build a call of the intrinsic at ``T.<path>`` with its builder's arguments."""
        return self.spec(path).call(*args, **kwargs)

    def builders(self) -> dict[str, Callable[..., Any]]:
        """Builder names -> builders (the specs', and exported sugar under its name)."""
        return dict(self._builder_table)

    @functools.cached_property
    def _builder_table(self) -> dict[str, Callable[..., Any]]:
        table: dict[str, Callable[..., Any]] = {}
        named: list[tuple[str, Callable[..., Any]]] = [(s.builder_name, s.builder)
                                                       for s in self.specs()]
        named += [(s.fn.__name__, s.fn) for s in self.all_sugar() if s.export]
        for bname, fn in named:
            if bname in table:
                raise ValueError(f"two intrinsics of {self!r} declare the builder name {bname!r}")
            table[bname] = fn
        return table

    def builder(self, name: str) -> Callable[..., Any]:
        """The builder called ``name`` (``KeyError`` if none; for a module ``__getattr__``)."""
        return self._builder_table[name]

    def module_hooks(self, namespace: dict[str, Any]
                     ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
        """The ``__getattr__`` and ``__dir__`` of a module (``namespace``: its ``globals()``)
        whose attributes are also this table's builders (a backend's ``op.py``, the seed's
        ``tvm.backend.<b>.op``)::

            __getattr__, __dir__ = INTRINSICS.module_hooks(globals())
        """
        module = namespace.get("__name__", "")

        def __getattr__(name: str) -> Callable[..., Any]:
            try:
                return self.builder(name)
            except KeyError:
                raise AttributeError(f"module {module!r} has no attribute {name!r}") from None

        def __dir__() -> list[str]:
            return sorted(set(namespace) | set(self.builders()))

        return __getattr__, __dir__

    def members(self, namespace: str, *, wrap: Callable[[Any], Any] | None = None
                ) -> dict[str, Any]:
        """The members of ``T.<namespace>``: one per declared path in it (groups for dotted
        paths, callable where a path is also the prefix of others). ``wrap`` (the seed's
        ``op_wrapper``) wraps each one; the wrapper keeps the member's op name, which the
        printer looks for."""
        root: dict[str, Any] = {}
        entries: list[tuple[str, Any]] = [(s.path, Member(s)) for s in self.specs()]
        entries += [(s.path, s.fn) for s in self.all_sugar()]
        if wrap is not None:
            entries = [(path, _wrapped(wrap, member)) for path, member in entries]
        for path, value in entries:
            ns, *parts = path.split(".")
            if ns != namespace or not parts:
                continue
            node = root
            for part in parts:
                node = node.setdefault(part, {})
            node[_LEAF] = value
        return {k: _subtree(f"{namespace}.{k}", v) for k, v in root.items()}

    def namespaces(self) -> tuple[str, ...]:
        """The script namespaces the declared paths are in."""
        return tuple(dict.fromkeys(s.namespace for s in self.specs() if s.namespace))

    # -- registering ----------------------------------------------------------------------
    def register_ops(self) -> list[Op]:
        """Register every declared op (with its alias and rule) and attach the rules this
        table gives others' intrinsics; ops this same registration made already are left
        alone, so calling it twice is harmless."""
        ops = [self._register(spec) for spec in self.specs() if spec.form_of is None]
        for table, path, rule, requires in self._rules:
            self._attach(Op.get(table.spec(path).name), rule, requires)
        return ops

    def op_attrs(self, spec: IntrinSpec) -> dict[str, Any]:
        """The op attributes of ``spec`` (a table may add its own)."""
        attrs: dict[str, Any] = {SPEC_ATTR: spec, **dict(spec.attrs)}
        if spec.script_kwargs:
            attrs["script_kwargs"] = spec.script_kwargs
        if spec.forms:  # the forms print their dtype first: T.<path>("float16", ...)
            attrs["script_dtype"] = tuple(f.nargs[0] for f in spec.forms)
        if spec.requires and self.kind is not None:
            attrs[requires_attr(self.kind)] = spec.requires
        return attrs

    def form_rule(self, spec: IntrinSpec, forms: Sequence[IntrinSpec]) -> Any:
        """The rule of an op with alternative forms: the form's rule for a call of its operand
        count. The call is the rule's first argument of type Call."""
        own = spec.rule

        def rule(*args: Any) -> Any:
            call = next(a for a in args if isinstance(a, E.Call))
            form = next((f for f in forms if f.fits(len(call.args))), None)
            return (form.rule if form is not None else own)(*args)

        rule.__doc__ = inspect.getdoc(own) if callable(own) else None
        return rule

    def _register(self, spec: IntrinSpec) -> Op:
        existing = OP_REGISTRY.get(spec.name)
        if existing is not None and existing.get_attr(SPEC_ATTR) is spec:
            return existing
        ns = spec.namespace
        op = Op.register(
            spec.name,
            category=OpCategory.DEVICE_INTRIN if ns else OpCategory.BUILTIN,
            namespace=ns,
            printer_name=spec.printer_name if ns else None,
            effect=spec.effect,
            dtype=spec.dtype,
            signature=spec.param_names,
            **self.op_attrs(spec),
        )
        if spec.rule is not None and self.kind is not None:
            rule = spec.codegen_rule
            op.set_codegen(self.kind, self.adapt(rule) if self.adapt else rule)
        if spec.alias is not None:
            Op.register_alias(spec.alias, spec.name)
        return op

    def _attach(self, op: Op, rule: Any, requires: tuple[Requirement, ...]) -> None:
        assert self.kind is not None, "a table that adds rules needs its target kind"
        key, req_key = f"codegen.{self.kind}", requires_attr(self.kind)
        old = {k: op.attrs[k] for k in (key, req_key) if k in op.attrs}
        op.set_codegen(self.kind, self.adapt(rule) if self.adapt else rule)
        if requires:
            op.set_attr(req_key, requires)

        def undo() -> None:
            for k in (key, req_key):
                op.attrs.pop(k, None)
            op.attrs.update(old)

        record_undo(undo)


def _wrapped(wrap: Callable[[Any], Any], member: Any) -> Any:
    fn = wrap(member)
    name = getattr(member, "__tir_op_name__", None)
    if name is not None and getattr(fn, "__tir_op_name__", None) != name:
        # a wrapper that cannot carry attributes prints through T.call_intrin
        with contextlib.suppress(AttributeError, TypeError):
            fn.__tir_op_name__ = name
    return fn


def _subtree(path: str, node: dict[str, Any]) -> Any:
    children = {k: _subtree(f"{path}.{k}", v) for k, v in node.items() if k != _LEAF}
    own = node.get(_LEAF)
    if not children:
        return own
    if own is None:
        return IntrinNamespace(path, children)
    return CallableIntrinNamespace(path, children, own)


def caller_module(depth: int = 2) -> str:
    """The last part of the name of the module that called the caller (a declaration's family)."""
    return str(sys._getframe(depth).f_globals.get("__name__", "")).rsplit(".", 1)[-1]
