"""tvm: write a tensor kernel once in Python, compile it for the hardware you have.

``import tvm`` loads the installed backends (see ``tvm.backend``); heavy SDKs are imported only
when a kernel is compiled or run.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from . import _logging, error, ir
from ._version import __version__ as __version__
from .backend import _autoload as _autoload_backends
from .ir import DataType, IRModule
from .ir import node as _ir_node
from .ir import op as _ir_op

__all__ = ["DataType", "IRModule", "autotune", "backend", "compile", "cpu", "cuda", "device",
           "error", "ir", "metal", "opencl", "rocm", "runtime", "script", "target", "tirx", "torch",
           "transform", "vulkan"]

if TYPE_CHECKING:
    # What __getattr__ below hands out lazily, spelled out for type checkers and IDEs; at run
    # time these imports would defeat the light `import tvm`.
    from . import autotune, backend, runtime, script, target, tirx, transform
    from . import driver as driver
    from . import host as host
    from . import plugin as plugin
    from . import testing as testing
    from . import torch as torch
    from .driver import compile
    from .runtime.devices import cpu, cuda, device, metal, opencl, rocm, vulkan

_LAZY_MODULES = {"tirx", "script", "target", "transform", "runtime", "backend", "plugin", "testing",
                 "driver", "host", "autotune", "torch"}


#: the seed's device constructors (``tvm.cuda(0)``), from tvm.runtime.device
_DEVICES = {"device", "cpu", "cuda", "rocm", "metal", "vulkan", "opencl"}


def __getattr__(name: str) -> Any:
    if name in _DEVICES:
        from .runtime import devices as _devices  # noqa: PLC0415 - the runtime loads on first use

        return getattr(_devices, name)
    if name == "compile":
        from .driver import compile as _compile  # noqa: PLC0415 - the driver (targets, pipelines, passes) loads on first use

        return _compile
    if name in _LAZY_MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'tvm' has no attribute {name!r}")


def _print_node(node: Any, **kwargs: Any) -> str:
    from .script.printer import to_script  # noqa: PLC0415 - the printer loads tvm.script (parser, tile primitives: ~30 ms) when a node is first printed, not at import tvm

    return to_script(node, **kwargs)


def _load_core_ops() -> object:
    # Importing registers them: tvm.tirx (the package) the builtins, then ops the tile primitives.
    from .tirx.operator.tile_primitive import ops  # noqa: PLC0415 - tvm.tirx loads when an op is first looked up by name, not at import tvm

    return ops


def _install_layer_hooks() -> None:
    """What the IR calls into the layers above it through: the TVMScript printer
    (``Node.script()``) and the registration of core's ops (``Op.get`` of one not yet
    registered). The facade wires them; the IR imports neither."""
    _ir_node.set_printer(_print_node)
    _ir_op.set_core_ops_loader(_load_core_ops)


def _configure_logging() -> None:
    if os.environ.get("TVM_LOG_LEVEL"):
        _logging.configure()


def _autoload() -> None:
    _autoload_backends()


_install_layer_hooks()
_configure_logging()
_autoload()
