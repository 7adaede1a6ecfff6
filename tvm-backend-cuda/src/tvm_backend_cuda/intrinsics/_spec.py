"""One declaration per intrinsic: everything else is derived from it.

A family module declares each intrinsic once, on its codegen rule::

    @intrin("ptx.bar.sync", "name_bar_id, thread_count")
    def _bar_sync(call, emit): ...

and from that spec come

- the op ``tirx.ptx.bar_sync`` (``tirx.<namespace>.<name>``; ``name`` defaults to the rest of the
  path with dots as underscores), a ``device_intrin`` of namespace ``ptx``;
- its printed form ``T.ptx.bar.sync(...)`` and the member ``T.ptx.bar.sync`` of the script
  namespace (the path);
- the builder ``ptx_bar_sync(name_bar_id, thread_count)`` in ``tvm_backend_cuda.op`` (the seed's
  name, ``<namespace>_<name>`` unless ``builder=`` says otherwise);
- the seed's flat op name ``tirx.ptx_bar_sync``, an alias of the op (``alias=``);
- its CUDA rule.

The second argument says how builder arguments become the op's operands: a parameter list
(``"dst_ptr, n_cols, cta_group=1"``, ``"fmt, *args"``) means the operands are the arguments in
that order, defaults filled in; a function means the operands are what it returns (its
signature is the builder's), for builders that compute operands (cache policies, register
counts). ``choices`` and ``strings`` check arguments by name before any operand is built: a
value outside its choices raises ``ValueError``, a non-string where a string is required
``TypeError`` (so the script namespace falls back to the raw operand form, see ``script.py``).

A declaration may also be a second operand form of an op declared before it (``form_of=`` that
op's path): it has its own builder and script path but no op of its own, its calls are calls of
that op told apart by their operand count, with the call's result type given by the builder
(:class:`Typed`), and they print (and parse) as ``T.<that path>("<dtype>", *operands)``. The
seed's legacy cp.async (``ptx_cp_async_legacy``: five operands, the element type as the call's
type) is one.

Convenience builders over other intrinsics (``cuda_warp_sum`` builds ``warp_reduce``) have no op
of their own; :func:`sugar` declares them with their script path.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from tvm.error import NotModelledError
from tvm.ir import Buffer, CallEffect, DataType, Op, const
from tvm.ir import expr as E

from ._base import Emit, Rule

__all__ = [
    "PURE",
    "UPDATE",
    "DTypeRule",
    "Builder",
    "IntrinSpec",
    "SPECS",
    "SUGAR",
    "SugarSpec",
    "Typed",
    "build",
    "element",
    "intrin",
    "resolve_cache_policy",
    "spec_at",
    "sugar",
]

PURE = CallEffect.PURE
UPDATE = CallEffect.UPDATE_STATE

Operands = tuple[Any, ...]
DTypeRule = Callable[[Sequence[Any]], "DataType | str"] | str | None


@dataclasses.dataclass(frozen=True)
class Typed:
    """Operands with the call's result type given by the builder (``cuda_func_call``)."""

    dtype: str
    operands: Operands


OperandFn = Callable[..., "Operands | Typed"]


@dataclasses.dataclass(frozen=True)
class IntrinSpec:
    """One device intrinsic: its op, builder, script path, seed names and codegen rule."""

    path: str  # "ptx.wgmma.commit_group": T.<path>, and the printer name
    rule: Rule
    params: str | OperandFn  # the builder's parameter list, or its operand function
    nargs: tuple[int, int | None]  # operand count range of the raw call, max None = any
    op_suffix: str  # the op is tirx.<namespace>.<op_suffix>
    builder_name: str  # the seed's builder name in tvm_backend_cuda.op
    alias: str | None  # the seed's flat op name, registered as an alias of the op
    dtype: DTypeRule = "void"
    effect: CallEffect = UPDATE
    script_kwargs: tuple[str, ...] = ()
    min_arch: int = 0  # the oldest SM the emitted code assembles for
    max_arch: int | None = None  # the newest, when a later SM dropped the instruction (wgmma)
    choices: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    strings: tuple[str, ...] = ()
    dtype_forward: bool = False  # the script member moves a dtype= keyword to the front
    family: str = ""
    form_of: str | None = None  # an alternative operand form of the op declared at this path
    # the emulation rule(call, emit): C++ for the CPU emulator (tvm_backend_cuda.emulator), where
    # the CUDA rule emits PTX; None: the CUDA rule's text is used when it is plain CUDA C++
    emulate: Rule | None = None

    @property
    def namespace(self) -> str:
        return self.path.partition(".")[0]

    @property
    def name(self) -> str:
        return f"tirx.{self.namespace}.{self.op_suffix}"

    @property
    def printer_name(self) -> str:
        """The op's printed path (an alternative form prints as the op it is a form of)."""
        return self.form_of or self.path

    @property
    def forms(self) -> tuple[IntrinSpec, ...]:
        """The alternative operand forms of this spec's op (declared with ``form_of=``)."""
        return tuple(_FORMS.get(self.path, ()))

    def form_call(self, args: Sequence[Any]) -> E.Call | None:
        """The call an alternative form prints as ``T.<path>("<dtype>", *operands)``, if ``args``
        is that (a str, then as many operands as some form of this op has); else None."""
        if not args or not isinstance(args[0], str):
            return None
        if not any(f.fits(len(args) - 1) for f in self.forms):
            return None
        return Op.get(self.name)(*args[1:], dtype=args[0])

    @functools.cached_property
    def emulate_rule(self) -> Rule | None:
        """The op's emulation rule (an alternative form's for a call of its operand count)."""
        forms = self.forms
        if not forms:
            return self.emulate
        if self.emulate is None and all(f.emulate is None for f in forms):
            return None

        def rule(call: E.Call, emit: Emit) -> str:
            n = len(call.args)
            form = next((f for f in forms if f.fits(n)), None) or self
            if form.emulate is None:
                raise NotModelledError(f"intrinsic {form.path} has no emulation body; the CUDA "
                                       "emulator cannot run a kernel that uses it")
            return form.emulate(call, emit)

        return rule

    @functools.cached_property
    def codegen_rule(self) -> Rule:
        """The op's rule: an alternative form's for a call of its operand count, else ``rule``
        (worked out when the ops are registered, after every family has declared its forms)."""
        forms = self.forms
        if not forms:
            return self.rule

        def rule(call: E.Call, emit: Emit) -> str:
            n = len(call.args)
            form = next((f for f in forms if f.fits(n)), None)
            return (form or self).rule(call, emit)

        rule.__doc__ = inspect.getdoc(self.rule)
        return rule

    # What needs the builder's signature is worked out on first use: loading the backend
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
        return _identity(self.signature) if isinstance(self.params, str) else self.params

    @functools.cached_property
    def builder(self) -> Builder:
        """The seed's builder (what ``tvm_backend_cuda.op.<builder_name>`` is)."""
        return Builder(self)

    @property
    def doc(self) -> str:
        own = "" if isinstance(self.params, str) else inspect.getdoc(self.params)
        doc = own or inspect.getdoc(self.rule) or ""
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
    """A builder of :class:`IntrinSpec` ``spec``: a function of the builder's signature that
    returns the call (its signature and docstring are worked out when asked for)."""

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

    def __repr__(self) -> str:
        return f"<builder {self.__name__} of T.{self.spec.path}>"


@dataclasses.dataclass(frozen=True)
class SugarSpec:
    """A convenience builder over other intrinsics: a script path, no op of its own."""

    path: str
    fn: Callable[..., Any]
    export: bool  # also a builder of tvm_backend_cuda.op, under the function's name


SPECS: list[IntrinSpec] = []
SUGAR: list[SugarSpec] = []
_BY_PATH: dict[str, IntrinSpec] = {}
_FORMS: dict[str, list[IntrinSpec]] = {}  # an op's path -> its alternative operand forms


def intrin(
    path: str,
    params: str | OperandFn = "",
    *,
    nargs: int | tuple[int, int | None] | None = None,
    name: str | None = None,
    builder: str | None = None,
    alias: str | bool = True,
    dtype: DTypeRule = "void",
    effect: CallEffect = UPDATE,
    choices: Mapping[str, Iterable[Any]] | None = None,
    strings: tuple[str, ...] = (),
    dtype_forward: bool = False,
    script_kwargs: tuple[str, ...] = (),
    min_arch: int = 0,
    max_arch: int | None = None,
    form_of: str | None = None,
    emulate: Rule | None = None,
) -> Callable[[Rule], Rule]:
    """Declare the intrinsic printed ``T.<path>(...)``; decorates its codegen rule.

    ``params`` is the builder's parameter list (operands = arguments) or a function from the
    builder's arguments to the operands; with a function, ``nargs`` gives the raw operand count
    (an int, or ``(min, max)`` with ``max`` None for any).

    ``form_of`` makes this an alternative operand form of the op declared at that path (see the
    module docstring): ``params`` is then a function returning :class:`Typed` operands, ``nargs``
    a count the op's own form does not take, and there is no op or alias of its own.

    ``emulate`` is the intrinsic's emulation rule (same contract as the CUDA rule): the C++ the
    CPU emulator compiles in place of the PTX, usually a call of a named helper of the
    emulator's shim (``emu/tvm_cuda_emu.h``). A kernel using an intrinsic whose CUDA rule emits
    PTX and that has no emulation rule fails to build for the emulator, naming it.
    """
    ns, _, rest = path.partition(".")
    suffix = name or rest.replace(".", "_")
    if nargs is not None:
        rng = nargs
    elif isinstance(params, str):
        rng = _count(params)
    else:
        raise TypeError(f"intrin({path!r}): give nargs= with an operand function")
    rng_t = (rng, rng) if isinstance(rng, int) else rng
    builder_name = builder or f"{ns}_{suffix}"
    alias_name = (f"tirx.{builder_name}" if alias is True else alias) or None
    if form_of is not None:
        host = _BY_PATH.get(form_of)
        if host is None or host.form_of is not None or host.namespace != ns:
            raise ValueError(f"intrin({path!r}): form_of={form_of!r} is no op declared before it")
        if rng_t[0] != rng_t[1] or any(f.fits(rng_t[0]) for f in (host, *host.forms)):
            raise ValueError(f"intrin({path!r}): a form needs an operand count of its own")
        suffix, alias_name = host.op_suffix, None
    family = str(sys._getframe(1).f_globals.get("__name__", "")).rsplit(".", 1)[-1]

    def deco(rule: Rule) -> Rule:
        if path in _BY_PATH:
            raise ValueError(f"intrinsic T.{path} is declared twice")
        spec = IntrinSpec(
            path=path,
            rule=rule,
            params=params,
            nargs=rng_t,
            op_suffix=suffix,
            builder_name=builder_name,
            alias=alias_name,
            dtype=dtype,
            effect=effect,
            script_kwargs=script_kwargs,
            min_arch=min_arch,
            max_arch=max_arch,
            choices=tuple((k, tuple(v)) for k, v in (choices or {}).items()),
            strings=strings,
            dtype_forward=dtype_forward,
            family=family,
            form_of=form_of,
            emulate=emulate,
        )
        SPECS.append(spec)
        _BY_PATH[path] = spec
        if form_of is not None:
            _FORMS.setdefault(form_of, []).append(spec)
        return rule

    return deco


def sugar(path: str, *, export: bool = True) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare ``T.<path>`` as the decorated convenience builder (``export``: also in
    ``tvm_backend_cuda.op`` under the function's name)."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        SUGAR.append(SugarSpec(path, fn, export))
        return fn

    return deco


def spec_at(path: str) -> IntrinSpec:
    """The spec of the intrinsic at ``T.<path>``."""
    return _BY_PATH[path]


def build(path: str, *args: Any, **kwargs: Any) -> E.Call:
    """Build a call of the intrinsic at ``T.<path>`` with its builder's arguments."""
    return _BY_PATH[path].call(*args, **kwargs)


# -- parameter lists ---------------------------------------------------------------------------
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
_CACHE_POLICY = {
    "evict_normal": 0x1000000000000000,
    "evict_first": 0x12F0000000000000,
    "evict_last": 0x14F0000000000000,
}


def resolve_cache_policy(cache_hint: Any, policy: Any) -> tuple[Any, int]:
    """``(policy operand, has_policy)`` from a ``cache_hint`` name or an explicit policy."""
    if not isinstance(cache_hint, str):
        raise TypeError(f"cache_hint must be a str, got {type(cache_hint).__name__}")
    if policy is not None:
        return policy, 1
    if not cache_hint:
        return const(0, "uint64"), 0
    if cache_hint not in _CACHE_POLICY:
        raise ValueError(
            f"unknown cache_hint {cache_hint!r}; expected one of {sorted(_CACHE_POLICY)} or "
            f"pass cache_policy="
        )
    return const(_CACHE_POLICY[cache_hint], "uint64"), 1


def element(x: Any) -> Any:
    """A Buffer given where a value is expected stands for its first element."""
    return x[0] if isinstance(x, Buffer) else x
