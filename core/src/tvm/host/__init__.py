"""The built-in host backend ``c``: C source compiled by the system C compiler, run with ctypes.

It registers through the same hooks as every other backend (see :mod:`tvm.host.plugin`).
Submodules: ``codegen`` (IR to C), ``compiler`` (C to a shared object; flags and the vector-ISA
probe), ``runtime`` (ctypes), ``caller`` (the fast call path, a small C extension), ``build``
(the two joined, with the compile cache), ``dispatch`` (the host's tile-primitive variants);
``kernels/`` holds the C library (vectorisable math, the blocked GEMM, the caller).
"""

from __future__ import annotations

from .plugin import register_backend

__all__ = ["register_backend"]
