"""tvm-backend-adreno: Qualcomm Adreno GPUs, as the seed has them: its ``qcom/adreno-*`` tags
and the ``adreno`` pipeline, which ``tvm.compile`` picks for OpenCL targets with the ``adreno``
key. Kernels are built and run by the OpenCL backend, which loads first.

After ``import tvm`` this package is also ``tvm.backend.adreno`` and ``tvm.tirx.adreno``.
Submodules: :mod:`~tvm_backend_adreno.plugin` (the hooks), :mod:`~tvm_backend_adreno.tags` (also
``target_tags``, the seed's name), :mod:`~tvm_backend_adreno.pipeline`.
"""

from __future__ import annotations

# tvm first: its autoload may import this package's plugin (an installed entry point),
# which then finds the package half-imported; the plugin needs only _version from it.
import tvm  # noqa: F401 - loads the installed backends before .plugin below
from tvm.backend import sdk

from ._version import __version__ as __version__
from .plugin import register_backend

__all__ = ["pipeline", "plugin", "register_backend", "tags", "target_tags"]

_LAZY_SUBMODULES = {"pipeline", "plugin", "tags", "target_tags"}


__getattr__ = sdk.lazy_package(__name__, _LAZY_SUBMODULES)
