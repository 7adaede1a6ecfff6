"""The system C compiler: find it, probe what it supports, build shared objects.

The compiler is ``$CC`` (default ``cc``; it may carry arguments: ``CC="ccache gcc"``), or the
target's ``cc`` attribute. Probes (OpenMP, ``_Float16``) run once per compiler and process.
A failure raises :class:`~tvm.error.CompileError` with the compiler's output and the exact
command line; the sources of a failed build are kept so that the command can be re-run.
"""

from __future__ import annotations

import functools
import logging
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from ..error import CompileError

__all__ = ["Toolchain", "get_toolchain"]

_LOG = logging.getLogger(__name__)

_OPENMP_PROBE = "#include <omp.h>\nint tvm_probe(void) { return omp_get_max_threads(); }\n"
_FLOAT16_PROBE = ("_Float16 tvm_probe(_Float16 a, _Float16 b) { return a * b + (_Float16)1.0f; }\n"
                  "float tvm_probe2(_Float16 a) { return (float)a; }\n")


@dataclass(frozen=True)
class Toolchain:
    """One C compiler command (``("gcc",)``, ``("ccache", "gcc")``)."""

    command: tuple[str, ...]

    @property
    def display(self) -> str:
        return shlex.join(self.command)

    @functools.cached_property
    def version(self) -> str:
        """The first line of ``<cc> --version`` (part of every cache key)."""
        cmd = [*self.command, "--version"]
        proc = self._run(cmd, "asking the C compiler for its version")
        lines = (proc.stdout or proc.stderr).strip().splitlines()
        return lines[0] if lines else ""

    @functools.cached_property
    def has_openmp(self) -> bool:
        return self._probe(_OPENMP_PROBE, ["-fopenmp", "-shared", "-fPIC"])

    @functools.cached_property
    def has_float16(self) -> bool:
        return self._probe(_FLOAT16_PROBE, ["-shared", "-fPIC"])

    def flags(self, *, opt_level: int = 2, openmp: bool = False, mcpu: str | None = None,
              extra: tuple[str, ...] = ()) -> list[str]:
        # Undeclared functions and unresolved symbols fail here, not at dlopen time.
        out = [f"-O{opt_level}", "-fPIC", "-shared", "-std=gnu11",
               "-Werror=implicit-function-declaration"]
        if sys.platform.startswith("linux"):
            out.append("-Wl,-z,defs")
        if mcpu:
            out.append(f"-march={mcpu}")
        if openmp:
            out.append("-fopenmp")
        return out + list(extra)

    def compile_shared(self, source: str, flags: list[str], *, what: str = "module") -> bytes:
        """Compile C ``source`` into a shared object; returns its bytes."""
        workdir = tempfile.mkdtemp(prefix="tvm-c-")
        src = os.path.join(workdir, "module.c")
        out = os.path.join(workdir, "module.so")
        with open(src, "w", encoding="utf-8") as f:
            f.write(source)
        cmd = [*self.command, *flags, src, "-o", out, "-lm"]
        start = time.perf_counter()
        proc = self._run(cmd, f"compiling {what}")
        _LOG.info("%s (%.0f ms)", shlex.join(cmd), (time.perf_counter() - start) * 1e3)
        if proc.returncode != 0:
            # Keep workdir: the command in the message must stay runnable.
            raise CompileError(
                f"the C compiler failed (exit code {proc.returncode}) compiling {what}; the "
                f"generated source is kept at {src}",
                log=(proc.stdout or "") + (proc.stderr or ""),
                command=shlex.join(cmd),
            )
        try:
            with open(out, "rb") as f:
                return f.read()
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def _run(self, cmd: list[str], doing: str) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, check=False)
        except OSError as err:
            raise CompileError(
                f"the C compiler {self.command[0]!r} could not be run while {doing} ({err}); "
                "install a C compiler or point CC (or the target's 'cc' attribute) at one",
                command=shlex.join(cmd),
            ) from err

    def _probe(self, source: str, flags: list[str]) -> bool:
        with tempfile.TemporaryDirectory(prefix="tvm-probe-") as tmp:
            src = os.path.join(tmp, "probe.c")
            with open(src, "w", encoding="utf-8") as f:
                f.write(source)
            cmd = [*self.command, *flags, src, "-o", os.path.join(tmp, "probe.so")]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            except OSError:
                return False
            return proc.returncode == 0


@functools.cache
def _toolchain(command: tuple[str, ...]) -> Toolchain:
    return Toolchain(command)


def get_toolchain(cc: str | None = None) -> Toolchain:
    """The toolchain of ``cc``, else ``$CC``, else ``cc`` (one object per command)."""
    text = cc or os.environ.get("CC") or "cc"
    command = tuple(shlex.split(text))
    if not command:
        raise CompileError("the C compiler command is empty; set CC to e.g. 'cc' or 'gcc'")
    return _toolchain(command)
