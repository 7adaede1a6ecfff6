"""AWS Trainium backend for tvm-core.

After ``import tvm`` this package is also ``tvm.backend.trn`` and ``tvm.tirx.trn``. Importing it
is cheap: submodules load on first use. The layout every backend has: ``plugin`` (the hooks),
``tags``, ``script`` and ``op`` (``T.nki``), ``dispatch``, ``codegen`` (IR to the instruction
form and NKI source), ``compiler`` (the instruction form to the payload), ``executable`` (the
build contract and the Executable), ``runtime`` (the simulator entry); and Trainium's own:
``layout``, ``transform`` and ``pipeline``, the instruction form ``isa``, its operands
``access``, the renderers ``nki_render`` and the numpy ``simulator``.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_LAZY_SUBMODULES = {
    "access", "codegen", "compiler", "demo", "dispatch", "executable", "isa", "layout",
    "nki_render", "op", "pipeline", "plugin", "runtime", "script", "simulator", "tags",
    "target_tags", "transform",
}

__all__ = ["__version__", "register_backend", "script_namespace", "script_namespaces",
           *sorted(_LAZY_SUBMODULES)]


def register_backend() -> Any:
    """Load this backend into tvm (idempotent): the seed's backend contract."""
    # The plugin imports tvm, whose autoload imports this plugin: at the package's top that is a
    # cycle (`import tvm_backend_trn` before tvm would hand tvm a half-run plugin).
    from .plugin import register_backend as _register  # noqa: PLC0415 - cycle through tvm

    return _register()


def script_namespace(op_wrapper: Any = None) -> Any:
    """A new ``T.nki`` namespace object (the seed's helper)."""
    # script imports tvm (through op): at the package's top, the same cycle as register_backend's.
    from .script import NKINamespace  # noqa: PLC0415 - cycle through tvm

    return NKINamespace(op_wrapper)


def script_namespaces(op_wrapper: Any = None, **_: Any) -> dict[str, Any]:
    return {"nki": script_namespace(op_wrapper)}


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
