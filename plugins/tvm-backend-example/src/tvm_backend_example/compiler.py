"""C source -> shared object for target kind ``example``, with core's host toolchain.

:func:`tvm.host.compiler.get_toolchain` finds the C compiler (``$CC``, else ``cc``), probes it
once and compiles; a failure raises :class:`~tvm.error.CompileError` with the compiler's output
and a command that reproduces it (the sources of a failed build are kept). The compiler's
command, version and flags are part of the build's metadata and of the cache key.
"""

from __future__ import annotations

from typing import Any

from tvm.backend import sdk

__all__ = ["compile_c", "compiler_info", "toolchain"]


def toolchain(cc: str | None = None) -> sdk.Toolchain:
    """The C compiler of ``cc`` (else ``$CC``, else ``cc``)."""
    return sdk.get_toolchain(cc)


def compiler_info(cc: str | None, opt_level: int) -> dict[str, Any]:
    """What the binary depends on besides the source: the command, its version and flags."""
    tools = toolchain(cc)
    return {"command": tools.display, "version": tools.version,
            "flags": tools.flags(opt_level=opt_level)}


def compile_c(source: str, cc: str | None, flags: list[str], what: str) -> bytes:
    """The shared object of C ``source``, as bytes."""
    return toolchain(cc).compile_shared(source, flags, what=what)
