"""The TIRx passes, one file each.

- :class:`TilePrimitiveDispatch`: tile-primitive calls -> the chosen variants' bodies
- :class:`FuseRowLoops`: neighbouring loops variants marked fusible -> one loop
- :class:`LowerKernelForm`: ``T.device_entry()`` and kernel ids -> thread-bound loops and lets
- :class:`FlattenBuffer`: N-D buffer accesses -> 1-D
- :class:`VectorizeLoop`, :class:`UnrollLoop`: annotated loops
- :class:`StmtSimplify` (alias ``Simplify``): arithmetic simplification and clean-up
- :class:`SplitHostDevice`: device kernels + host launcher (with launch bounds)
- :mod:`.common`: what passes share (:class:`~.common.BufferReplacer`)

The argument signatures and launch plans built from the lowered IR (``function_signature``,
``check_arguments``, ``launch_plans``) are :mod:`tvm.codegen.signature`'s: they make runtime
objects, a layer above this one.
"""

from __future__ import annotations

from .flatten_buffer import FlattenBuffer, flat_index, flatten_buffer
from .fuse_row_loops import FUSIBLE, FuseRowLoops, fuse_row_loops
from .launch_bounds import (
    LAUNCH_BOUNDS_KEYS,
    MAX_BLOCKS_PER_CLUSTER,
    MIN_BLOCKS_PER_SM,
    extract_launch_bounds,
)
from .lower_host_encodes import lower_host_encodes
from .lower_kernel_form import CLUSTER_EXTENT, KernelFormError, LowerKernelForm
from .simplify import Simplify, StmtSimplify, simplify_stmt
from .split_host_device import LaunchParams, SplitHostDevice, dyn_smem_layout, kernel_params
from .tile_primitive_dispatch import LowerTIRx, TilePrimitiveDispatch
from .unroll_loop import UnrollLoop
from .vectorize_loop import VectorizeLoop

__all__ = [
    "CLUSTER_EXTENT",
    "FUSIBLE",
    "LAUNCH_BOUNDS_KEYS",
    "MAX_BLOCKS_PER_CLUSTER",
    "MIN_BLOCKS_PER_SM",
    "FlattenBuffer",
    "FuseRowLoops",
    "KernelFormError",
    "LaunchParams",
    "LowerKernelForm",
    "LowerTIRx",
    "Simplify",
    "SplitHostDevice",
    "StmtSimplify",
    "TilePrimitiveDispatch",
    "UnrollLoop",
    "VectorizeLoop",
    "dyn_smem_layout",
    "extract_launch_bounds",
    "flat_index",
    "flatten_buffer",
    "fuse_row_loops",
    "kernel_params",
    "lower_host_encodes",
    "simplify_stmt",
]
