"""tvm: write a tensor kernel once in Python, compile it for the hardware you have.

``import tvm`` loads the installed backends (see ``tvm.backend``); heavy SDKs are imported only
when a kernel is compiled or run.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from . import _logging, error, ir
from .backend import _autoload as _autoload_backends
from .ir import DataType, IRModule

__version__ = "0.1.0"
__all__ = ["DataType", "IRModule", "autotune", "backend", "compile", "error", "ir", "runtime",
           "script", "target", "tirx", "torch", "transform"]

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

_LAZY_MODULES = {"tirx", "script", "target", "transform", "runtime", "backend", "plugin", "testing",
                 "driver", "host", "autotune", "torch"}


def __getattr__(name: str) -> Any:
    if name == "compile":
        from .driver import compile as _compile  # noqa: PLC0415 - the driver (targets, pipelines, passes) loads on first use

        return _compile
    if name in _LAZY_MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'tvm' has no attribute {name!r}")


def _configure_logging() -> None:
    if os.environ.get("TVM_LOG_LEVEL"):
        _logging.configure()


def _autoload() -> None:
    _autoload_backends()


_configure_logging()
_autoload()
