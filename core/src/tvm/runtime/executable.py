"""``Executable``: what ``tvm.compile`` returns, and the file format of ``export_library``.

An executable is callable on arrays (its entry function), gives its functions by name
(``ex["name"]``), shows the generated source (``inspect_source()``) and saves itself
(``export_library(path)``). It is made by a backend's builder (:mod:`tvm.backend.contract`)
from a binary and its metadata, and that pair is exactly what a file holds: :func:`load_module`
hands them back to the builder of the file's target kind.

File format (self-describing; readable with ``head -2``)::

    TVM-EXECUTABLE 2\\n
    {"format_version": 2, "backend": "c", "target": {...}, "entries": [...], "source": "...",
     "builder_format": 1, "metadata": {...}, "payload_size": N, "payload_sha256": "..."}\\n
    <payload: N bytes, the backend's binary>

Loading an executable loads native code (a shared object, a cubin) or data the backend trusts:
only load files you trust, as with a pickle or a shared library (``docs/security.md``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

# Modules, not names: both are still being imported when they import this module.
from ..backend import _loader as _backend_loader
from ..backend import contract as _contract

__all__ = ["FORMAT_VERSION", "MAGIC", "Executable", "load_module", "read_container",
           "write_container"]

MAGIC = b"TVM-EXECUTABLE"
FORMAT_VERSION = 2


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
        return self.get_function(name)

    def __contains__(self, name: object) -> bool:
        return name in self.entry_names

    def get_function(self, name: str) -> Callable[..., Any]:
        raise NotImplementedError

    def _no_function(self, name: str) -> KeyError:
        return KeyError(f"this executable has no function {name!r}; it has "
                        f"{sorted(self.entry_names)}")

    def inspect_source(self, kind: str = "") -> str:
        """The generated source (C, CUDA C++, ...)."""
        return str(self.metadata.get("source", ""))

    # -- saving -----------------------------------------------------------------------------------
    def export_library(self, path: str | os.PathLike[str]) -> str:
        """Write this executable to ``path`` (one self-describing file); returns the path."""
        if self.binary is None:
            raise NotImplementedError(f"{type(self).__name__} has no binary to export")
        target = self.target
        kind = target.kind.name if hasattr(target, "kind") else str(target)
        builder = _contract.get_builder(kind) if kind in _contract.BUILDERS else None
        header: dict[str, Any] = {
            "backend": builder.name if builder is not None else self.backend,
            "target": target.export() if hasattr(target, "export") else str(target),
            "target_str": str(target),
            "entries": self.entry_names,
            "source": self.inspect_source(),
            "builder_format": builder.format if builder is not None else 1,
            "metadata": self.metadata,
        }
        data = self.binary.data if hasattr(self.binary, "data") else bytes(self.binary)
        write_container(path, header, data)
        return os.fspath(path)

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} backend={self.backend!r} target={str(self.target)!r} "
                f"functions={self.entry_names}>")


def write_container(path: str | os.PathLike[str], header: dict[str, Any], payload: bytes) -> None:
    """Write ``header`` and ``payload`` in the executable file format, atomically."""
    full = dict(header)
    full["format_version"] = FORMAT_VERSION
    full["payload_size"] = len(payload)
    full["payload_sha256"] = hashlib.sha256(payload).hexdigest()
    data = b"".join([MAGIC, b" ", str(FORMAT_VERSION).encode(), b"\n",
                     json.dumps(full, sort_keys=True).encode("utf-8"), b"\n", payload])
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


def read_container(path_or_bytes: str | os.PathLike[str] | bytes) -> tuple[dict[str, Any], bytes]:
    """(header, payload) of an exported executable; ValueError if it is not one or is damaged."""
    if isinstance(path_or_bytes, (bytes, bytearray)):
        data, name = bytes(path_or_bytes), "<bytes>"
    else:
        name = os.fspath(path_or_bytes)
        with open(name, "rb") as f:
            data = f.read()
    first, _, rest = data.partition(b"\n")
    if not first.startswith(MAGIC + b" "):
        raise ValueError(f"{name} is not an executable written by export_library "
                         f"(it does not start with {MAGIC.decode()!r})")
    try:
        version = int(first[len(MAGIC) + 1:])
    except ValueError:
        raise ValueError(f"{name}: malformed header line {first[:60]!r}") from None
    if version > FORMAT_VERSION:
        raise ValueError(f"{name} has executable format {version}; this tvm reads up to "
                         f"{FORMAT_VERSION}: upgrade tvm-core")
    line, _, payload = rest.partition(b"\n")
    try:
        header = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise ValueError(f"{name}: the header is damaged ({err})") from None
    size, digest = header.get("payload_size"), header.get("payload_sha256")
    if len(payload) != size or hashlib.sha256(payload).hexdigest() != digest:
        raise ValueError(f"{name} is truncated or corrupted: its payload does not match the "
                         f"checksum in its header ({len(payload)} bytes, expected {size})")
    return header, payload


def load_module(path: str | os.PathLike[str]) -> Executable:
    """Load a file written by :meth:`Executable.export_library`, through its target kind's
    builder. The file holds native code: load only files you trust (``docs/security.md``)."""
    header, payload = read_container(path)
    _backend_loader.ensure_builtin_backends()
    return _contract.load(header, payload, where=os.fspath(path))
