"""tvm-backend-rocm: HIP C++ for AMD GPUs, compiled to code objects with hipcc.

After ``import tvm`` this package is also ``tvm.backend.rocm`` and ``tvm.tirx.rocm``. Submodules
load lazily (none imports anything heavy at import time):

* :mod:`~tvm_backend_rocm.plugin`: the hooks; :mod:`~tvm_backend_rocm.tags`: the target kind
  (``mcpu`` validated, the wavefront size) and the AMD Instinct and Radeon tags;
* :mod:`~tvm_backend_rocm.codegen`: lowered IR to HIP (CUDA-style printing, as data);
  :mod:`~tvm_backend_rocm.dispatch`: the barriers of core's fallback variants;
* :mod:`~tvm_backend_rocm.compiler`: hipcc, for one architecture, without a GPU;
* :mod:`~tvm_backend_rocm.executable`: the build contract (``RocmBuilder``) and what
  ``tvm.compile(f, target="rocm")`` returns;
* :mod:`~tvm_backend_rocm.runtime`: no launcher in this version (calls raise
  :class:`RocmRuntimeUnavailable`, a :class:`tvm.error.DeviceUnavailableError`).
"""

from __future__ import annotations

# tvm first: its autoload may import this package's plugin (an installed entry point),
# which then finds the package half-imported; the plugin needs only _version from it.
import tvm  # noqa: F401 - loads the installed backends before .plugin below
from tvm.backend import sdk

from ._version import __version__ as __version__
from .plugin import register_backend

__all__ = ["RocmRuntimeUnavailable", "codegen", "compiler", "dispatch", "executable", "op",
           "plugin", "register_backend", "runtime", "script", "tags", "target_tags"]

_LAZY_SUBMODULES = {"codegen", "compiler", "dispatch", "executable", "op", "plugin", "runtime",
                    "script", "tags", "target_tags"}


__getattr__ = sdk.lazy_package(__name__, _LAZY_SUBMODULES, {"RocmRuntimeUnavailable": "runtime"})
