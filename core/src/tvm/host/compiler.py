"""The system C compiler: find it, probe what it supports, build shared objects.

The compiler is ``$CC`` (default ``cc``; it may carry arguments: ``CC="ccache gcc"``), or the
target's ``cc`` attribute. Probes (OpenMP, ``_Float16``, the vector ISA) run once per compiler
and process.

The vector ISA: unless the target names a CPU (``mcpu``), code is compiled for the best x86-64
micro-architecture level (``x86-64-v4``: AVX-512; ``v3``: AVX2 and FMA; ``v2``: SSE4.2) that both
the compiler accepts and this machine's CPU has. :class:`Isa` records the flags and the CPU
features they let the compiler use, so that an exported executable can refuse to load on a CPU
without them (:func:`missing_cpu_features`).
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
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..error import CompileError
from ..runtime.tool import DEFAULT_TIMEOUT_S, PROBE_TIMEOUT_S, run_tool
from ..runtime.workdir import work_folder

__all__ = ["Isa", "Toolchain", "cpu_features", "get_toolchain", "missing_cpu_features"]

_LOG = logging.getLogger(__name__)

_OPENMP_PROBE = "#include <omp.h>\nint tvm_probe(void) { return omp_get_max_threads(); }\n"
_FLOAT16_PROBE = ("_Float16 tvm_probe(_Float16 a, _Float16 b) { return a * b + (_Float16)1.0f; }\n"
                  "float tvm_probe2(_Float16 a) { return (float)a; }\n")

# x86-64 levels, best first, as -march accepts them (GCC >= 11, Clang >= 12).
_X86_LEVELS = ("x86-64-v4", "x86-64-v3", "x86-64-v2")
# Predefined macros of vector-relevant ISA extensions -> the CPU flag Linux shows for them.
_FEATURE_MACROS = {
    "__SSE3__": "pni", "__SSSE3__": "ssse3", "__SSE4_1__": "sse4_1", "__SSE4_2__": "sse4_2",
    "__POPCNT__": "popcnt", "__AVX__": "avx", "__AVX2__": "avx2", "__FMA__": "fma",
    "__F16C__": "f16c", "__BMI__": "bmi1", "__BMI2__": "bmi2", "__LZCNT__": "abm",
    "__MOVBE__": "movbe", "__AVX512F__": "avx512f", "__AVX512BW__": "avx512bw",
    "__AVX512CD__": "avx512cd", "__AVX512DQ__": "avx512dq", "__AVX512VL__": "avx512vl",
    "__AVX512VNNI__": "avx512_vnni", "__AVX512BF16__": "avx512_bf16",
    "__AVX512FP16__": "avx512_fp16", "__AVX512IFMA__": "avx512ifma",
    "__AVX512VBMI__": "avx512vbmi", "__AVX512VBMI2__": "avx512_vbmi2",
    "__AVXVNNI__": "avx_vnni", "__ARM_FEATURE_SVE__": "sve", "__ARM_FEATURE_SVE": "sve",
    "__ARM_FEATURE_FMA": "fma_arm", "__ARM_FEATURE_FP16_VECTOR_ARITHMETIC": "asimdhp",
    "__ARM_FEATURE_BF16_VECTOR_ARITHMETIC": "bf16",
}


@dataclass(frozen=True)
class Isa:
    """The vector ISA a build targets: its name (``x86-64-v4``, ``native``, or ``baseline``
    for the compiler's default), the flags that select it and the CPU features (as Linux names
    them in ``/proc/cpuinfo``) that the flags let the compiler use."""

    name: str
    flags: tuple[str, ...] = ()
    features: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "flags": list(self.flags), "features": list(self.features)}


@functools.cache
def cpu_features() -> frozenset[str] | None:
    """This machine's CPU feature flags (``/proc/cpuinfo``), or None where they cannot be read
    (then no ISA is probed and nothing is refused)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("flags", "Features"):
                    return frozenset(value.split())
    except OSError:
        return None
    return None


def missing_cpu_features(required: Sequence[str]) -> list[str]:
    """The features of ``required`` this machine's CPU lacks ([] where it cannot tell)."""
    have = cpu_features()
    if have is None:
        return []
    return [f for f in required if f not in have]


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
        proc = self._run(cmd, "asking for its version", check=False,
                         timeout=PROBE_TIMEOUT_S)
        lines = (proc.stdout or proc.stderr).strip().splitlines()
        return lines[0] if lines else ""

    @functools.cached_property
    def has_openmp(self) -> bool:
        return self._probe(_OPENMP_PROBE, ["-fopenmp", "-shared", "-fPIC"])

    @functools.cached_property
    def has_float16(self) -> bool:
        return self._probe(_FLOAT16_PROBE, ["-shared", "-fPIC"])

    @functools.cached_property
    def vector_isa(self) -> Isa:
        """The best x86-64 level both this compiler and this CPU support (probed once), else
        the compiler's default (``baseline``)."""
        have = cpu_features()
        if have is None:
            return Isa("baseline")
        for level in _X86_LEVELS:
            flags = (f"-march={level}",)
            features = self.isa_features(flags)
            if features is not None and features and set(features) <= have:
                return Isa(level, flags, features)
        return Isa("baseline", (), self.isa_features(()) or ())

    def isa_for(self, mcpu: str | None) -> Isa:
        """The ISA of a build: ``-march=<mcpu>`` when the target names a CPU, else the probed
        :attr:`vector_isa`."""
        if not mcpu:
            return self.vector_isa
        flags = (f"-march={mcpu}",)
        return Isa(mcpu, flags, self.isa_features(flags) or ())

    @functools.lru_cache(maxsize=16)  # noqa: B019 - one Toolchain per command, never freed
    def isa_features(self, flags: tuple[str, ...]) -> tuple[str, ...] | None:
        """The CPU features ``flags`` let the compiler use (from its predefined macros), or
        None when the compiler rejects the flags."""
        cmd = [*self.command, *flags, "-dM", "-E", "-x", "c", os.devnull]
        try:
            proc = run_tool(cmd, "listing its predefined macros", PROBE_TIMEOUT_S,
                            check=False)
        except CompileError:
            return None
        if proc.returncode != 0:
            return None
        found = {_FEATURE_MACROS[m] for m in _defined_macros(proc.stdout) if m in _FEATURE_MACROS}
        return tuple(sorted(found))

    def flags(self, *, opt_level: int = 3, openmp: bool = False, mcpu: str | None = None,
              extra: tuple[str, ...] = ()) -> list[str]:
        # Undeclared functions and unresolved symbols fail here, not at dlopen time.
        # -fno-math-errno: generated code never reads errno, and sqrt/rsqrt loops vectorise.
        # -ffp-contract=off: a * b + c rounds twice, as numpy computes it (the GEMM library
        # asks for fused multiply-adds itself).
        # -fwrapv: integer overflow in a kernel wraps (as in numpy and on GPUs) instead of being
        # undefined behaviour that -O2 may turn into an endless loop.
        out = [f"-O{opt_level}", "-fPIC", "-shared", "-std=gnu11",
               "-Werror=implicit-function-declaration", "-fno-math-errno", "-ffp-contract=off",
               "-fwrapv"]
        if sys.platform.startswith("linux"):
            out.append("-Wl,-z,defs")
        out.extend(self.isa_for(mcpu).flags)
        if openmp:
            out.append("-fopenmp")
        return out + list(extra)

    def compile_shared(self, source: str, flags: list[str], *, what: str = "module",
                       suffix: str = ".c") -> bytes:
        """Compile C ``source`` (C++ with ``suffix=".cpp"``) into a shared object; returns its
        bytes."""
        workdir = str(work_folder("tvm-c-"))  # swept later if this process is killed
        src = os.path.join(workdir, "module" + suffix)
        out = os.path.join(workdir, "module.so")
        with open(src, "w", encoding="utf-8") as f:
            f.write(source)
        cmd = [*self.command, *flags, src, "-o", out, "-lm"]
        start = time.perf_counter()
        # A failure keeps workdir: the command in the message must stay runnable.
        self._run(cmd, f"compiling {what}", keep=src)
        _LOG.info("%s (%.0f ms)", shlex.join(cmd), (time.perf_counter() - start) * 1e3)
        try:
            with open(out, "rb") as f:
                return f.read()
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def _run(self, cmd: list[str], doing: str, *, check: bool = True, keep: str | None = None,
             timeout: float = DEFAULT_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        return run_tool(cmd, doing, timeout, check=check, keep=keep, tool="the C compiler",
                        hint="install a C compiler or point CC (or the target's 'cc' "
                             "attribute) at one")

    def _probe(self, source: str, flags: list[str]) -> bool:
        tmp = str(work_folder("tvm-probe-"))
        try:
            src = os.path.join(tmp, "probe.c")
            with open(src, "w", encoding="utf-8") as f:
                f.write(source)
            cmd = [*self.command, *flags, src, "-o", os.path.join(tmp, "probe.so")]
            try:
                proc = run_tool(cmd, "probing a feature", PROBE_TIMEOUT_S, check=False)
            except CompileError:
                return False
            return proc.returncode == 0
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def _defined_macros(text: str) -> list[str]:
    return [line.split()[1] for line in text.splitlines() if line.startswith("#define ")]


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
