"""tvm-backend-example: a minimal backend for tvm, and the template for new ones.

After ``import tvm`` this package is also ``tvm.backend.example`` and ``tvm.tirx.example``.
Submodules load lazily so that importing the package (which tvm does at startup) stays cheap.
"""

from __future__ import annotations

# tvm first: its autoload may import this package's plugin (an installed entry point),
# which then finds the package half-imported; the plugin needs only _version from it.
import tvm  # noqa: F401 - loads the installed backends before .plugin below
from tvm.backend import sdk

from ._version import __version__ as __version__
from .plugin import register_backend

__all__ = ["codegen", "compiler", "dispatch", "executable", "op", "pipeline", "plugin",
           "register_backend", "runtime", "script", "tags"]

_LAZY_SUBMODULES = {"codegen", "compiler", "dispatch", "executable", "op", "pipeline", "plugin",
                    "runtime", "script", "tags"}


__getattr__ = sdk.lazy_package(__name__, _LAZY_SUBMODULES)
