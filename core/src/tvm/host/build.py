"""Build and load host executables: codegen -> (compile cache | C compiler) -> ctypes.

What the host plugin's ``tvm_build_module`` and ``tvm_load_executable`` hooks call.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from ..codegen.c_style import FunctionInfo
from ..error import TVMError
from ..ir.function import IRModule
from ..runtime.arguments import Signature
from ..runtime.cache import CompileCache, cache_key
from ..runtime.executable import read_container
from .codegen import generate_c
from .compiler import get_toolchain
from .runtime import HostExecutable

__all__ = ["BUILD_OPTIONS", "build_module", "load_executable"]

# Options tvm.compile(..., **options) accepts for the host target (they override target attrs).
BUILD_OPTIONS = {
    "opt_level": "optimisation level of the C compiler (-O<n>), default from the target (2)",
    "cc": "the C compiler command (default: the target's cc, else $CC, else cc)",
    "mcpu": "passed as -march=<mcpu>",
    "num_threads": "OpenMP threads of parallel loops (default: OpenMP's choice)",
    "extra_flags": "a list of extra compiler flags",
    "cache": "use the compile cache (default True)",
}
_CACHE = CompileCache("c")
_FORMAT = 1  # bump when generated code or the build recipe changes incompatibly


def build_module(mod: IRModule, target: Any, options: Mapping[str, Any]) -> HostExecutable:
    unknown = sorted(set(options) - set(BUILD_OPTIONS))
    if unknown:
        known = ", ".join(sorted(BUILD_OPTIONS))
        raise TypeError(f"unknown compile option(s) {unknown} for target 'c'; known: {known}")
    setting = {**{k: v for k, v in target.attrs.items()}, **options}
    toolchain = get_toolchain(setting.get("cc"))
    num_threads = setting.get("num_threads")
    source, functions, uses_openmp = generate_c(
        mod, target, openmp=toolchain.has_openmp, float16=toolchain.has_float16,
        num_threads=int(num_threads) if num_threads else None)
    flags = toolchain.flags(opt_level=int(setting.get("opt_level", 2)), openmp=uses_openmp,
                            mcpu=setting.get("mcpu"),
                            extra=tuple(setting.get("extra_flags") or ()))
    compiler = {"command": toolchain.display, "version": toolchain.version, "flags": flags}
    key = cache_key("c", _FORMAT, source, str(target), compiler)
    path = _CACHE.get_path(key) if setting.get("cache", True) else None
    if path is None:
        binary = toolchain.compile_shared(source, flags, what=_describe(functions))
        path = _CACHE.put(key, binary, {"functions": [f.name for f in functions]})
    return HostExecutable(target, path, source, functions, _signatures(mod, functions),
                          compiler=compiler)


def load_executable(path_or_bytes: Any, header: Mapping[str, Any]) -> HostExecutable | None:
    if header.get("backend") != "c":
        return None
    from ..target import Target

    header, payload = read_container(path_or_bytes)
    digest = hashlib.sha256(payload).hexdigest()
    key = cache_key("c-loaded", digest)
    path = _CACHE.get_path(key) or _CACHE.put(key, payload, {"loaded": True})
    functions = [FunctionInfo.from_dict(header["signatures"][name]) for name in header["entries"]]
    arguments = header.get("arguments")
    if arguments is None:
        raise TVMError("this executable was written before argument signatures were stored "
                       "(no 'arguments' in its header); export it again with this tvm")
    signatures = {name: Signature.from_dict(arguments[name]) for name in header["entries"]}
    target = Target(header["target"])
    return HostExecutable(target, path, header.get("source", ""), functions, signatures,
                          compiler=header.get("compiler"))


def _describe(functions: list[FunctionInfo]) -> str:
    names = ", ".join(f.name for f in functions) or "an empty module"
    return f"the C source of {names}"


def _signatures(mod: IRModule, functions: list[FunctionInfo]) -> dict[str, Signature]:
    """The argument signature of every exported function, from the IR (names as in C)."""
    from ..tirx.transform.signature import signature_from_func

    by_name = {str(f.attrs.get("global_symbol", name)): f for name, f in mod.functions.items()}
    return {info.name: signature_from_func(by_name[info.name], "cpu", name=info.name)
            for info in functions if info.name in by_name}
