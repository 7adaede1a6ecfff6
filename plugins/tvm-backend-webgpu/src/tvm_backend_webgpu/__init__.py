"""tvm-backend-webgpu: WebGPU compute shaders in WGSL, run through wgpu-py.

After ``import tvm`` this package is also ``tvm.backend.webgpu`` and ``tvm.tirx.webgpu``.
Importing it imports tvm and the hooks (``plugin``); the other submodules load lazily
(none imports anything heavy at import time):

* :mod:`~tvm_backend_webgpu.plugin`: the hooks; :mod:`~tvm_backend_webgpu.tags`: the target
  kind ``webgpu``;
* :mod:`~tvm_backend_webgpu.op`: the WGSL rules of core's ``T.webgpu`` subgroup shuffles;
* :mod:`~tvm_backend_webgpu.codegen`: lowered IR to WGSL; :mod:`~tvm_backend_webgpu.dispatch`:
  the workgroup barrier of core's tile-primitive variants;
* :mod:`~tvm_backend_webgpu.compiler`: packages the WGSL (and validates it with wgpu-native);
* :mod:`~tvm_backend_webgpu.executable`: the build contract (``WebGPUBuilder``) and what
  ``tvm.compile(f, target="webgpu")`` returns;
* :mod:`~tvm_backend_webgpu.runtime`: the device, through wgpu-py; without an adapter, calls
  raise :class:`WebGPURuntimeUnavailable` (a :class:`tvm.error.DeviceUnavailableError`).
"""

from __future__ import annotations

# tvm first: its autoload may import this package's plugin (an installed entry point),
# which then finds the package half-imported; the plugin needs only _version from it.
import tvm  # noqa: F401 - loads the installed backends before .plugin below
from tvm.backend import sdk

from ._version import __version__ as __version__
from .plugin import register_backend

__all__ = ["WebGPURuntimeUnavailable", "codegen", "compiler", "dispatch", "executable", "op",
           "plugin", "register_backend", "runtime", "script", "tags"]

_LAZY_SUBMODULES = {"codegen", "compiler", "demo", "dispatch", "executable", "op", "plugin",
                    "runtime", "script", "tags"}


__getattr__ = sdk.lazy_package(__name__, _LAZY_SUBMODULES, {"WebGPURuntimeUnavailable": "runtime"})
