"""The seed's module paths of the CUDA operators, as aliases of where the code lives here.

- ``tvm.tirx.cuda.operator.intrinsics`` re-exports :mod:`tvm_backend_cuda.intrinsics`;
- ``tvm.tirx.cuda.operator.tile_primitive.<family>`` re-exports the dispatch modules of that
  family from :mod:`tvm_backend_cuda.dispatch` (the table is
  :data:`tvm_backend_cuda.operator.tile_primitive.FAMILIES`).

Nothing here defines code of its own: importing an alias imports the real module, and the names
are the same objects.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["intrinsics", "tile_primitive"]


def __getattr__(name: str) -> ModuleType:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
