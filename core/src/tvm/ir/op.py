"""The op registry.

Every op has exactly one category:

- ``builtin``: core operations (math, casts-by-call, markers), printed ``T.<name>(...)``;
- ``tile_primitive``: ``tirx.tile.<op>``, called through ``Tx``/``T.tile`` and dispatched per target;
- ``device_intrin``: a backend's intrinsic, with its script ``namespace`` (``cuda``, ``ptx``, ...)
  and ``printer_name`` (``ptx.wgmma.commit_group``), printed ``T.<printer_name>(...)``.

The set of device namespaces is open: backends register ops with theirs. Ops carry typed
attributes (``op.get_attr(key)``), among them codegen rules keyed by target kind
(``op.set_codegen("cuda", fn)``).

An op may have other names: :meth:`Op.register_alias` makes ``Op.get(alias)`` return the op
(a backend fills this table with the second spelling its users know, such as a flat
``tirx.<ns>_<name>`` beside the canonical ``tirx.<ns>.<name>``). Aliases are not ops:
:meth:`Op.list` does not show them, and calls and the printer use the canonical name.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Any

from .._registry import Registry, core_scope
from ..error import RegistrationConflict
from . import expr as _expr  # expr imports this module: its names are read at call time
from .dtype import DataType

__all__ = ["ELECTS_ONE_LANE", "OP_ALIASES", "OP_REGISTRY", "CallEffect", "Op", "OpCategory"]

#: op attribute: a call of the op is nonzero on exactly one active lane of the warp
#: (``T.ptx.elect_sync()``), so the execution context reads ``if`` on it as that one lane
ELECTS_ONE_LANE = "elects_one_lane"


class OpCategory(str, enum.Enum):
    BUILTIN = "builtin"
    TILE_PRIMITIVE = "tile_primitive"
    DEVICE_INTRIN = "device_intrin"


class CallEffect(enum.IntEnum):
    """What a call does besides computing its value (mirrors TVM's CallEffectKind)."""

    EXPR_ANNOTATION = 0
    PURE = 1
    READ_STATE = 2
    UPDATE_STATE = 3
    OPAQUE = 4


DTypeRule = Callable[[Sequence[Any]], "DataType | str"] | str | None


class Op:
    """A registered operation. Compare ops with ``is``; look them up with :meth:`Op.get`."""

    __slots__ = ("attrs", "category", "dtype_rule", "effect", "name", "namespace", "printer_name",
                 "signature")

    def __init__(self, name: str, category: OpCategory, *, namespace: str | None,
                 printer_name: str, effect: CallEffect, dtype_rule: DTypeRule,
                 signature: Sequence[str] | None, attrs: dict[str, Any]) -> None:
        self.name = name
        self.category = category
        self.namespace = namespace
        self.printer_name = printer_name
        self.effect = effect
        self.dtype_rule = dtype_rule
        self.signature = tuple(signature) if signature is not None else None
        self.attrs = attrs

    # -- registry --------------------------------------------------------------------------
    @staticmethod
    def register(
        name: str,
        *,
        category: OpCategory | str = OpCategory.BUILTIN,
        namespace: str | None = None,
        printer_name: str | None = None,
        effect: CallEffect | int = CallEffect.OPAQUE,
        dtype: DTypeRule = None,
        signature: Sequence[str] | None = None,
        override: bool = False,
        **attrs: Any,
    ) -> Op:
        """Register an op.

        ``dtype`` is the result type rule: a fixed type string (``"void"``, ``"bool"``), ``"arg0"``
        (the type of the first expression argument), or a callable of the arguments.
        ``signature`` optionally names the parameters (used in messages and docs).
        """
        cat = OpCategory(category)
        if cat is OpCategory.TILE_PRIMITIVE and not name.startswith("tirx.tile."):
            raise ValueError(f"tile primitive {name!r} must be named 'tirx.tile.<op>'")
        if cat is OpCategory.DEVICE_INTRIN:
            if not namespace:
                raise ValueError(f"device intrinsic {name!r} needs its script namespace (e.g. 'cuda')")
            printer_name = printer_name or name.removeprefix("tirx.").removeprefix(f"{namespace}.")
            if not (printer_name == namespace or printer_name.startswith(namespace + ".")):
                printer_name = f"{namespace}.{printer_name}"
        else:
            if namespace is not None:
                raise ValueError(f"op {name!r}: only device intrinsics carry a namespace")
            if printer_name is None:
                printer_name = name.removeprefix("tirx.tile.") if cat is OpCategory.TILE_PRIMITIVE \
                    else name.removeprefix("tirx.")
        if name in OP_ALIASES:
            raise RegistrationConflict(f"op {name!r} cannot be registered: it is an alias of "
                                       f"{OP_ALIASES[name]!r}")
        op = Op(name, cat, namespace=namespace, printer_name=printer_name, effect=CallEffect(effect),
                dtype_rule=dtype, signature=signature, attrs=dict(attrs))
        return OP_REGISTRY.register(name, op, override=override)

    @staticmethod
    def register_alias(alias: str, name: str) -> None:
        """Make ``Op.get(alias)`` return the op named ``name`` (registered now or later).

        The alias belongs to the running registration (a backend's load rolls it back with the
        rest); it cannot shadow an op, and registering the same alias twice for one name is a
        no-op.
        """
        if alias == name or alias in OP_REGISTRY:
            raise RegistrationConflict(f"op alias {alias!r} would shadow the op of that name")
        if OP_ALIASES.get(alias) == name:
            return
        OP_ALIASES.register(alias, name)

    @staticmethod
    def aliases_of(name: str) -> list[str]:
        """The aliases that resolve to the op named ``name``."""
        return [alias for alias, target in OP_ALIASES.items() if target == name]

    @staticmethod
    def get(name: str) -> Op:
        op = _lookup(name)
        if op is None and _ensure_core_ops():
            op = _lookup(name)
        if op is None:
            hint = ""
            close = [k for k in OP_REGISTRY if k.endswith(name.split(".")[-1])][:5]
            if close:
                hint = f"; similar: {close}"
            raise KeyError(f"no op named {name!r} is registered{hint}. A backend may provide it: "
                           f"see tvm.backend.list_backends()")
        return op

    @staticmethod
    def exists(name: str) -> bool:
        _ensure_core_ops()
        return _lookup(name) is not None

    @staticmethod
    def list_op_names() -> list[str]:
        """The names of every registered op (the seed's name)."""
        _ensure_core_ops()
        return list(OP_REGISTRY)

    @staticmethod
    def list(prefix: str = "") -> list[Op]:
        _ensure_core_ops()
        return [op for key, op in OP_REGISTRY.items() if key.startswith(prefix)]

    # -- attributes ------------------------------------------------------------------------
    def get_attr(self, key: str, default: Any = None) -> Any:
        """An attribute; the seed's ``TIRxOpCategory``, ``TDeviceIntrinsicNamespace``,
        ``TScriptPrinterName`` and ``TCallEffectKind`` read the op's ``category``, (device
        intrinsics') ``namespace`` and ``printer_name``, and ``effect`` as the seed's number
        (its ``kOpaque`` is ``kUpdateState``, 3)."""
        if key == "TIRxOpCategory":
            return self.category.value
        device = self.category is OpCategory.DEVICE_INTRIN
        if key == "TDeviceIntrinsicNamespace":
            return self.namespace if device else default
        if key == "TScriptPrinterName":
            return self.printer_name if device else self.attrs.get(key, default)
        if key == "TCallEffectKind":
            return min(int(self.effect), int(CallEffect.UPDATE_STATE))
        return self.attrs.get(key, default)

    def set_attr(self, key: str, value: Any) -> None:
        self.attrs[key] = value

    def set_codegen(self, target_kind: str, rule: Any) -> None:
        """Attach the code generation rule of this op for ``target_kind``."""
        self.attrs[f"codegen.{target_kind}"] = rule

    def get_codegen(self, target_kind: str) -> Any:
        return self.attrs.get(f"codegen.{target_kind}")

    # -- calls -----------------------------------------------------------------------------
    def infer_dtype(self, args: Sequence[Any]) -> DataType:
        rule = self.dtype_rule
        if rule is None:
            return DataType("void")
        if callable(rule):
            return DataType(rule(args))
        if rule == "arg0":
            for a in args:
                if isinstance(a, _expr.PrimExpr):
                    return a.dtype
            return DataType("void")
        return DataType(rule)

    def __call__(self, *args: Any, dtype: str | DataType | None = None) -> Any:
        """Build a :class:`~tvm.ir.Call` of this op (the result type from its rule)."""
        conv = [_expr._convert_arg(a) for a in args]
        return _expr.Call(dtype if dtype is not None else self.infer_dtype(conv), self, conv)

    def __repr__(self) -> str:
        return f"Op({self.name!r})"

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (Op.get, (self.name,))


OP_REGISTRY: Registry[str, Op] = Registry("op")
OP_ALIASES: Registry[str, str] = Registry("op alias")  # alias -> canonical op name


def _lookup(name: str) -> Op | None:
    op: Op | None = OP_REGISTRY.get(name)
    if op is None and name in OP_ALIASES:
        op = OP_REGISTRY.get(OP_ALIASES[name])
    return op

_core_ops_loaded = False
# What registers core's builtin and tile-primitive ops: importing tvm.tirx (a layer above the IR)
# does; `import tvm` installs a function that imports it on first need (tvm/__init__.py).
_CORE_OPS_LOADER: list[Callable[[], object]] = []


def set_core_ops_loader(loader: Callable[[], object]) -> None:
    """Make ``loader()`` what registers core's ops the first time an op is looked up."""
    _CORE_OPS_LOADER[:] = [loader]


def _ensure_core_ops() -> bool:
    """Register core's builtin and tile-primitive ops on first need; True if it just did."""
    global _core_ops_loaded
    if _core_ops_loaded or not _CORE_OPS_LOADER:
        return False
    _core_ops_loaded = True
    with core_scope():
        _CORE_OPS_LOADER[0]()
    return True
