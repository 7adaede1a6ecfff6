"""A syntax check for Metal Shading Language compute kernels that runs on Linux.

No Apple tool compiles MSL off macOS, so the kernel is compiled as C++17 by g++ (or clang++)
with ``-fsyntax-only`` against a shim header (``shim/tvm_metal_shim.h``) that declares MSL's
keywords, address spaces, vector and matrix types, SIMD-group functions, simdgroup matrices,
atomics and math. Syntax errors, undeclared names and many type errors fail with
:class:`tvm.error.CompileError`, which carries the compiler's output and the exact command.

Before compiling, two MSL constructs are rewritten in place (line numbers are kept):
``[[attribute(args)]]`` becomes ``__msl_attr_attribute(args)`` (the shim defines the known
attributes, so a misspelt one is an error), and a ``threadgroup`` variable declaration is
marked as threadgroup storage. A few address-space rules the C++ compiler cannot see are
checked here too (a ``threadgroup`` variable with an initializer; a ``device`` variable that is
not a pointer or reference).

Usage::

    from tvm_backend_metal.msl_check import check_msl
    check_msl(open("my_kernel.metal").read())     # raises CompileError on a bad kernel
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import shutil
from pathlib import Path

from tvm.backend import sdk
from tvm.error import CompileError

__all__ = ["KernelParam", "KernelSignature", "check_msl", "find_kernels", "prepare_source"]

SHIM_DIR = Path(__file__).resolve().parent / "shim"
SHIM_HEADER = SHIM_DIR / "tvm_metal_shim.h"
CXX_STD = "c++17"
_TIMEOUT_S = 300

# MSL attribute names the shim knows (kept in sync with the __msl_attr_* macros of the header).
MSL_ATTRIBUTES = frozenset(
    [
        "kernel",
        "buffer",
        "texture",
        "sampler",
        "threadgroup",
        "function_constant",
        "host_name",
        "max_total_threads_per_threadgroup",
        "visible",
        "id",
        "thread_position_in_grid",
        "thread_position_in_threadgroup",
        "threadgroup_position_in_grid",
        "threads_per_threadgroup",
        "threadgroups_per_grid",
        "threads_per_grid",
        "thread_index_in_threadgroup",
        "thread_index_in_simdgroup",
        "simdgroup_index_in_threadgroup",
        "threads_per_simdgroup",
        "simdgroups_per_threadgroup",
        "thread_execution_width",
        "dispatch_threads_per_threadgroup",
        "dispatch_simdgroups_per_threadgroup",
        "grid_origin",
        "grid_size",
    ]
)
# Standard C++ attributes stay as they are.
_CXX_ATTRIBUTES = frozenset(
    [
        "likely",
        "unlikely",
        "maybe_unused",
        "fallthrough",
        "nodiscard",
        "noreturn",
        "deprecated",
        "carries_dependency",
        "no_unique_address",
    ]
)
BUILTIN_ATTRIBUTES = frozenset(
    a
    for a in MSL_ATTRIBUTES
    if a.startswith(("thread", "simdgroup", "dispatch", "grid")) and a != "threadgroup"
)


@dataclasses.dataclass(frozen=True)
class KernelParam:
    """One parameter of a kernel: its C++ type text, name, and binding."""

    name: str
    type: str  # as written, address-space words included (``device const float*``)
    kind: str  # "buffer", "threadgroup" or "builtin"
    index: int = -1  # binding index for buffer/threadgroup
    builtin: str = ""  # attribute name for builtins (``thread_position_in_grid``)


@dataclasses.dataclass(frozen=True)
class KernelSignature:
    name: str
    params: tuple[KernelParam, ...]
    line: int


# --------------------------------------------------------------------------------------------
# Source preparation


def _mask(source: str) -> str:
    """The source with comments and string/char literals blanked (newlines kept)."""
    out = list(source)
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if source.startswith("//", i):
            j = source.find("\n", i)
            j = n if j < 0 else j
        elif source.startswith("/*", i):
            j = source.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c in "\"'":
            j = i + 1
            while j < n and source[j] != c and source[j] != "\n":
                j += 2 if source[j] == "\\" else 1
            j = min(j + 1, n)
        else:
            i += 1
            continue
        for k in range(i, j):
            if out[k] != "\n":
                out[k] = " "
        i = j
    return "".join(out)


_ATTR_RE = re.compile(r"\[\[(.*?)\]\]", re.S)
_ATTR_ITEM_RE = re.compile(r"\s*([A-Za-z_]\w*)\s*(\(.*\))?\s*$", re.S)


def _rewrite_attributes(source: str) -> str:
    masked = _mask(source)
    pieces, last = [], 0
    for m in _ATTR_RE.finditer(masked):
        # Split on the masked text (string arguments cannot confuse it), read the original.
        original = source[m.start(1) : m.end(1)]
        spans = sdk.emu.split_top_level(m.group(1))
        items = [original[off : off + len(piece)] for off, piece in spans]
        names = [_ATTR_ITEM_RE.match(item) for item in items]
        if any("::" in item for item in items) or all(
            nm is not None and nm.group(1) in _CXX_ATTRIBUTES for nm in names
        ):
            continue
        words = []
        for item, nm in zip(items, names):
            if nm is None:
                words.append(f"__msl_attr_invalid({item.strip()})")
            else:
                words.append(f"__msl_attr_{nm.group(1)}{nm.group(2) or ''}")
        pieces.append(source[last : m.start()])
        pieces.append(" ".join(words))
        last = m.end()
    pieces.append(source[last:])
    return "".join(pieces)


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


def _declarator_kind(masked: str, start: int) -> tuple[str, int]:
    """After an address-space word: 'pointer' (a * or & comes first), 'init' (an initialized
    variable), 'storage' (a plain variable or array) or 'other'; plus the stop offset."""
    j = start
    while j < len(masked):
        c = masked[j]
        j += 1
        if c in "*&":
            return "pointer", j
        if c in "()":
            return "other", j
        if c == "=":
            return "init", j
        if c == "[":
            depth = 1  # skip the array extent: `threadgroup float t[N] = ...` is still init
            while j < len(masked) and depth:
                depth += {"[": 1, "]": -1}.get(masked[j], 0)
                j += 1
            continue
        if c in ";,{":
            return "storage", j
    return "other", len(masked)


def _attribute_errors(source: str, filename: str) -> list[str]:
    errors = []
    for m in re.finditer(r"__msl_attr_(\w+)", _mask(source)):
        if m.group(1) not in MSL_ATTRIBUTES:
            line, col = _line_col(source, m.start())
            errors.append(f"{filename}:{line}:{col}: error: unknown MSL attribute [[{m.group(1)}]]")
    return errors


def prepare_source(source: str, filename: str = "kernel.metal") -> tuple[str, list[str]]:
    """Rewrite MSL for the shim (lines are kept); returns the text and the address-space and
    attribute diagnostics found on the way, in gcc's format."""
    text = _rewrite_attributes(source)
    masked = _mask(text)
    errors = _attribute_errors(text, filename)
    pieces, last = [], 0
    for m in re.finditer(r"\bthreadgroup\b", masked):
        kind, _ = _declarator_kind(masked, m.end())
        if kind in ("pointer", "other"):
            continue
        if kind == "init":
            line, col = _line_col(text, m.start())
            errors.append(
                f"{filename}:{line}:{col}: error: a variable in the threadgroup address "
                "space cannot have an initializer"
            )
        pieces.append(text[last : m.start()])
        pieces.append("__tvm_tg_storage")
        last = m.end()
    pieces.append(text[last:])
    for m in re.finditer(r"\bdevice\b", masked):
        kind, _ = _declarator_kind(masked, m.end())
        if kind in ("storage", "init"):
            line, col = _line_col(text, m.start())
            errors.append(
                f"{filename}:{line}:{col}: error: a variable in the device address "
                "space must be a pointer or a reference"
            )
    return "".join(pieces), errors


_KERNEL_RE = re.compile(r"\b(?:kernel|__msl_attr_kernel)\s+void\s+([A-Za-z_]\w*)\s*\(")
_PARAM_ATTR_RE = re.compile(r"__msl_attr_(\w+)\s*(?:\(([^()]*)\))?")


def _matching_paren(masked: str, open_pos: int) -> int:
    depth = 0
    for j in range(open_pos, len(masked)):
        if masked[j] == "(":
            depth += 1
        elif masked[j] == ")":
            depth -= 1
            if depth == 0:
                return j
    raise CompileError(f"unbalanced parentheses in the kernel signature at offset {open_pos}")


def find_kernels(prepared: str) -> dict[str, KernelSignature]:
    """The kernels of a prepared source (see :func:`prepare_source`) and their parameters."""
    masked = _mask(prepared)
    kernels: dict[str, KernelSignature] = {}
    for m in _KERNEL_RE.finditer(masked):
        close = _matching_paren(masked, m.end() - 1)
        inner = masked[m.end() : close]
        params: list[KernelParam] = []
        next_buffer = 0
        for _, raw in sdk.emu.split_top_level(inner):
            if not raw.strip() or raw.strip() == "void":
                continue
            attrs = list(_PARAM_ATTR_RE.finditer(raw))
            decl = _PARAM_ATTR_RE.sub(" ", raw).strip()
            nm = re.search(r"([A-Za-z_]\w*)\s*$", decl)
            if nm is None:
                raise CompileError(f"kernel {m.group(1)!r}: cannot read parameter {raw.strip()!r}")
            name, ptype = nm.group(1), decl[: nm.start()].strip()
            binding = next(
                (
                    (a.group(1), a.group(2))
                    for a in attrs
                    if a.group(1) in ("buffer", "threadgroup") or a.group(1) in BUILTIN_ATTRIBUTES
                ),
                None,
            )
            if binding is None:
                # MSL numbers unannotated buffer arguments in order.
                params.append(KernelParam(name, ptype, "buffer", next_buffer))
                next_buffer += 1
            elif binding[0] in ("buffer", "threadgroup"):
                index = int((binding[1] or "0").strip(), 0)
                params.append(KernelParam(name, ptype, binding[0], index))
                if binding[0] == "buffer":
                    next_buffer = max(next_buffer, index + 1)
            else:
                params.append(KernelParam(name, ptype, "builtin", builtin=binding[0]))
        line, _ = _line_col(prepared, m.start())
        kernels[m.group(1)] = KernelSignature(m.group(1), tuple(params), line)
    return kernels


# --------------------------------------------------------------------------------------------
# Compiler


def find_cxx(cxx: str | None = None) -> str:
    """The C++ compiler: `cxx`, else $TVM_METAL_CXX, $CXX, g++, clang++, c++."""
    candidates = (
        [cxx]
        if cxx
        else [os.environ.get("TVM_METAL_CXX"), os.environ.get("CXX"), "g++", "clang++", "c++"]
    )
    for cand in candidates:
        if not cand:
            continue
        path = shutil.which(cand)
        if path:
            return path
    tried = ", ".join(c for c in candidates if c)
    raise CompileError(
        f"no C++ compiler found for the Metal shim (tried {tried}); install g++ "
        "(e.g. 'apt-get install g++') or pass cxx='/path/to/g++'"
    )


def shim_flags() -> list[str]:
    return [
        f"-std={CXX_STD}",
        "-x",
        "c++",
        "-include",
        str(SHIM_HEADER),
        f"-I{SHIM_DIR}",
        f"-I{sdk.emu.HEADER_DIR}",  # core's fiber runtime, included by the shim
        "-Wno-attributes",
        "-Wno-literal-suffix",
        "-fno-strict-aliasing",
    ]


def write_source(text: str, stem: str) -> Path:
    """Write ``text`` to ``<stem>.metal`` in a new private temporary folder. Callers remove the
    folder when the command that reads it succeeds and keep it when it fails, so that the
    command in the error can be re-run."""
    folder = sdk.work_folder("tvm-metal-")
    path = folder / f"{stem}.metal"
    path.write_text(text, encoding="utf-8")
    return path


def run_compiler(cmd: list[str], what: str) -> None:
    """Run a compiler command; a failure raises CompileError with its output and the command.
    The message names the first error line of the compiler's output."""
    try:
        sdk.run_tool(cmd, f"running the {what}", _TIMEOUT_S, tool="the C++ compiler")
    except CompileError as exc:
        first = next((ln for ln in exc.log.splitlines() if "error" in ln), exc.log[:200])
        if not first:
            raise
        raise CompileError(f"{what} failed: {first}", log=exc.log, command=exc.command) from None


def check_msl(source: str, *, cxx: str | None = None, filename: str = "kernel.metal") -> None:
    """Syntax-check an MSL source with the C++ shim; raise CompileError if it does not pass.

    `cxx` picks the compiler (default: $TVM_METAL_CXX, $CXX, g++, clang++). `filename` names the
    source in diagnostics. Returns None when the kernel passes.
    """
    compiler = find_cxx(cxx)
    prepared, errors = prepare_source(source, filename)
    path = write_source(prepared, Path(filename).stem)
    cmd = [compiler, "-fsyntax-only", *shim_flags(), str(path)]
    try:
        run_compiler(cmd, "MSL syntax check")
        if not errors:
            shutil.rmtree(path.parent, ignore_errors=True)
    except CompileError as exc:
        if not errors:
            raise
        log = "\n".join(errors) + "\n" + exc.log
        raise CompileError(
            f"MSL syntax check failed: {errors[0]}", log=log, command=exc.command
        ) from None
    if errors:
        raise CompileError(
            f"MSL syntax check failed: {errors[0]}", log="\n".join(errors), command=shlex.join(cmd)
        )
