"""``@T.jit``: a script function specialised on compile-time constants.

::

    @T.jit
    def fill(out: T.Buffer((n,), "float32"), *, n: T.constexpr, value: T.constexpr = 1.0):
        for i in range(n):
            out[i] = value

    f = fill.specialize(n=64)          # a PrimFunc: out is (64,), value 1.0; n is no parameter
    f = fill(n=64)                     # the same PrimFunc
    fill(out_array, n=64)              # compiled for the current target (host `c` without
                                       # one), once per values and target, and run

A parameter annotated ``T.constexpr`` (the seed's ``I.constexpr`` too) is not a parameter of
the PrimFunc: :meth:`JitFunction.specialize` binds it to a Python value, visible to the other
annotations and to the body as any closure value is (so ``if T.constexpr(n > 32):`` chooses a
branch while parsing). A parameter annotated ``T.Optional(annotation)`` is dropped when
specialised with ``None`` (and reads as ``None`` in the body), and is a parameter of that
annotation otherwise. The source is read when a specialisation is asked for, not at the
``def``, so annotations may name constants; each set of values is parsed once and the same
PrimFunc returned again.
"""

from __future__ import annotations

import ast
import copy
import inspect
import textwrap
from types import ModuleType
from typing import Any

from ..ir.expr import IntImm, PrimExpr
from ..ir.function import PrimFunc
from .diagnostics import Source
from .source import _closure_vars, _parse_ast, parse_def

__all__ = ["NAMESPACE_MARK", "ConstExpr", "JitFunction", "Optional", "constexpr", "jit"]

#: a script namespace module (``T``, ``I``) sets this global to True: the markers are recognised
#: when spelled through one (``T.constexpr``), and this module imports neither
NAMESPACE_MARK = "__tvm_script_namespace__"


class ConstExpr:
    """``T.constexpr``: the annotation of a compile-time parameter of a ``@T.jit`` function;
    called, ``T.constexpr(cond)`` is ``cond``, which must be known while parsing (a Python
    value, or a constant)."""

    def __call__(self, value: Any) -> Any:
        if isinstance(value, IntImm):
            return value.value
        if isinstance(value, PrimExpr):
            raise TypeError(f"T.constexpr({value}) is not known while the function is "
                            "specialised; it may use constexpr parameters and Python values, "
                            "not runtime variables")
        return value

    def __repr__(self) -> str:
        return "T.constexpr"


constexpr = ConstExpr()


class Optional:
    """``T.Optional(annotation)``: a ``@T.jit`` parameter that ``specialize(name=None)``
    leaves out."""

    def __init__(self, annotation: Any) -> None:
        self.annotation = annotation

    def __repr__(self) -> str:
        return f"T.Optional({self.annotation!r})"


_ABSENT = object()


class JitFunction:
    """What ``@T.jit`` gives: :meth:`specialize` makes PrimFuncs of it."""

    def __init__(self, fn: Any, *, private: bool, outer: dict[str, Any]) -> None:
        self.fn = fn
        self.private = private
        self.__name__ = getattr(fn, "__name__", "jit")
        self.__doc__ = getattr(fn, "__doc__", None)
        self._outer = outer
        # the closure as it is at the `def` (the seed's snapshot): a later rebinding of an
        # enclosing variable does not change what a specialisation sees
        self._captured = _closure_vars(fn)
        self._tree: tuple[Source, ast.FunctionDef] | None = None
        self._cache: dict[Any, PrimFunc] = {}
        self._compiled: dict[tuple[int, str], Any] = {}  # (id of a cached PrimFunc, target)

    # -- what the source declares -----------------------------------------------------------
    def _source(self) -> tuple[Source, ast.FunctionDef]:
        if self._tree is None:
            fn = self.fn
            try:
                raw = inspect.getsource(fn)
                filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
            except (OSError, TypeError) as exc:
                raise TypeError(f"@T.jit needs the function's source text ({exc})") from None
            source = Source.from_snippet(raw, filename, fn.__code__.co_firstlineno)
            tree = _parse_ast(source)
            fdef = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
            if fdef is None:
                raise source.error(tree.body[0] if tree.body else None, "@T.jit expects a `def`")
            self._tree = (source, fdef)
        return self._tree

    def _lookups(self, first: dict[str, Any]) -> list[dict[str, Any]]:
        return [first, self._captured, _closure_vars(self.fn), self._outer, self.fn.__globals__]

    def _params(self) -> list[tuple[ast.arg, ast.expr | None]]:
        """Every parameter with its default (positional, then keyword-only)."""
        args = self._source()[1].args
        positional = args.posonlyargs + args.args
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
        defaults += list(args.defaults)
        return list(zip(positional, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults))

    def _kind(self, annotation: ast.expr | None) -> str:
        """``"constexpr"``, ``"optional"`` or ``"runtime"``: the marker is recognised by the
        namespace it is spelled through (``T.constexpr``, ``I.constexpr``), not by name."""
        if annotation is None:
            return "runtime"
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            source = self._source()[0]
            raise source.error(annotation, "Quoted annotations are not supported in @T.jit; "
                                           "write the annotation itself")
        target = annotation.func if isinstance(annotation, ast.Call) else annotation
        if isinstance(target, ast.Name):  # the marker imported by name
            value = self._resolve(target.id)
            if target is annotation and value is constexpr:
                return "constexpr"
            return "optional" if target is not annotation and value is Optional else "runtime"
        if not isinstance(target, ast.Attribute):
            return "runtime"
        namespace = self._namespace(target.value)
        if namespace is None:
            return "runtime"
        if target is annotation and target.attr == "constexpr":
            return "constexpr"
        if target is not annotation and target.attr == "Optional":
            return "optional"
        return "runtime"

    def _namespace(self, node: ast.expr) -> Any:
        """The script namespace module ``node`` names (``T``, ``I``, ``tvm.script.tirx``: a
        module that sets :data:`NAMESPACE_MARK`), or None; a name that does not resolve is not
        one."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        value = self._resolve(node.id)
        for attr in reversed(parts):
            value = getattr(value, attr, _MISSING)
        is_namespace = isinstance(value, ModuleType) and vars(value).get(NAMESPACE_MARK) is True
        return value if is_namespace else None

    def _resolve(self, name: str) -> Any:
        for scope in self._lookups({}):
            if name in scope:
                return scope[name]
        return _MISSING

    @property
    def constexpr_names(self) -> set[str]:
        return {a.arg for a, _ in self._params() if self._kind(a.annotation) == "constexpr"}

    @property
    def optional_names(self) -> set[str]:
        return {a.arg for a, _ in self._params() if self._kind(a.annotation) == "optional"}

    # -- specialising -----------------------------------------------------------------------
    def specialize(self, **values: Any) -> PrimFunc:
        """The PrimFunc for these constexpr values (and ``None`` for optional parameters
        to leave out); the same object for the same values."""
        key = _key(values)
        cached = self._cache.get(key) if key is not None else None
        if cached is not None:
            return cached
        func = self._specialize(values)
        if key is not None:
            self._cache[key] = func
        return func

    def _specialize(self, values: dict[str, Any]) -> PrimFunc:
        source, fdef = self._source()
        consts: dict[str, Any] = {}
        kept: list[ast.arg] = []
        defaults = self._defaults()
        given = dict(values)
        for arg, _ in self._params():
            kind = self._kind(arg.annotation)
            value = given.pop(arg.arg, _ABSENT)
            if kind == "constexpr":
                if value is _ABSENT:
                    value = defaults.get(arg.arg, _ABSENT)
                if value is _ABSENT:
                    raise TypeError(f"{self.__name__}.specialize: missing the value of "
                                    f"constexpr parameter {arg.arg!r}")
                consts[arg.arg] = value
            elif kind == "optional":
                if value is not _ABSENT and value is not None:
                    raise TypeError(f"{self.__name__}.specialize: optional parameter "
                                    f"{arg.arg!r} takes None (to leave it out) or nothing, "
                                    f"got {value!r}")
                if value is None:
                    consts[arg.arg] = None
                else:
                    inner = copy.copy(arg)
                    inner.annotation = arg.annotation.args[0]  # type: ignore[union-attr]
                    kept.append(inner)
            else:
                if value is not _ABSENT:
                    raise TypeError(f"{self.__name__}.specialize: {arg.arg!r} is a runtime "
                                    f"parameter; only constexpr and optional parameters take "
                                    f"values")
                kept.append(arg)
        if given:
            raise TypeError(f"{self.__name__}.specialize: unexpected keyword argument(s) "
                            f"{', '.join(map(repr, given))}: no parameter has that name "
                            f"(parameters: {', '.join(a.arg for a, _ in self._params())})")
        spec = copy.copy(fdef)
        spec.args = ast.arguments(posonlyargs=[], args=kept, vararg=fdef.args.vararg,
                                  kwonlyargs=[], kw_defaults=[], kwarg=fdef.args.kwarg,
                                  defaults=[])
        spec.decorator_list = []
        return parse_def(source, self._lookups(consts), spec, private=self.private)

    def _defaults(self) -> dict[str, Any]:
        """The constexpr parameters' defaults, evaluated in the function's scope."""
        out: dict[str, Any] = {}
        for arg, default in self._params():
            if default is None or self._kind(arg.annotation) != "constexpr":
                continue
            code = compile(ast.Expression(default), "<default>", "eval")
            scope: dict[str, Any] = {}
            for lookup in reversed(self._lookups({})):
                scope.update(lookup)
            out[arg.arg] = eval(code, scope)  # noqa: S307 - the user's own default expression
        return out

    # -- calling ----------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """``f(n=64)``: :meth:`specialize` (the PrimFunc). ``f(a, b, n=64)``: with the runtime
        parameters' values too (by position, in order, or by name), that PrimFunc compiled
        for the current target (``with tvm.target.Target(...)``; the host ``c`` without one),
        once per values and target, and run on them; returns what the function returns."""
        names = {a.arg: self._kind(a.annotation) for a, _ in self._params()}
        # constexpr values, and None for an optional parameter left out (given anything
        # else, an optional parameter is a runtime argument)
        values = {k: v for k, v in kwargs.items() if names.get(k) == "constexpr"
                  or (names.get(k) == "optional" and v is None)}
        runtime_kw = {k: v for k, v in kwargs.items() if k not in values}
        unknown = [k for k in runtime_kw if k not in names]
        if unknown:
            raise TypeError(f"{self.__name__}() got an unexpected keyword argument "
                            f"{unknown[0]!r}; its parameters are {', '.join(names)}")
        func = self.specialize(**values)
        if not args and not runtime_kw:
            return func
        runtime = [k for k, kind in names.items() if kind == "runtime"
                   or (kind == "optional" and values.get(k, _ABSENT) is not None)]
        return self._run(func, self._bind(runtime, args, runtime_kw), values)

    def _bind(self, runtime: list[str], args: tuple[Any, ...],
              kwargs: dict[str, Any]) -> list[Any]:
        """The runtime arguments in parameter order; errors name what is wrong."""
        if len(args) > len(runtime):
            raise TypeError(f"{self.__name__}() takes {len(runtime)} runtime argument(s) "
                            f"({', '.join(runtime) or 'none'}) but {len(args)} were given; "
                            f"constexpr values are given by name (n=64)")
        bound = dict(zip(runtime, args))
        for k, v in kwargs.items():
            if k in bound:
                raise TypeError(f"{self.__name__}() got multiple values for argument {k!r}")
            bound[k] = v
        missing = [k for k in runtime if k not in bound]
        if missing:
            raise TypeError(f"{self.__name__}() is missing runtime argument(s) "
                            f"{', '.join(map(repr, missing))}; call {self.__name__}(**constexpr "
                            f"values) alone for the PrimFunc")
        return [bound[k] for k in runtime]

    def _run(self, func: PrimFunc, args: list[Any], values: dict[str, Any]) -> Any:
        from .. import driver  # noqa: PLC0415 - the driver (targets, pipelines) loads on first use
        from ..target import Target  # noqa: PLC0415 - (the same)

        target = Target.current() or Target("c")
        cacheable = _key(values) is not None
        key = (id(func), str(target))
        executable = self._compiled.get(key) if cacheable else None
        if executable is None:
            executable = driver.compile(func, target=target)
            if cacheable:  # keyed by the cached PrimFunc, which the cache keeps alive
                self._compiled[key] = executable
        return executable(*args)

    def __repr__(self) -> str:
        return f"<T.jit function {self.__name__}>"


_MISSING = object()


def _key(values: dict[str, Any]) -> Any:
    """A cache key of the values, or None when one cannot be hashed (then nothing is cached)."""
    try:
        key = tuple(sorted(values.items()))
        hash(key)
    except TypeError:
        return None
    return key


def _used(fn: Any, scope: dict[str, Any]) -> dict[str, Any]:
    """The entries of the defining frame's ``scope`` that ``fn``'s source names: a jit
    function keeps alive what it may read, not the whole frame."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return scope
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    return {k: v for k, v in scope.items() if k in names}


def jit(func: Any = None, *, private: bool = False) -> Any:
    """Decorator: ``@T.jit`` or ``@T.jit(private=True)``; see :class:`JitFunction`."""
    frame = inspect.currentframe()
    caller = frame.f_back if frame is not None else None
    outer = dict(caller.f_locals) if caller is not None else {}
    del frame, caller

    def wrap(fn: Any) -> JitFunction:
        if not callable(fn):
            raise TypeError("T.jit decorates a function: write @T.jit or @T.jit(private=True)")
        return JitFunction(fn, private=private, outer=_used(fn, outer))

    if func is None:
        return wrap
    return wrap(func)
