"""One intrinsic's declaration (:class:`IntrinSpec`), its builder and its requirements.

What :meth:`tvm.ir.intrin.IntrinTable.declare` makes, one per intrinsic; the table, the script
members and the registration are in :mod:`tvm.ir.intrin`, which re-exports every name here
(import them from there).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..error import RequirementError
from . import expr as E
from .buffer import Buffer
from .dtype import DataType
from .op import CallEffect, Op

if TYPE_CHECKING:
    from .intrin import IntrinTable

__all__ = [
    "PURE",
    "SPEC_ATTR",
    "UPDATE",
    "Builder",
    "DTypeRule",
    "IntrinSpec",
    "OperandFn",
    "Operands",
    "Requirement",
    "SugarSpec",
    "Typed",
    "check_requirements",
    "element",
    "requires_attr",
    "target_flag",
]

PURE = CallEffect.PURE
UPDATE = CallEffect.UPDATE_STATE
SPEC_ATTR = "intrin.spec"  # the op attribute holding the IntrinSpec it was registered from

Operands = tuple[Any, ...]
DTypeRule = Callable[[Sequence[Any]], "DataType | str"] | str | None


@dataclasses.dataclass(frozen=True)
class Typed:
    """Operands with the call's result type given by the builder."""

    dtype: str
    operands: Operands


OperandFn = Callable[..., "Operands | Typed"]


# -- requirements --------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Requirement:
    """Something a target must have for an intrinsic's code to build.

    ``holds(target)`` is False when the target lacks it (True when it cannot tell); ``what``
    names it for the message ("sm_90 or newer"), ``fix`` says how to get it (a string, or a
    function of the target).
    """

    what: str
    holds: Callable[[Any], bool]
    fix: str | Callable[[Any], str] = ""

    def check(self, path: str, target: Any) -> None:
        """Raise :class:`~tvm.error.RequirementError` if ``target`` lacks this."""
        if target is None or self.holds(target):
            return
        fix = self.fix(target) if callable(self.fix) else self.fix
        message = f"T.{path} needs {self.what}"
        raise RequirementError(f"{message}: {fix}" if fix else f"{message}; target {target} "
                               "does not have it")


def target_flag(attr: str, what: str, fix: str = "") -> Requirement:
    """The target attribute ``attr`` is true (``"supports_subgroups"``)."""

    def holds(target: Any) -> bool:
        return bool((getattr(target, "attrs", None) or {}).get(attr, False))

    return Requirement(what, holds, fix or f"add {attr!r}: True to the target")


def requires_attr(kind: str) -> str:
    """The op attribute holding the requirements of its rule for target kind ``kind``."""
    return f"requires.{kind}"


def check_requirements(op: Op, kind: str, target: Any) -> None:
    """Raise :class:`~tvm.error.RequirementError` if ``target`` lacks something ``op``'s rule
    for ``kind`` needs (code generators call this before a rule; cheap when there is none)."""
    for req in op.attrs.get(f"requires.{kind}", ()):
        req.check(op.printer_name, target)


# -- one declaration -----------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class IntrinSpec:
    """One intrinsic: its op, builder, script path, alias, codegen rule and requirements."""

    path: str  # "ptx.wgmma.commit_group": T.<path>, and the printer name
    rule: Any  # the codegen rule of the table's target kind (None: no rule)
    params: str | OperandFn  # the builder's parameter list, or its operand function
    nargs: tuple[int, int | None]  # operand count range of the raw call, max None = any
    op_suffix: str  # the op is tirx.<namespace>.<op_suffix> (tirx.<op_suffix> for a builtin)
    builder_name: str
    alias: str | None  # another name of the op (the seed's flat name)
    dtype: DTypeRule = "void"
    effect: CallEffect = UPDATE
    script_kwargs: tuple[str, ...] = ()
    requires: tuple[Requirement, ...] = ()
    choices: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    strings: tuple[str, ...] = ()
    dtype_forward: bool = False  # the script member moves a dtype= keyword to the front
    form_of: str | None = None  # an alternative operand form of the op declared at this path
    attrs: tuple[tuple[str, Any], ...] = ()  # more op attributes
    doc_text: str = ""
    convert: Callable[[str, Any], Any] | None = None  # (path, operand) -> operand, for each one
    table: IntrinTable | None = dataclasses.field(default=None, compare=False, repr=False)

    @property
    def namespace(self) -> str | None:
        """The script namespace (None: a core builtin, printed ``T.<path>``)."""
        ns, dot, _ = self.path.partition(".")
        return ns if dot else None

    @property
    def name(self) -> str:
        ns = self.namespace
        return f"tirx.{ns}.{self.op_suffix}" if ns else f"tirx.{self.op_suffix}"

    @property
    def printer_name(self) -> str:
        """The op's printed path (an alternative form prints as the op it is a form of)."""
        return self.form_of or self.path

    @property
    def forms(self) -> tuple[IntrinSpec, ...]:
        """The alternative operand forms of this spec's op (declared with ``form_of=``)."""
        return self.table.forms_of(self.path) if self.table is not None else ()

    @property
    def param_names(self) -> tuple[str, ...]:
        """The builder's parameter names (``*rest`` for a variadic one), cheaply."""
        if isinstance(self.params, str):
            items = [p.strip() for p in self.params.split(",")]
            return tuple(p.partition("=")[0].strip() for p in items if p and p != "*")
        code = self.params.__code__
        count = code.co_argcount + code.co_kwonlyargcount
        names = list(code.co_varnames[:count])
        if code.co_flags & inspect.CO_VARARGS:
            names.insert(code.co_argcount, "*" + code.co_varnames[count])
        return tuple(names)

    def form_call(self, args: Sequence[Any]) -> E.Call | None:
        """The call an alternative form prints as ``T.<path>("<dtype>", *operands)``, if ``args``
        is that (a str, then as many operands as some form of this op has); else None."""
        if not args or not isinstance(args[0], str):
            return None
        if not any(f.fits(len(args) - 1) for f in self.forms):
            return None
        return Op.get(self.name)(*args[1:], dtype=args[0])

    @functools.cached_property
    def codegen_rule(self) -> Any:
        """The op's rule: an alternative form's for a call of its operand count, else ``rule``
        (worked out when the ops are registered, after every form is declared; see
        :meth:`IntrinTable.form_rule`)."""
        forms = self.forms
        if not forms or self.table is None:
            return self.rule
        return self.table.form_rule(self, forms)

    # What needs the builder's signature is worked out on first use: loading a backend
    # registers every op but builds none.
    @functools.cached_property
    def signature(self) -> inspect.Signature:
        """The builder's signature."""
        if isinstance(self.params, str):
            sig = _parse_params(self.params)
        else:
            sig = inspect.signature(self.params)
        return sig.replace(return_annotation=E.Call)

    @functools.cached_property
    def operands(self) -> OperandFn:
        """Builder arguments -> the call's operands."""
        fn = _identity(self.signature) if isinstance(self.params, str) else self.params
        convert = self.convert
        if convert is None:
            return fn

        def converted(*args: Any, **kwargs: Any) -> Operands | Typed:
            out = fn(*args, **kwargs)
            if isinstance(out, Typed):
                return Typed(out.dtype, tuple(convert(self.path, a) for a in out.operands))
            return tuple(convert(self.path, a) for a in out)

        return converted

    @functools.cached_property
    def builder(self) -> Builder:
        """The builder (what ``<backend>.op.<builder_name>`` is)."""
        return Builder(self)

    @property
    def doc(self) -> str:
        own = self.doc_text or ("" if isinstance(self.params, str) else inspect.getdoc(self.params))
        rule_doc = inspect.getdoc(self.rule) if callable(self.rule) else ""
        doc = own or rule_doc or ""
        head = f"Build a call of ``{self.name}``, printed ``T.{self.printer_name}(...)``."
        return head + (f"\n\n{doc}" if doc else "")

    def fits(self, n_operands: int) -> bool:
        lo, hi = self.nargs
        return n_operands >= lo and (hi is None or n_operands <= hi)

    def call(self, *args: Any, **kwargs: Any) -> E.Call:
        """Build the call from builder arguments (``TypeError`` when they do not bind)."""
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        self._check(bound.arguments)
        out = self.operands(*bound.args, **bound.kwargs)
        op = Op.get(self.name)
        if isinstance(out, Typed):
            return op(*out.operands, dtype=out.dtype)
        return op(*out)

    def _check(self, arguments: Mapping[str, Any]) -> None:
        for pname in self.strings:
            value = arguments.get(pname)
            if not isinstance(value, str):
                raise TypeError(
                    f"{self.builder_name}: {pname} must be a str, got {type(value).__name__}"
                )
        for pname, options in self.choices:
            value = arguments.get(pname)
            if isinstance(value, E.IntImm):
                value = int(value.value)
            if isinstance(value, (int, str)) and value not in options:
                raise ValueError(
                    f"{self.builder_name}: invalid {pname}={value!r}; expected one of {options}"
                )


class Builder:
    """The builder of an :class:`IntrinSpec`: a function of the builder's signature that returns
    the call (its signature and docstring are worked out when asked for)."""

    __slots__ = ("spec",)

    def __init__(self, spec: IntrinSpec) -> None:
        self.spec = spec

    def __call__(self, *args: Any, **kwargs: Any) -> E.Call:
        return self.spec.call(*args, **kwargs)

    @property
    def __name__(self) -> str:  # type: ignore[override]
        return self.spec.builder_name

    @property
    def __signature__(self) -> inspect.Signature:
        return self.spec.signature

    @property
    def __doc__(self) -> str:  # type: ignore[override]
        return self.spec.doc

    @property
    def __tir_op_name__(self) -> str | None:
        # an alternative form does not name its op: the op prints at its own path
        return None if self.spec.form_of else self.spec.name

    def __repr__(self) -> str:
        return f"<builder {self.__name__} of T.{self.spec.path}>"


@dataclasses.dataclass(frozen=True)
class SugarSpec:
    """A convenience builder over other intrinsics: a script path, no op of its own."""

    path: str
    fn: Callable[..., Any]
    export: bool  # also a builder of the table, under the function's name


# -- parameter lists -----------------------------------------------------------------------------
def _nargs(path: str, params: str | OperandFn, nargs: int | tuple[int, int | None] | None
           ) -> tuple[int, int | None]:
    if nargs is not None:
        rng = nargs
    elif isinstance(params, str):
        rng = _count(params)
    else:
        raise TypeError(f"intrin({path!r}): give nargs= with an operand function")
    return (rng, rng) if isinstance(rng, int) else rng


@functools.cache
def _parse_params(text: str) -> inspect.Signature:
    """``"a, b=1, *rest, c, d=''"`` as a signature (defaults are Python literals)."""
    kind: inspect._ParameterKind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = []
    for item in (p.strip() for p in text.split(",") if p.strip()):
        if item == "*":
            kind = inspect.Parameter.KEYWORD_ONLY
            continue
        if item.startswith("*"):
            params.append(inspect.Parameter(item[1:], inspect.Parameter.VAR_POSITIONAL))
            kind = inspect.Parameter.KEYWORD_ONLY
            continue
        pname, eq, default = item.partition("=")
        value = ast.literal_eval(default.strip()) if eq else inspect.Parameter.empty
        params.append(inspect.Parameter(pname.strip(), kind, default=value))
    return inspect.Signature(params)


def _count(text: str) -> tuple[int, int | None]:
    """The operand count range of a parameter list (operands = the arguments)."""
    items = [p.strip() for p in text.split(",") if p.strip() and p.strip() != "*"]
    fixed = sum(not p.startswith("*") for p in items)
    return (fixed, fixed if fixed == len(items) else None)


def _identity(signature: inspect.Signature) -> OperandFn:
    """Operands = the bound arguments in parameter order (``*args`` spliced in)."""

    def operands(*args: Any, **kwargs: Any) -> Operands:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        out: list[Any] = []
        for pname, param in signature.parameters.items():
            value = bound.arguments[pname]
            if param.kind is inspect.Parameter.VAR_POSITIONAL:
                out.extend(value)
            else:
                out.append(value)
        return tuple(out)

    return operands


# -- helpers for operand functions ---------------------------------------------------------------
def element(x: Any) -> Any:
    """A Buffer given where a value is expected stands for its first element."""
    return x[0] if isinstance(x, Buffer) else x
