"""The on-disk compile cache: content-addressed binaries under ``~/.cache/tvm``.

One cache for every backend and every stage that caches (host shared objects, cubins, NVSHMEM
links, the Metal emulator's objects): :func:`compile_cache` gives the namespace of one kind of
entry. ``TVM_CACHE_DIR`` moves the cache (else ``$XDG_CACHE_HOME/tvm``, else
``~/.cache/tvm``); ``TVM_CACHE=0`` turns it off. A key hashes everything a binary depends on
(:func:`cache_key`: generated source, target, options, compiler version); a structural hash is
not stable across processes, so keys hash text.

Each entry is two files under ``<root>/<namespace>/<key[:2]>/``: ``<key>.bin`` (the binary) and
``<key>.json`` (its record: key, size, the binary's SHA-256, the caller's metadata, and a digest
of all of these; written last, so it marks the entry complete). Both are written to a temporary
file and renamed into place (atomic on POSIX). Reading trusts nothing on disk: files are opened
without following symbolic links and only when they are regular files; the key recorded inside
the entry must be the key asked for, the record must match its digest and the binary its
SHA-256. A lookup by content (:meth:`CompileCache.file_for`, the ``loaded`` namespace) also
requires the binary to hash to the key itself, so no entry can stand in for another content.
An entry failing any of these is removed and reported as a miss, so the caller rebuilds it.

A cache that cannot be used (a read-only or missing directory, a full disk) never fails a
build: the build goes on without the cache, with one warning per process and namespace.

The cache holds native code that tvm loads and runs: it must be writable only by you (see
``docs/security.md``). Every directory the cache creates (the root and its parents included) is
created with mode 0o700, whatever the umask; existing directories are left as they are.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import _logging
from ..error import ExecutableFileError, warn
from ._files import read_regular
from .workdir import process_file

__all__ = ["CacheEntry", "CompileCache", "cache_dir", "cache_enabled", "cache_key", "cache_size",
           "clear_cache", "compile_cache", "iter_entries", "prune_cache", "remove_entry"]

CACHE_FORMAT = 2  # 2: the record carries a digest of itself (issue 26)
_DEBUG = 10  # logging.DEBUG: this module is imported by `import tvm`, logging is not
_MAX_META = 1 << 20  # a metadata file larger than this is not ours


def cache_dir() -> Path:
    """``$TVM_CACHE_DIR``, else ``$XDG_CACHE_HOME/tvm``, else ``~/.cache/tvm``."""
    explicit = os.environ.get("TVM_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tvm"


def cache_enabled() -> bool:
    return os.environ.get("TVM_CACHE", "1").strip().lower() not in ("0", "false", "no", "off")


def cache_key(*parts: Any) -> str:
    """SHA-256 of the JSON form of ``parts`` (strings, numbers, lists, dicts)."""
    text = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_CACHES: dict[str, CompileCache] = {}
_CACHES_LOCK = threading.Lock()


def compile_cache(namespace: str) -> CompileCache:
    """The process-wide :class:`CompileCache` of ``namespace`` (one object per namespace, so
    its hit/miss statistics add up across callers)."""
    cache = _CACHES.get(namespace)
    if cache is None:
        with _CACHES_LOCK:
            cache = _CACHES.setdefault(namespace, CompileCache(namespace))
    return cache


class CompileCache:
    """One namespace of the cache. Use :func:`compile_cache` rather than constructing one."""

    def __init__(self, namespace: str, root: str | os.PathLike[str] | None = None) -> None:
        if not namespace or "/" in namespace or namespace.startswith("."):
            raise ValueError(f"invalid cache namespace {namespace!r}")
        self.namespace = namespace
        self._root = Path(root) if root is not None else None
        self.stats = {"hits": 0, "misses": 0, "corrupt": 0}
        self.errors = 0  # writes that failed (the build went on without the cache)
        self._warned = False

    @property
    def directory(self) -> Path:
        return (self._root if self._root is not None else cache_dir()) / self.namespace

    def paths(self, key: str) -> tuple[Path, Path]:
        """(binary, metadata) file paths of ``key``."""
        if len(key) < 3 or not all(c in "0123456789abcdef" for c in key):
            raise ValueError(f"invalid cache key {key!r}: expected a hex digest")
        folder = self.directory / key[:2]
        return folder / f"{key}.bin", folder / f"{key}.json"

    # -- reading ----------------------------------------------------------------------------
    def get_path(self, key: str, *, content: bool = False) -> Path | None:
        """The verified binary file of ``key``, or None (off, missing, or bad and now removed).
        ``content=True``: ``key`` is the SHA-256 of the binary itself, and that is checked."""
        if not cache_enabled():
            return None
        bin_path, meta_path = self.paths(key)
        try:
            record = _read_json(meta_path)
        except FileNotFoundError:
            self.stats["misses"] += 1
            _logging.log(__name__, _DEBUG, "cache miss %s/%s", self.namespace, key)
            return None
        except (OSError, ValueError):
            record = None
        if record is None or not self._verify(key, record, bin_path, content):
            self.stats["corrupt"] += 1
            self.stats["misses"] += 1
            for path in (meta_path, bin_path):
                with contextlib.suppress(OSError):
                    path.unlink()
            return None
        self.stats["hits"] += 1
        _logging.log(__name__, _DEBUG, "cache hit %s/%s", self.namespace, key)
        return bin_path

    def get(self, key: str) -> bytes | None:
        path = self.get_path(key)
        if path is None:
            return None
        try:
            return read_regular(path)
        except (OSError, ExecutableFileError):
            return None

    def metadata(self, key: str) -> dict[str, Any]:
        """The ``meta`` dict stored with ``key`` (empty if none)."""
        try:
            record = _read_json(self.paths(key)[1])
            return dict(record.get("meta") or {})
        except (OSError, ValueError, AttributeError, TypeError):
            return {}

    # -- writing ----------------------------------------------------------------------------
    def put(self, key: str, payload: bytes, meta: dict[str, Any] | None = None) -> Path:
        """Store ``payload`` under ``key`` atomically; returns a file holding it (a private
        temporary file when the cache is off or unusable)."""
        bin_path, meta_path = self.paths(key)
        if not cache_enabled():
            return _private_file(payload)
        record: dict[str, Any] = {"format": CACHE_FORMAT, "key": key, "size": len(payload),
                                  "sha256": hashlib.sha256(payload).hexdigest(),
                                  "meta": meta or {}}
        record["digest"] = _record_digest(record)
        try:
            _make_dirs(bin_path.parent)
            _atomic_write(bin_path, payload)
            _atomic_write(meta_path, json.dumps(record, sort_keys=True).encode("utf-8"))
        except OSError as err:
            self._unusable(err)
            return _private_file(payload)
        return bin_path

    def file_for(self, payload: bytes) -> Path:
        """A file holding ``payload``, keyed by its own hash (for binaries that must be files
        to be loaded, e.g. a shared object read from an exported executable)."""
        key = hashlib.sha256(payload).hexdigest()
        return self.get_path(key, content=True) or self.put(key, payload)

    # -- helpers ----------------------------------------------------------------------------
    def _unusable(self, err: OSError) -> None:
        self.errors += 1
        if self._warned:
            return
        self._warned = True
        warn(f"tvm: the compile cache at {self.directory} cannot be used ({err}); compiling "
             "without it. Set TVM_CACHE_DIR to a writable folder, or TVM_CACHE=0 to silence "
             "this", RuntimeWarning)

    @staticmethod
    def _verify(key: str, record: Any, bin_path: Path, content: bool = False) -> bool:
        if not isinstance(record, dict):
            return False
        if record.get("format") != CACHE_FORMAT or record.get("key") != key:
            return False
        if record.get("digest") != _record_digest(record):
            return False  # the record (its metadata included) was changed after it was written
        if content and record.get("sha256") != key:
            return False  # a content lookup: the binary must be the one the key names
        try:
            payload = read_regular(bin_path)
        except (OSError, ExecutableFileError):
            return False
        return (len(payload) == record.get("size")
                and hashlib.sha256(payload).hexdigest() == record.get("sha256"))


def _record_digest(record: dict[str, Any]) -> str:
    """SHA-256 of an entry's record without its digest (the record holds the binary's SHA-256,
    so this covers the binary too)."""
    body = {k: v for k, v in record.items() if k != "digest"}
    try:
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    except ValueError:  # a circular structure cannot be a record we wrote
        return ""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- maintenance (the ``tvm cache`` command) ---------------------------------------------------


@dataclass(frozen=True)
class CacheEntry:
    """One complete entry on disk."""

    namespace: str
    key: str
    size: int
    mtime: float
    binary: Path
    meta: Path


def iter_entries(root: str | os.PathLike[str] | None = None) -> Iterator[CacheEntry]:
    """Every entry under the cache root (``cache_dir()`` by default), in no particular order."""
    base = Path(root) if root is not None else cache_dir()
    if not base.is_dir():
        return
    for meta in base.glob("*/??/*.json"):
        binary = meta.with_suffix(".bin")
        try:
            st_meta = os.lstat(meta)
            st_bin = os.lstat(binary)
        except OSError:
            continue
        if not (stat.S_ISREG(st_meta.st_mode) and stat.S_ISREG(st_bin.st_mode)):
            continue
        yield CacheEntry(meta.parent.parent.name, meta.stem, st_bin.st_size + st_meta.st_size,
                         max(st_bin.st_mtime, st_meta.st_mtime), binary, meta)


def remove_entry(entry: CacheEntry) -> None:
    """Delete one entry (its metadata first, so a half-removed entry reads as missing)."""
    for path in (entry.meta, entry.binary):
        with contextlib.suppress(OSError):
            path.unlink()


def cache_size(root: str | os.PathLike[str] | None = None) -> int:
    """Bytes taken by every regular file under the cache root (entries and leftovers)."""
    base = Path(root) if root is not None else cache_dir()
    total = 0
    for path in base.rglob("*") if base.is_dir() else ():
        with contextlib.suppress(OSError):
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode):
                total += st.st_size
    return total


def clear_cache(root: str | os.PathLike[str] | None = None) -> int:
    """Delete everything under the cache root; returns the bytes freed."""
    base = Path(root) if root is not None else cache_dir()
    freed = cache_size(base)
    for child in base.iterdir() if base.is_dir() else ():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                child.unlink()
    return freed


def prune_cache(max_bytes: int, root: str | os.PathLike[str] | None = None) -> list[CacheEntry]:
    """Delete the oldest entries until the entries take at most ``max_bytes``; returns what
    was deleted."""
    entries = sorted(iter_entries(root), key=lambda e: (e.mtime, e.namespace, e.key))
    total = sum(e.size for e in entries)
    removed = []
    for entry in entries:
        if total <= max_bytes:
            break
        remove_entry(entry)
        total -= entry.size
        removed.append(entry)
    return removed


# -- files --------------------------------------------------------------------------------------


def _read_json(path: Path) -> Any:
    try:
        return json.loads(read_regular(path, limit=_MAX_META).decode("utf-8"))
    except ExecutableFileError as err:
        raise OSError(str(err)) from None


def _make_dirs(path: Path) -> None:
    """Create ``path`` and its missing parents, each with mode 0o700 (``mkdir(parents=True)``
    gives the parents the umask's mode: group-writable under umask 002)."""
    missing: list[Path] = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            continue  # made by a concurrent writer (who made it 0o700 too)
        os.chmod(folder, 0o700)  # mkdir's mode is masked by the umask; 0o700 is the intent
    if not path.is_dir():
        raise NotADirectoryError(f"{path} is not a directory")


def _private_file(payload: bytes) -> Path:
    """A file holding ``payload`` for as long as this process runs (the cache is off)."""
    return process_file(payload)


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
