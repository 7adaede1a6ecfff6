"""ROCm's compile stage: HIP C++ -> an AMD GPU code object, with hipcc.

hipcc is found on ``PATH``, as ``$ROCM_PATH/bin/hipcc`` or ``/opt/rocm/bin/hipcc`` (Debian and
Ubuntu package it: ``apt-get install hipcc``, which ``scripts/system-deps.sh`` does). It needs no
GPU: the device code is compiled alone (``--cuda-device-only``) for the target's architecture
into a code object (an ELF ``.hsaco``, ``--no-gpu-bundle-output``)::

    HIP_PLATFORM=amd hipcc -x hip --offload-arch=gfx90a --cuda-device-only \
        --no-gpu-bundle-output -O3 -c kernels.hip -o kernels.hsaco

``HIP_PLATFORM=amd`` is set because hipcc otherwise picks NVIDIA's toolchain when it finds
nvcc. A failure raises :class:`~tvm.error.CompileError` with hipcc's log and that command (the
source is kept beside it); where no hipcc is installed the error says how to get one.
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

__all__ = ["Hipcc", "compile_hip", "find_hipcc", "hipcc_unavailable_reason", "offload_arch"]

_ENV = {"HIP_PLATFORM": "amd", "HIP_COMPILER": "clang"}
_INSTALL = ("install it with 'apt-get install hipcc' (Debian/Ubuntu; `bash scripts/system-deps.sh` "
            "as root does) or with ROCm, or set ROCM_PATH")


@dataclass(frozen=True)
class Hipcc:
    """An installed hipcc: its path, version line and the architectures its device libraries
    cover (those it can compile for)."""

    path: str
    version: str
    archs: tuple[str, ...]


def find_hipcc() -> Hipcc | None:
    """The hipcc of this machine, or None."""
    return _find_hipcc(os.environ.get("ROCM_PATH", ""), os.environ.get("PATH", ""))


@functools.lru_cache(maxsize=8)
def _find_hipcc(rocm_path: str, path: str) -> Hipcc | None:
    candidates = [shutil.which("hipcc", path=path) or ""]
    candidates += [os.path.join(p, "bin", "hipcc") for p in (rocm_path, "/opt/rocm") if p]
    for exe in candidates:
        if exe and os.access(exe, os.X_OK):
            return Hipcc(exe, _version(exe), _archs(exe))
    return None


def hipcc_unavailable_reason() -> str | None:
    """None when hipcc can compile here, else why not."""
    return None if find_hipcc() is not None else f"hipcc is not installed; {_INSTALL}"


def _run(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """A probe of hipcc: a tool that cannot be run reads as a failed run."""
    try:
        return sdk.run_tool(command, "probing it", sdk.PROBE_TIMEOUT_S, env=_ENV, check=False)
    except CompileError as err:  # hipcc vanished, is not executable or hangs
        return subprocess.CompletedProcess(list(command), 127, "", str(err))


def _version(exe: str) -> str:
    out = _run([exe, "--version"])
    lines = [ln for ln in (out.stdout + out.stderr).splitlines() if "version" in ln.lower()]
    return "; ".join(ln.strip() for ln in lines[:2]) or "unknown"


def _archs(exe: str) -> tuple[str, ...]:
    """The architectures with device libraries (``oclc_isa_version_<v>.bc``), found through the
    commands hipcc would run (``-###``) for one architecture."""
    out = _run([exe, "-x", "hip", "--cuda-device-only", "--offload-arch=gfx900", "-###", "-c",
                os.devnull, "-o", os.devnull])
    found = re.search(r'"?([^"\s]*)/oclc_isa_version_900\.bc', out.stdout + out.stderr)
    if found is None:
        return ()
    versions = [p.name[len("oclc_isa_version_"):-3]
                for p in Path(found.group(1)).glob("oclc_isa_version_*.bc")]
    return tuple(sorted((f"gfx{v}" for v in versions), key=_arch_order))


def _arch_order(arch: str) -> tuple[int, str]:
    return len(arch), arch


def offload_arch(mcpu: str, mattr: Sequence[str] = ()) -> str:
    """The target ID: ``gfx90a`` plus ``:xnack+`` / ``:sramecc-`` from ``mattr``."""
    return mcpu + "".join(f":{f[1:]}{f[0]}" for f in mattr)


def compile_hip(source: str, *, mcpu: str, mattr: Sequence[str] = (), opt_level: int = 3, extra: Sequence[str] = (), what: str = "the HIP source"
                ) -> bytes:
    """The code object of ``source`` for ``mcpu`` (raises CompileError with hipcc's log)."""
    hipcc = find_hipcc()
    if hipcc is None:
        raise CompileError(f"cannot compile {what} for {mcpu}: hipcc is not installed; {_INSTALL}")
    if hipcc.archs and mcpu not in hipcc.archs:
        raise CompileError(f"cannot compile {what} for {mcpu}: this hipcc ({hipcc.version}) has "
                           f"no device library for it; it compiles for {', '.join(hipcc.archs)}. "
                           "Install a newer ROCm for this architecture")
    options = [*flags(mcpu, mattr, opt_level), *extra]
    return sdk.compile_in_folder(
        source, lambda src, out: [hipcc.path, *options, "-c", str(src), "-o", str(out)],
        f"compiling {what} for {offload_arch(mcpu, mattr)}", prefix="tvm-rocm-",
        files=("kernels.hip", "kernels.hsaco"), output="code object", env=_ENV, tool="hipcc")


def flags(mcpu: str, mattr: Sequence[str] = (), opt_level: int = 3) -> list[str]:
    """hipcc's options for a device-only code object of one architecture."""
    return ["-x", "hip", f"--offload-arch={offload_arch(mcpu, mattr)}", "--cuda-device-only",
            "--no-gpu-bundle-output", f"-O{opt_level}", "-std=c++17"]
