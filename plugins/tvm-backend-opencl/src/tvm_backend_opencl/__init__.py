"""tvm-backend-opencl: OpenCL C for OpenCL devices (GPUs, and CPUs through PoCL).

After ``import tvm`` this package is also ``tvm.backend.opencl`` and ``tvm.tirx.opencl``.
Importing it imports tvm and the hooks (``plugin``); the other submodules load lazily
(none imports anything heavy at import time):

* :mod:`~tvm_backend_opencl.plugin`: the hooks; :mod:`~tvm_backend_opencl.tags`: the target kind;
* :mod:`~tvm_backend_opencl.op` and :mod:`~tvm_backend_opencl.script`: ``tirx.opencl.barrier``
  and ``mem_fence``, the ``T.opencl`` namespace;
* :mod:`~tvm_backend_opencl.codegen`: lowered IR to OpenCL C; :mod:`~tvm_backend_opencl.dispatch`:
  the work-group barrier and the ``workgroup_tree`` reduction;
* :mod:`~tvm_backend_opencl.compiler`: the compile stage (a build check on the device);
* :mod:`~tvm_backend_opencl.executable`: the build contract (``OpenCLBuilder``) and what
  ``tvm.compile(f, target="opencl")`` returns;
* :mod:`~tvm_backend_opencl.runtime`: devices, programs and launches through pyopencl; without a
  driver, calls raise :class:`OpenCLRuntimeUnavailable` (a
  :class:`tvm.error.DeviceUnavailableError`).
"""

from __future__ import annotations

from typing import Any

# tvm first: its autoload may import this package's plugin (an installed entry point),
# which then finds the package half-imported; the plugin needs only _version from it.
import tvm  # noqa: F401 - loads the installed backends before .plugin below
from tvm.backend import sdk

from ._version import __version__ as __version__
from .plugin import register_backend
from .script import OpenCLNamespace

__all__ = [
    "OpenCLRuntimeUnavailable", "codegen", "compiler", "dispatch", "executable", "op", "plugin",
    "register_backend", "runtime", "script", "script_namespace", "script_namespaces", "tags",
]

_LAZY_SUBMODULES = {"codegen", "compiler", "demo", "dispatch", "executable", "op", "plugin",
                    "runtime", "script", "tags"}


def script_namespaces(**_: Any) -> dict[str, Any]:
    """The OpenCL-owned TVMScript namespaces."""
    return {"opencl": OpenCLNamespace()}


def script_namespace(**kwargs: Any) -> Any:
    """The ``T.opencl`` namespace object."""
    return script_namespaces(**kwargs)["opencl"]


__getattr__ = sdk.lazy_package(__name__, _LAZY_SUBMODULES, {"OpenCLRuntimeUnavailable": "runtime"})
