"""tvm-backend-metal: Metal Shading Language for Apple GPUs.

After ``import tvm`` this package is also ``tvm.backend.metal`` and ``tvm.tirx.metal``.
Submodules load lazily (none imports anything heavy at import time):

* :mod:`~tvm_backend_metal.plugin`: the hooks; :mod:`~tvm_backend_metal.tags`: the target kind
  and Apple GPU tags;
* :mod:`~tvm_backend_metal.op` and :mod:`~tvm_backend_metal.script`: the ``tirx.metal.*``
  intrinsics and the ``T.metal`` namespace;
* :mod:`~tvm_backend_metal.codegen`: lowered IR to MSL; :mod:`~tvm_backend_metal.dispatch`:
  tile-primitive variants for Metal;
* :mod:`~tvm_backend_metal.compiler`: the compile stage (checks and packages the MSL);
* :mod:`~tvm_backend_metal.executable`: the build contract (``MetalBuilder``) and what
  ``tvm.compile(f, target="apple/m1-gpu")`` returns;
* :mod:`~tvm_backend_metal.msl_check`: ``check_msl(source)``, a C++-shim syntax check of MSL
  that runs on Linux;
* :mod:`~tvm_backend_metal.emulator`: ``run_msl(...)``, MSL kernels executed on the CPU;
* :mod:`~tvm_backend_metal.runtime`: the GPU runtime on macOS through pyobjc-framework-Metal
  (``pip install 'tvm-backend-metal[runtime]'``); without it, calls raise
  :class:`MetalRuntimeUnavailable` (a :class:`tvm.error.DeviceUnavailableError`).
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"
__all__ = [
    "MetalRuntimeUnavailable", "codegen", "compiler", "dispatch", "emulator", "executable",
    "msl_check", "op", "plugin", "register_backend", "runtime", "script", "script_namespace",
    "script_namespaces", "tags",
]

_LAZY_SUBMODULES = {"codegen", "compiler", "dispatch", "emulator", "executable", "msl_check", "op",
                    "plugin", "runtime", "script", "tags", "target_tags", "demo"}


def register_backend() -> Any:
    """The seed's contract: load this backend (idempotent); same as tvm.backend.load("metal")."""
    # The plugin imports tvm, whose autoload imports this plugin: at the package's top that is a
    # cycle (`import tvm_backend_metal` before tvm would hand tvm a half-run plugin).
    from .plugin import register_backend as _register  # noqa: PLC0415 - cycle through tvm

    return _register()


def script_namespaces(**_: Any) -> dict[str, Any]:
    """The seed's helper: the Metal-owned TVMScript namespaces."""
    # script imports tvm (through op): at the package's top, the same cycle as register_backend's.
    from .script import MetalNamespace  # noqa: PLC0415 - cycle through tvm

    return {"metal": MetalNamespace()}


def script_namespace(**kwargs: Any) -> Any:
    """The seed's helper: the ``T.metal`` namespace object."""
    return script_namespaces(**kwargs)["metal"]


def __getattr__(name: str) -> Any:
    if name == "MetalRuntimeUnavailable":  # defined with the runtime it is about
        return importlib.import_module(f"{__name__}.runtime").MetalRuntimeUnavailable
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
