"""The built-in host backend ``c``: C source compiled by the system C compiler, run with ctypes.

It registers through the same hooks as every other backend (see :mod:`tvm.host.plugin`).
Its modules have the layout every backend has: ``plugin`` (hooks only), ``tags`` (the target
kind), ``script`` and ``op`` (none of their own), ``codegen`` (IR to C), ``compiler`` (C to a
shared object; flags and the vector-ISA probe), ``executable`` (the build contract and the
Executable), ``runtime`` (ctypes), ``dispatch`` (the host's tile-primitive variants); besides,
``caller`` (the fast call path, a small C extension) and ``kernels/`` (the C library:
vectorisable math, the blocked GEMM, the caller).
"""

from __future__ import annotations

from .plugin import register_backend

__all__ = ["register_backend"]
