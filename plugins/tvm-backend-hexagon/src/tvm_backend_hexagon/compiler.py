"""Hexagon's compile stage: C -> a Hexagon ELF object file.

The compiler is, in this order: the Hexagon SDK's ``hexagon-clang`` (``$HEXAGON_TOOLS_ROOT/bin``,
or on ``PATH``), compiling against the SDK's C library headers; else an LLVM ``clang`` built
with the Hexagon target (Debian's clang is; ``hipcc`` brings ``clang-15``), compiling
freestanding against the declarations in ``shim/`` (the C library functions the generated code
calls, resolved when the object is linked with the SDK's libraries). Both produce a relocatable
object for the target's ``mcpu`` with its ``mattr`` features and ``llvm-options``::

    clang-15 --target=hexagon-unknown-none-elf -mcpu=hexagonv68 -Xclang -target-feature \
        -Xclang +hvxv68 ... -mllvm -force-hvx-float -O2 -fPIC -c module.c -o module.o

Linking into a shared library and running it on a DSP (FastRPC from Android, or the SDK's
simulator) need the Hexagon SDK; this backend does neither (``runtime.py``). A compiler failure
raises :class:`~tvm.error.CompileError` with its log and the command (the source is kept); with
no Hexagon compiler the error says what to install.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tvm.backend import sdk
from tvm.error import CompileError

__all__ = ["HexagonCompiler", "compile_object", "compiler_unavailable_reason", "find_compiler"]

SHIM = Path(__file__).with_name("shim")
_LLVM_NAMES = ("clang", *(f"clang-{v}" for v in range(21, 13, -1)))
_INSTALL = ("install the Hexagon SDK (hexagon-clang; set HEXAGON_TOOLS_ROOT) or an LLVM clang "
            "with the Hexagon target (Debian/Ubuntu: apt-get install clang; hipcc brings "
            "clang-15)")


@dataclass(frozen=True)
class HexagonCompiler:
    """A C compiler for Hexagon: its path, version line, whether it is the SDK's, and the
    Hexagon versions it knows."""

    path: str
    version: str
    sdk: bool
    cpus: tuple[str, ...]


def find_compiler() -> HexagonCompiler | None:
    """The Hexagon compiler of this machine (the SDK's first), or None."""
    return _find(os.environ.get("HEXAGON_TOOLS_ROOT", ""), os.environ.get("PATH", ""))


def compiler_unavailable_reason() -> str | None:
    """None when C can be compiled for Hexagon here, else why not."""
    return None if find_compiler() is not None else f"no Hexagon C compiler; {_INSTALL}"


@functools.lru_cache(maxsize=8)
def _find(tools_root: str, path: str) -> HexagonCompiler | None:
    sdk_paths = [os.path.join(tools_root, "bin", "hexagon-clang")] if tools_root else []
    sdk_paths.append(shutil.which("hexagon-clang", path=path) or "")
    for exe in sdk_paths:
        if exe and os.access(exe, os.X_OK):
            return HexagonCompiler(exe, _version(exe), True, _cpus(exe, from_sdk=True))
    for name in _LLVM_NAMES:
        llvm = shutil.which(name, path=path)
        if llvm and "hexagon" in _run([llvm, "-print-targets"]).stdout:
            return HexagonCompiler(llvm, _version(llvm), False, _cpus(llvm, from_sdk=False))
    return None


def _run(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """A probe of a compiler: a tool that cannot be run reads as a failed run."""
    try:
        return sdk.run_tool(command, "probing it", sdk.PROBE_TIMEOUT_S, check=False)
    except CompileError as err:
        return subprocess.CompletedProcess(list(command), 127, "", str(err))


def _version(exe: str) -> str:
    out = _run([exe, "--version"])
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[0] if lines else "unknown"


def _cpus(exe: str, *, from_sdk: bool) -> tuple[str, ...]:
    """The Hexagon versions the compiler knows (from its -mcpu error's list of valid values)."""
    target = [] if from_sdk else ["--target=hexagon-unknown-none-elf"]
    out = _run([exe, *target, "-mcpu=hexagonv0", "-x", "c", "-c", os.devnull, "-o", os.devnull])
    return tuple(dict.fromkeys(re.findall(r"\bhexagonv[0-9]+t?\b", out.stderr)))


def flags(compiler: HexagonCompiler, mcpu: str, mattr: Sequence[str] = (),
          llvm_options: Sequence[str] = (), opt_level: int = 2) -> list[str]:
    """The compiler's options for an object file of one Hexagon version."""
    out = [] if compiler.sdk else ["--target=hexagon-unknown-none-elf", "-ffreestanding",
                                   "-nostdlibinc", "-isystem", str(SHIM)]
    out += [f"-mcpu={mcpu}", "-std=gnu11", f"-O{opt_level}", "-fPIC",
            "-Werror=implicit-function-declaration"]
    for feature in mattr:
        out += ["-Xclang", "-target-feature", "-Xclang", feature]
    for opt in llvm_options:
        out += ["-mllvm", opt]
    return out


def compile_object(source: str, *, mcpu: str, mattr: Sequence[str] = (),
                   llvm_options: Sequence[str] = (), opt_level: int = 2,
                   what: str = "the C") -> bytes:
    """The Hexagon object file of ``source`` (raises CompileError with the compiler's log)."""
    compiler = find_compiler()
    if compiler is None:
        raise CompileError(f"cannot compile {what} for {mcpu}: {compiler_unavailable_reason()}")
    if compiler.cpus and mcpu not in compiler.cpus:
        raise CompileError(f"cannot compile {what} for {mcpu}: {compiler.version} knows "
                           f"{', '.join(compiler.cpus)}; install the Hexagon SDK (or a newer "
                           "LLVM) for this version")
    options = flags(compiler, mcpu, mattr, llvm_options, opt_level)
    return sdk.compile_in_folder(
        source, lambda src, out: [compiler.path, *options, "-c", str(src), "-o", str(out)],
        f"compiling {what} for {mcpu}", prefix="tvm-hexagon-", files=("module.c", "module.o"),
        output="object file")
