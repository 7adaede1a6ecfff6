"""``Executable``: what ``tvm.compile`` returns, and the file format of ``export_library``.

An executable is callable on arrays (its entry function), gives its functions by name
(``ex["name"]``), shows the generated source (``inspect_source()``) and saves itself
(``export_library(path)``). It is made by a backend's builder (:mod:`tvm.backend.contract`)
from a binary and its metadata, and that pair is exactly what a file holds: :func:`load_module`
hands them back to the builder of the file's target kind.

File format (self-describing; readable with ``head -2``)::

    TVM-EXECUTABLE 3 sha256:<digest>\n
    {"format_version": 3, "backend": "c", "target": {...}, "entries": [...], "source": "...",
     "builder_format": 1, "metadata": {...}, "payload_size": N, "payload_sha256": "..."}\n
    <payload: N bytes, the backend's binary>

``<digest>`` is the SHA-256 of everything after the first line (header and payload): it is
checked before the header is parsed, so a changed shape, ``written`` flag or byte of the binary
is an :class:`~tvm.error.IntegrityError`, never a kernel that runs with it. The digest detects
damage, not an attacker (who can write a matching one): ``load_module(path,
expected_sha256=...)`` pins the whole file to a digest you got from a trusted place, the way
``pip --require-hashes`` does.

Loading an executable loads native code (a shared object, a cubin) or data the backend trusts:
only load files you trust, as with a pickle or a shared library (``docs/security.md``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import struct
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..error import BackendError, ExecutableFileError, IntegrityError, TVMError
from ._files import read_regular

__all__ = ["FORMAT_VERSION", "MAGIC", "Executable", "load_module", "max_executable_bytes",
           "read_container", "register_builder_contract", "write_container"]

#: kind -> (the backend name, the builder's format number) of the builder of that target kind
Identify = Callable[[str], "tuple[str, int] | None"]
#: (header, payload, where) -> the executable, through the builder of the header's target kind
Load = Callable[[Mapping[str, Any], bytes, str], "Executable"]
# Set by the build contract (tvm.backend.contract, a layer above this one) when it is imported,
# which `import tvm` does: this module writes and reads the file, the contract knows builders.
_BUILDER_CONTRACT: list[tuple[Identify, Load]] = []


def register_builder_contract(identify: Identify, load: Load) -> None:
    """Lend the file format the build contract's two services: naming the builder of a target
    kind (``export_library`` writes its name and format) and loading a file's header and payload
    through that builder (:func:`load_module`). Called once, by :mod:`tvm.backend.contract`."""
    _BUILDER_CONTRACT[:] = [(identify, load)]


def _builder_contract() -> tuple[Identify, Load]:
    if not _BUILDER_CONTRACT:
        raise BackendError("no build contract is registered (tvm.backend.contract registers it "
                           "when imported; `import tvm` imports it)")
    return _BUILDER_CONTRACT[0]

MAGIC = b"TVM-EXECUTABLE"
FORMAT_VERSION = 3  # 3: the first line carries a digest of header and payload (issue 26)
DEFAULT_MAX_BYTES = 1 << 30
_MAX_FIRST_LINE = 128
_HEX64 = re.compile(r"[0-9a-f]{64}")


class Executable:
    """Base class of every backend's compiled module.

    A builder's ``load`` makes one from a :class:`~tvm.backend.contract.Binary` and the
    metadata its ``codegen`` produced (``metadata["source"]`` is the generated source);
    subclasses implement :meth:`get_function` and may override :meth:`inspect_source`.
    Export needs nothing more: the file holds the binary and the metadata.
    """

    backend: str = ""

    def __init__(self, target: Any, entry_names: list[str], *, binary: Any = None,
                 metadata: Mapping[str, Any] | None = None) -> None:
        self.target = target
        self.entry_names = list(entry_names)
        self.binary = binary
        self.metadata: dict[str, Any] = dict(metadata or {})

    # -- calling ----------------------------------------------------------------------------------
    @property
    def entry_name(self) -> str:
        """The function ``ex(...)`` calls: the only one, else ``main``."""
        if len(self.entry_names) == 1:
            return self.entry_names[0]
        if "main" in self.entry_names:
            return "main"
        raise TypeError(f"this executable has {len(self.entry_names)} functions "
                        f"({', '.join(self.entry_names)}); call one with ex['name'](...)")

    def __call__(self, *args: Any) -> Any:
        return self.get_function(self.entry_name)(*args)

    def __getitem__(self, name: str) -> Callable[..., Any]:
        return self.get_function(self._symbol(name))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._symbol(name) in self.entry_names

    def _symbol(self, name: str) -> str:
        """The exported function ``name`` calls: itself, or the symbol of the function the
        compiled module held under that key (``IRModule({"main": f})`` exports ``f``'s
        ``global_symbol``, and ``ex["main"]`` finds it, as in the seed)."""
        if name in self.entry_names:
            return name
        aliases = self.metadata.get("function_aliases")
        return str(aliases.get(name, name)) if isinstance(aliases, Mapping) else name

    def get_function(self, name: str) -> Callable[..., Any]:
        raise NotImplementedError

    def _no_function(self, name: str) -> KeyError:
        return KeyError(f"this executable has no function {name!r}; it has "
                        f"{sorted(self.entry_names)}")

    def inspect_source(self, kind: str = "") -> str:
        """The generated source (C, CUDA C++, ...)."""
        return str(self.metadata.get("source", ""))

    @property
    def mod(self) -> _ModuleView:
        """The seed's runtime module: ``ex.mod.imports[0].inspect_source()`` is the generated
        source, as ``ex.inspect_source()``."""
        return _ModuleView(self)

    # -- saving -----------------------------------------------------------------------------------
    def export_library(self, path: str | os.PathLike[str]) -> str:
        """Write this executable to ``path`` (one self-describing file); returns the path."""
        if self.binary is None:
            raise NotImplementedError(f"{type(self).__name__} has no binary to export")
        target = self.target
        kind = target.kind.name if hasattr(target, "kind") else str(target)
        identify, _ = _builder_contract()
        builder_name, builder_format = identify(kind) or (self.backend, 1)
        header: dict[str, Any] = {
            "backend": builder_name,
            "target": target.export() if hasattr(target, "export") else str(target),
            "target_str": str(target),
            "entries": self.entry_names,
            "source": self.inspect_source(),
            "builder_format": builder_format,
            "metadata": self.metadata,
        }
        data = self.binary.data if hasattr(self.binary, "data") else bytes(self.binary)
        write_container(path, header, data)
        return os.fspath(path)

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} backend={self.backend!r} target={str(self.target)!r} "
                f"functions={self.entry_names}>")


class _ModuleView:
    """``ex.mod``: the executable seen as the seed's runtime module, whose one import is the
    executable itself (its ``inspect_source``)."""

    def __init__(self, ex: Executable) -> None:
        self.imports = [ex]
        self._ex = ex

    def inspect_source(self, kind: str = "") -> str:
        return self._ex.inspect_source(kind)

    def __getitem__(self, name: str) -> Callable[..., Any]:
        return self._ex.get_function(name)

    def __call__(self, *args: Any) -> Any:
        return self._ex(*args)


def max_executable_bytes() -> int:
    """The largest file :func:`load_module` reads: ``TVM_MAX_EXECUTABLE_BYTES``, else 1 GiB."""
    text = os.environ.get("TVM_MAX_EXECUTABLE_BYTES", "").strip()
    if not text:
        return DEFAULT_MAX_BYTES
    try:
        return int(text)
    except ValueError:
        raise ExecutableFileError(f"TVM_MAX_EXECUTABLE_BYTES={text!r} is not a number of "
                                  "bytes") from None


def write_container(path: str | os.PathLike[str], header: dict[str, Any], payload: bytes) -> None:
    """Write ``header`` and ``payload`` in the executable file format, atomically."""
    full = dict(header)
    full["format_version"] = FORMAT_VERSION
    full["payload_size"] = len(payload)
    full["payload_sha256"] = hashlib.sha256(payload).hexdigest()
    body = json.dumps(full, sort_keys=True).encode("utf-8") + b"\n" + payload
    digest = hashlib.sha256(body).hexdigest()
    data = b"".join([MAGIC, b" ", str(FORMAT_VERSION).encode(), b" sha256:", digest.encode(),
                     b"\n", body])
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_container(path_or_bytes: str | os.PathLike[str] | bytes, *,
                   expected_sha256: str | None = None) -> tuple[dict[str, Any], bytes]:
    """(header, payload) of an exported executable.

    Raises :class:`~tvm.error.ExecutableFileError` (a ``ValueError``) naming the file and what
    is wrong when it is not a regular file, is larger than :func:`max_executable_bytes`, or is
    not an executable of a format this tvm reads; :class:`~tvm.error.IntegrityError` when it does
    not match its own digest or ``expected_sha256`` (the SHA-256 of the whole file, as hex or
    ``"sha256:<hex>"``).
    """
    pin = None if expected_sha256 is None else _pin(expected_sha256)
    if isinstance(path_or_bytes, (bytes, bytearray)):
        data, name = bytes(path_or_bytes), "<bytes>"
    else:
        name = os.fspath(path_or_bytes)
        data = read_regular(name, limit=max_executable_bytes(), follow_symlinks=True)
    if pin is not None:
        actual = hashlib.sha256(data).hexdigest()
        if actual != pin:
            raise IntegrityError(f"{name}: its SHA-256 is {actual}, not the expected {pin}: "
                                 "this is not the file that was pinned; do not load it")
    body = _verified_body(name, data)
    line, _, payload = body.partition(b"\n")
    header = _parse_header(name, line)
    size = header.get("payload_size")
    if len(payload) != size or hashlib.sha256(payload).hexdigest() != header.get("payload_sha256"):
        raise IntegrityError(f"{name} is truncated or corrupted: its payload does not match the "
                             f"checksum in its header ({len(payload)} bytes, expected {size})")
    return header, payload


def _pin(expected: str) -> str:
    if not isinstance(expected, str):
        raise TypeError(f"expected_sha256 must be a str of 64 hex digits, not "
                        f"{type(expected).__name__}")
    text = expected.strip().lower()
    text = text[len("sha256:"):] if text.startswith("sha256:") else text
    if not _HEX64.fullmatch(text):
        raise ValueError(f"expected_sha256={expected!r} is not a SHA-256 (64 hex digits, "
                         "optionally after 'sha256:'); `sha256sum FILE` prints one")
    return text


def _verified_body(name: str, data: bytes) -> bytes:
    """Everything after the first line, once that line's format and digest are checked."""
    first, newline, body = data.partition(b"\n")
    if not first.startswith(MAGIC + b" "):
        raise ExecutableFileError(f"{name} is not an executable written by export_library "
                                  f"(it does not start with {MAGIC.decode()!r})")
    if not newline or len(first) > _MAX_FIRST_LINE:
        raise ExecutableFileError(f"{name}: malformed first line {first[:60]!r}")
    fields = first[len(MAGIC) + 1:].split(b" ")
    try:
        version = int(fields[0])
    except ValueError:
        raise ExecutableFileError(f"{name}: malformed first line {first[:60]!r} (the format "
                                  "version is not a number)") from None
    if version > FORMAT_VERSION:
        raise ExecutableFileError(f"{name} has executable format {version}; this tvm reads up "
                                  f"to {FORMAT_VERSION}: upgrade tvm-core")
    if version < FORMAT_VERSION:
        raise ExecutableFileError(
            f"{name} has executable format {version}, written by an older tvm whose files carry "
            f"no digest of their header; this tvm reads format {FORMAT_VERSION}: compile and "
            "export it again")
    digest = fields[1] if len(fields) == 2 else b""
    if not (digest.startswith(b"sha256:") and _HEX64.fullmatch(digest[7:].decode("ascii", "replace"))):
        raise ExecutableFileError(f"{name}: the first line has no 'sha256:<64 hex digits>' "
                                  f"digest ({first[:100]!r})")
    actual = hashlib.sha256(body).hexdigest()
    if actual != digest[7:].decode():
        raise IntegrityError(
            f"{name}: its contents do not match the digest in its first line (recorded "
            f"sha256:{digest[7:].decode()}, computed sha256:{actual}): the file was damaged or "
            "changed after it was exported; export it again")
    return body


# field -> (the JSON types it may have, what it must be, in words); target, entries required
_HEADER_FIELDS: dict[str, tuple[tuple[type, ...], str]] = {
    "format_version": ((int,), "an integer"),
    "backend": ((str,), "a string"),
    "target": ((dict,), "an object with a string 'kind'"),
    "target_str": ((str,), "a string"),
    "entries": ((list,), "a list of function names"),
    "source": ((str,), "a string"),
    "builder_format": ((int,), "an integer"),
    "metadata": ((dict,), "an object"),
    "payload_size": ((int,), "an integer"),
    "payload_sha256": ((str,), "a string"),
}
_REQUIRED = ("target", "entries", "payload_size", "payload_sha256")


def _parse_header(name: str, line: bytes) -> dict[str, Any]:
    try:
        header = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise ExecutableFileError(f"{name}: the header is not JSON ({err})") from None
    if not isinstance(header, dict):
        raise ExecutableFileError(f"{name}: the header is a JSON {type(header).__name__}, not an "
                                  "object")
    for field in _REQUIRED:
        if field not in header:
            raise ExecutableFileError(f"{name}: header field {field!r} is missing")
    for field, (types, what) in _HEADER_FIELDS.items():
        value = header.get(field)
        if field in header and (not isinstance(value, types) or isinstance(value, bool)):
            raise ExecutableFileError(f"{name}: header field {field!r} must be {what}, not "
                                      f"{_short(value)}")
    if not isinstance(header["target"].get("kind"), str):
        raise ExecutableFileError(f"{name}: header field 'target' must be an object with a "
                                  f"string 'kind', not {_short(header['target'])}")
    if not all(isinstance(e, str) for e in header["entries"]):
        raise ExecutableFileError(f"{name}: header field 'entries' must be a list of function "
                                  f"names, not {_short(header['entries'])}")
    return header


def _short(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


# What a builder raises on metadata or a payload it did not write: a malformed file, not a bug.
_MALFORMED = (KeyError, IndexError, TypeError, ValueError, AttributeError, UnicodeDecodeError,
              struct.error, OverflowError)


def load_module(path: str | os.PathLike[str], *, expected_sha256: str | None = None
                ) -> Executable:
    """Load a file written by :meth:`Executable.export_library`, through its target kind's
    builder. The file holds native code: load only files you trust (``docs/security.md``).

    ``expected_sha256`` (hex, or ``"sha256:<hex>"``, as ``sha256sum`` prints it) pins the file:
    any other file is refused with :class:`~tvm.error.IntegrityError` before it is parsed.
    Files that are not regular files, larger than ``TVM_MAX_EXECUTABLE_BYTES`` (1 GiB), or
    malformed raise :class:`~tvm.error.ExecutableFileError` naming the file and the field.
    """
    where = os.fspath(path)
    header, payload = read_container(path, expected_sha256=expected_sha256)
    _, load = _builder_contract()
    try:
        return load(header, payload, where)
    except TVMError as err:
        if where not in str(err) and err.args and isinstance(err.args[0], str):
            err.args = (f"{where}: {err.args[0]}", *err.args[1:])  # name the file
        raise
    except _MALFORMED as err:
        raise ExecutableFileError(f"{where}: {_malformed(err)}") from None


def _malformed(err: BaseException) -> str:
    if isinstance(err, KeyError):
        return (f"field {err.args[0]!r} is missing from its build metadata (the file was not "
                "written by this backend's export)")
    if isinstance(err, ValueError) and not isinstance(err, UnicodeDecodeError):
        return f"malformed build metadata: {err}"
    return (f"its build metadata or binary is malformed ({type(err).__name__}: {err}); the "
            "file was not written by this backend's export")
