"""tvm-backend-vulkan: Vulkan compute shaders (GLSL compiled to SPIR-V).

After ``import tvm`` this package is also ``tvm.backend.vulkan`` and ``tvm.tirx.vulkan``.
Importing it imports tvm and the hooks (``plugin``); the other submodules load lazily
(none imports anything heavy at import time):

* :mod:`~tvm_backend_vulkan.plugin`: the hooks; :mod:`~tvm_backend_vulkan.tags`: the target
  kind ``vulkan``;
* :mod:`~tvm_backend_vulkan.codegen`: lowered IR to GLSL compute shaders;
  :mod:`~tvm_backend_vulkan.dispatch`: the workgroup barrier of core's tile-primitive variants;
* :mod:`~tvm_backend_vulkan.compiler`: GLSL to SPIR-V with glslangValidator, checked by
  spirv-val;
* :mod:`~tvm_backend_vulkan.executable`: the build contract (``VulkanBuilder``) and what
  ``tvm.compile(f, target="vulkan")`` returns;
* :mod:`~tvm_backend_vulkan.runtime`: the device, through the ``vulkan`` binding; without a
  Vulkan driver, calls raise :class:`VulkanRuntimeUnavailable` (a
  :class:`tvm.error.DeviceUnavailableError`).
"""

from __future__ import annotations

# tvm first: its autoload may import this package's plugin (an installed entry point),
# which then finds the package half-imported; the plugin needs only _version from it.
import tvm  # noqa: F401 - loads the installed backends before .plugin below
from tvm.backend import sdk

from ._version import __version__ as __version__
from .plugin import register_backend

__all__ = ["VulkanRuntimeUnavailable", "codegen", "compiler", "dispatch", "executable", "op",
           "plugin", "register_backend", "runtime", "script", "tags"]

_LAZY_SUBMODULES = {"codegen", "compiler", "demo", "dispatch", "executable", "op", "plugin",
                    "runtime", "script", "tags"}


__getattr__ = sdk.lazy_package(__name__, _LAZY_SUBMODULES, {"VulkanRuntimeUnavailable": "runtime"})
