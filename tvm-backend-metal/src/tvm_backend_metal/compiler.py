"""Metal's compile stage: MSL source -> the library the Metal driver compiles at run time.

No Metal compiler runs at build time: Apple's offline compiler exists only on macOS, and the
Metal driver compiles MSL itself when the executable first creates a compute pipeline
(:func:`tvm_backend_metal.runtime.compile`). So this stage checks and packages: with
``check=True`` the MSL passes the C++-shim syntax check first (:func:`~.msl_check.check_msl`,
which runs on Linux), and the binary is the MSL as UTF-8. Nothing here is worth caching (the
builder sets ``cached = False``); the CPU emulator's compiled objects go through core's compile
cache in :mod:`.emulator`.
"""

from __future__ import annotations

from .msl_check import check_msl

__all__ = ["package_msl"]


def package_msl(source: str, *, check: bool = False, name: str = "kernels") -> bytes:
    """The binary of an MSL library: its source as UTF-8, syntax-checked first when ``check``
    (a failure raises :class:`~tvm.error.CompileError` with the compiler's log and command)."""
    if check:
        check_msl(source, filename=f"{name}.metal")
    return source.encode("utf-8")
