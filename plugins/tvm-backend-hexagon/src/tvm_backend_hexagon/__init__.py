"""tvm-backend-hexagon: the seed's Qualcomm Hexagon tags, and C for Hexagon DSPs compiled into
object files.

After ``import tvm`` this package is also ``tvm.backend.hexagon`` and ``tvm.tirx.hexagon``.
Importing it imports tvm and the hooks (``plugin``); the other submodules load lazily
(none imports anything heavy at import time):

* :mod:`~tvm_backend_hexagon.plugin`: the hooks; :mod:`~tvm_backend_hexagon.tags` (also
  ``target_tags``, the seed's name): the target kind and the seed's ``qcom/hexagon-*`` tags;
* :mod:`~tvm_backend_hexagon.pipeline`: the ``hexagon`` pipeline (no host/device split);
* :mod:`~tvm_backend_hexagon.codegen`: lowered IR to C; :mod:`~tvm_backend_hexagon.compiler`:
  the Hexagon SDK's compiler, or an LLVM clang with the Hexagon target;
* :mod:`~tvm_backend_hexagon.executable`: the build contract (``HexagonBuilder``) and what
  ``tvm.compile(f, target="qcom/hexagon-v68")`` returns;
* :mod:`~tvm_backend_hexagon.runtime`: running needs the Hexagon SDK (calls raise
  :class:`HexagonRuntimeUnavailable`, a :class:`tvm.error.DeviceUnavailableError`).
"""

from __future__ import annotations

# tvm first: its autoload may import this package's plugin (an installed entry point),
# which then finds the package half-imported; the plugin needs only _version from it.
import tvm  # noqa: F401 - loads the installed backends before .plugin below
from tvm.backend import sdk

from ._version import __version__ as __version__
from .plugin import register_backend

__all__ = ["HexagonRuntimeUnavailable", "codegen", "compiler", "dispatch", "executable", "op",
           "pipeline", "plugin", "register_backend", "runtime", "script", "tags", "target_tags"]

_LAZY_SUBMODULES = {"codegen", "compiler", "dispatch", "executable", "op", "pipeline", "plugin",
                    "runtime", "script", "tags", "target_tags"}


__getattr__ = sdk.lazy_package(__name__, _LAZY_SUBMODULES, {"HexagonRuntimeUnavailable": "runtime"})
