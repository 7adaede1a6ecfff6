"""A kernel's parameters read from its CUDA declaration, for a module built without a signature.

A :class:`~tvm_backend_cuda.runtime.CudaModule` may be given kernel names only: the GPU's
driver takes raw launch values, so it needs no parameter types. The emulator does (it checks
each pointer against its array and passes each scalar at its C type), so for such a kernel it
reads the ``extern "C" __global__ void name(...)`` declaration of the source it builds: a pointer
parameter (any element type, ``const``, ``volatile``, ``__restrict__``) is ``ptr``, a scalar its
dtype (``int`` is ``int32``, ``unsigned long long`` ``uint64``, ``float`` ``float32``; ``long`` is
64-bit, as on Linux), a ``CUtensorMap`` passed by value (``__grid_constant__ const CUtensorMap``)
``tensormap``. Anything else (a struct or template type by value, a reference, an array, a
function pointer, a template kernel) is an error naming the kernel and the parameter, asking for
a signature.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from tvm.backend.sdk import emu
from tvm.error import EmulatorError

__all__ = ["signatures", "source_params"]

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_ATTRIBUTE = r"(?:__\w+__\s*\([^)]*\)\s*)"  # __launch_bounds__(...), __cluster_dims__(...)
_QUALIFIERS = frozenset({"const", "volatile", "__restrict__", "__restrict", "restrict",
                         "__grid_constant__", "register"})
_INT_WORDS = frozenset({"signed", "unsigned", "char", "short", "int", "long"})
_NAMED_SCALARS = {
    "bool": "bool", "float": "float32", "double": "float64",
    "half": "float16", "__half": "float16", "__nv_bfloat16": "bfloat16",
    "nv_bfloat16": "bfloat16", "size_t": "uint64", "ptrdiff_t": "int64",
    **{f"{u}int{b}_t": f"{u}int{b}" for u in ("", "u") for b in (8, 16, 32, 64)},
}
_TENSOR_MAP = "CUtensorMap"
_IDENT = re.compile(r"[A-Za-z_]\w*")
_GIVE = ("give the module its signature: {{{0!r}: [(name, type), ...]}}, each type 'ptr', "
         "'tensormap' or a dtype such as 'int32'")


def source_params(source: str, kernel: str) -> list[tuple[str, str]]:
    """``kernel``'s ``(name, type)`` parameters, read from its ``extern "C" __global__``
    declaration in CUDA ``source``; type ``ptr``, ``tensormap`` or a scalar dtype."""
    text = _COMMENT.sub(" ", source)
    params = _param_text(text, kernel)
    if params is None:
        raise _not_declared(text, kernel)
    items = _split(params)
    if items in ([], ["void"]):
        return []
    return [_param(kernel, i, item) for i, item in enumerate(items)]


def signatures(source: str, kernels: Sequence[str] | Mapping[str, Sequence[Any] | None]
               ) -> dict[str, list[tuple[str, str]]]:
    """Each kernel's ``(name, type)`` parameters: as given (a type alone is named ``argI``, as
    the GPU's module names it), else read from the source."""
    if isinstance(kernels, str):
        kernels = [kernels]
    specs = kernels if isinstance(kernels, Mapping) else dict.fromkeys(kernels)
    out = {}
    for kernel, params in specs.items():
        if params is None:
            out[kernel] = source_params(source, kernel)
            continue
        out[kernel] = [(str(p[0]), str(p[1])) if isinstance(p, (tuple, list))
                       else (f"arg{i}", str(p)) for i, p in enumerate(params)]
    return out


def _param_text(text: str, kernel: str) -> str | None:
    """The text between the parentheses of ``kernel``'s declaration, or None without one."""
    head = re.compile(rf'extern\s+"C"\s+__global__\s+{_ATTRIBUTE}*void\s+{_ATTRIBUTE}*'
                      rf"{re.escape(kernel)}\s*\(")
    m = head.search(text)
    if m is None:
        return None
    depth, start = 1, m.end()
    for i in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return text[start:i]
    return None


def _not_declared(text: str, kernel: str) -> EmulatorError:
    template = re.search(rf"\btemplate\s*<[^;{{]*?__global__\s+{_ATTRIBUTE}*void\s+"
                         rf"{_ATTRIBUTE}*{re.escape(kernel)}\s*[<(]", text, re.S)
    if template is not None:
        return EmulatorError(
            f"kernel {kernel!r} is a template; a module's kernels are extern \"C\" __global__ "
            "functions, named by their C names, which the CUDA emulator reads the parameters "
            f"of: declare an extern \"C\" __global__ kernel that calls {kernel}<...>")
    return EmulatorError(
        f'kernel {kernel!r} has no extern "C" __global__ declaration in the CUDA source, so the '
        f"CUDA emulator cannot read its parameters; declare it so, or {_GIVE.format(kernel)}")


def _split(params: str) -> list[str]:
    """The comma-separated parameters, commas inside <>, () or [] kept."""
    parts = [piece.strip() for _, piece in emu.split_top_level(params, ",", "<([", ">)]")]
    return [] if parts == [""] else parts


def _param(kernel: str, index: int, decl: str) -> tuple[str, str]:
    if any(ch in decl for ch in "&[]()="):  # a reference, array, function pointer, default
        raise _unreadable(kernel, index, decl)
    pointee, star, rest = decl.rpartition("*")
    words = rest.split() if star else decl.split()
    name = f"arg{index}"
    if words and _IDENT.fullmatch(words[-1]) and not _is_type_word(words[-1]) and (
            star or len(words) > 1):
        name = words.pop()
    if star:  # any element type: the emulator checks the pointer against its array's bytes
        element = [w for w in pointee.split("*")[0].split() if w not in _QUALIFIERS]
        if not element or any(w not in _QUALIFIERS for w in words):
            raise _unreadable(kernel, index, decl)
        return name, "ptr"
    dtype = _scalar([w for w in words if w not in _QUALIFIERS])
    if dtype is None:
        raise _unreadable(kernel, index, decl)
    return name, dtype


def _is_type_word(word: str) -> bool:
    return (word in _INT_WORDS or word in _NAMED_SCALARS or word in _QUALIFIERS
            or word == _TENSOR_MAP)


def _scalar(words: list[str]) -> str | None:
    """The dtype of a scalar C type given as its words (qualifiers dropped), or None."""
    if len(words) == 1 and words[0] in _NAMED_SCALARS:
        return _NAMED_SCALARS[words[0]]
    if words == [_TENSOR_MAP]:
        return "tensormap"
    if not words or any(w not in _INT_WORDS for w in words):
        return None
    n = {w: words.count(w) for w in _INT_WORDS}
    if (n["signed"] + n["unsigned"] > 1 or n["int"] > 1 or n["long"] > 2
            or n["char"] + n["short"] + min(n["long"], 1) > 1 or (n["char"] and n["int"])):
        return None
    bits = 8 if n["char"] else 16 if n["short"] else 64 if n["long"] else 32
    return f"{'u' if n['unsigned'] else ''}int{bits}"


def _unreadable(kernel: str, index: int, decl: str) -> EmulatorError:
    name = decl.split()[-1] if len(decl.split()) > 1 else ""
    what = f"parameter {name!r} (#{index})" if _IDENT.fullmatch(name) else f"parameter #{index}"
    return EmulatorError(
        f"kernel {kernel!r}: {what} is declared {decl!r}, a type the CUDA emulator cannot read "
        "from the source (it reads pointers, integer and floating-point scalars and "
        f"CUtensorMap); {_GIVE.format(kernel)}")
