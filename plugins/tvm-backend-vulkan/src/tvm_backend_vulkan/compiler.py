"""Vulkan's compile stage: GLSL compute shaders -> SPIR-V modules, each checked by spirv-val.

The tools are Khronos's reference compiler and validator, Debian packages ``glslang-tools``
(``glslangValidator``) and ``spirv-tools`` (``spirv-val``); ``scripts/system-deps.sh`` installs
them as root. A failure raises :class:`~tvm.error.CompileError` with the tool's log and a
command that reproduces it (the shader is kept beside it).

The binary of a module is its kernels' SPIR-V modules one after another; :func:`compile_glsl`
returns where each one starts and ends (``{"spirv": {kernel: [offset, size]}}``), and
:func:`spirv_modules` cuts them apart again.
"""

from __future__ import annotations

import functools
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tvm.backend import sdk
from tvm.error import CompileError

from .codegen import split_shaders

__all__ = ["TOOLS", "compile_glsl", "find_tool", "missing_tools", "spirv_modules",
           "tool_versions", "validate_spirv"]

#: tool -> the Debian package that ships it
TOOLS = {"glslangValidator": "glslang-tools", "spirv-val": "spirv-tools"}
_TIMEOUT_S = 120
SPIRV_MAGIC = 0x07230203


def find_tool(name: str) -> str:
    """The path of ``name`` (``glslangValidator``, ``spirv-val``), or a CompileError saying
    what to install."""
    path = shutil.which(name)
    if path is None:
        raise CompileError(f"{name} is not installed: install the Debian package "
                           f"{TOOLS[name]} (as root: bash scripts/system-deps.sh, or apt-get "
                           f"install {TOOLS[name]})")
    return path


def missing_tools() -> list[str]:
    """The tools of this stage that are not on PATH (for skips and the demo)."""
    return [name for name in TOOLS if shutil.which(name) is None]


@functools.cache
def tool_versions() -> dict[str, str]:
    """The first line of each tool's version (part of the cache key)."""
    out = {}
    for name in TOOLS:
        path = shutil.which(name)
        if path is None:
            continue
        try:
            proc = sdk.run_tool([path, "--version"], "asking for its version", sdk.PROBE_TIMEOUT_S,
                                check=False)
        except CompileError:
            continue
        out[name] = (proc.stdout or proc.stderr).strip().splitlines()[0] if proc.stdout or \
            proc.stderr else ""
    return out


def _run(cmd: list[str], what: str, keep: Path) -> None:
    sdk.run_tool(cmd, what, _TIMEOUT_S, keep=keep)


def compile_glsl(source: str, *, target_env: str = "vulkan1.1", validate: bool = True
                 ) -> tuple[bytes, dict[str, Any]]:
    """SPIR-V of every shader of ``source`` (joined as :func:`~.codegen.generate_glsl` does):
    ``(binary, {"spirv": {kernel: [offset, size]}, "tools": {...}})``."""
    glslang = find_tool("glslangValidator")
    spirv_val = find_tool("spirv-val") if validate else None
    blobs: list[bytes] = []
    index: dict[str, list[int]] = {}
    offset = 0
    for name, shader in split_shaders(source).items():
        blob = _compile_one(glslang, spirv_val, name, shader, target_env)
        index[name] = [offset, len(blob)]
        offset += len(blob)
        blobs.append(blob)
    return b"".join(blobs), {"spirv": index, "tools": tool_versions(),
                             "target_env": target_env, "validated": validate}


def _compile_one(glslang: str, spirv_val: str | None, name: str, shader: str,
                 target_env: str) -> bytes:
    work = sdk.work_folder(f"tvm-vulkan-{name}-")
    comp, spv = work / f"{name}.comp", work / f"{name}.spv"
    comp.write_text(shader, encoding="utf-8")
    _run([glslang, "-V", "--target-env", target_env, "-o", str(spv), str(comp)],
         f"compiling kernel {name!r} to SPIR-V", comp)
    if spirv_val is not None:
        _run([spirv_val, "--target-env", target_env, str(spv)],
             f"validating the SPIR-V of kernel {name!r}", spv)
    data = spv.read_bytes()
    shutil.rmtree(work, ignore_errors=True)
    return data


def validate_spirv(blob: bytes, *, target_env: str = "vulkan1.1", name: str = "module") -> None:
    """Run spirv-val on one SPIR-V module (raises CompileError with its log)."""
    spirv_val = find_tool("spirv-val")
    work = sdk.work_folder(f"tvm-vulkan-{name}-")
    spv = work / f"{name}.spv"
    spv.write_bytes(blob)
    _run([spirv_val, "--target-env", target_env, str(spv)],
         f"validating the SPIR-V of {name!r}", spv)
    shutil.rmtree(work, ignore_errors=True)


def spirv_modules(binary: bytes, metadata: Mapping[str, Any]) -> dict[str, bytes]:
    """The SPIR-V module of each kernel, cut from a binary by its metadata."""
    out = {}
    for name, (offset, size) in metadata["spirv"].items():
        blob = binary[offset:offset + size]
        if len(blob) != size or int.from_bytes(blob[:4], "little") != SPIRV_MAGIC:
            raise ValueError(f"the binary holds no SPIR-V module for kernel {name!r} at "
                             f"[{offset}, {offset + size}): it is damaged or not this "
                             "backend's")
        out[name] = blob
    return out
