"""The on-disk compile cache: content-addressed binaries under ``~/.cache/tvm``.

``TVM_CACHE_DIR`` moves the cache; ``TVM_CACHE=0`` turns it off. A backend keys an entry by
everything its binary depends on (:func:`cache_key`: generated source, target, compiler options
and compiler version); a structural hash is not stable across processes, so keys hash text.

Each entry is two files under ``<root>/<namespace>/<key[:2]>/``: ``<key>.bin`` (the binary) and
``<key>.json`` (its size and SHA-256, written last, so it marks the entry complete). Both are
written to a temporary file and renamed into place (atomic on POSIX). Before an entry is used
its checksum is verified; a truncated or corrupted entry is deleted and reported as a miss, so
the caller rebuilds it; it is never loaded.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CacheEntry", "CompileCache", "cache_dir", "cache_enabled", "cache_key", "cache_size",
           "clear_cache", "iter_entries", "prune_cache", "remove_entry"]

CACHE_FORMAT = 1
_LOG = logging.getLogger(__name__)


def cache_dir() -> Path:
    """``$TVM_CACHE_DIR``, else ``~/.cache/tvm`` (``$XDG_CACHE_HOME/tvm`` when that is set)."""
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


class CompileCache:
    """One namespace of the cache (one per backend: ``CompileCache("c")``)."""

    def __init__(self, namespace: str, root: str | os.PathLike[str] | None = None) -> None:
        self.namespace = namespace
        self._root = Path(root) if root is not None else None
        self.stats = {"hits": 0, "misses": 0, "corrupt": 0}

    @property
    def directory(self) -> Path:
        return (self._root if self._root is not None else cache_dir()) / self.namespace

    def paths(self, key: str) -> tuple[Path, Path]:
        """(binary, metadata) file paths of ``key``."""
        folder = self.directory / key[:2]
        return folder / f"{key}.bin", folder / f"{key}.json"

    def get_path(self, key: str) -> Path | None:
        """The verified binary file of ``key``, or None (missing, or corrupt and now removed)."""
        if not cache_enabled():
            return None
        bin_path, meta_path = self.paths(key)
        if not meta_path.exists():
            self.stats["misses"] += 1
            _LOG.debug("cache miss %s/%s", self.namespace, key)
            return None
        if not self._verify(key, bin_path, meta_path):
            self.stats["corrupt"] += 1
            self.stats["misses"] += 1
            for path in (meta_path, bin_path):
                with contextlib.suppress(OSError):
                    path.unlink()
            return None
        self.stats["hits"] += 1
        _LOG.debug("cache hit %s/%s", self.namespace, key)
        return bin_path

    def get(self, key: str) -> bytes | None:
        path = self.get_path(key)
        return None if path is None else path.read_bytes()

    def metadata(self, key: str) -> dict[str, Any]:
        """The ``meta`` dict stored with ``key`` (empty if none)."""
        try:
            return dict(json.loads(self.paths(key)[1].read_text("utf-8")).get("meta") or {})
        except (OSError, ValueError, AttributeError):
            return {}

    def put(self, key: str, payload: bytes, meta: dict[str, Any] | None = None) -> Path:
        """Store ``payload`` under ``key`` atomically; returns the binary's path."""
        bin_path, meta_path = self.paths(key)
        record = {"format": CACHE_FORMAT, "key": key, "size": len(payload),
                  "sha256": hashlib.sha256(payload).hexdigest(), "meta": meta or {}}
        if not cache_enabled():
            # Still needs a file (e.g. to dlopen): write it to a private temporary place.
            fd, tmp = tempfile.mkstemp(prefix="tvm-nocache-", suffix=".bin")
            with os.fdopen(fd, "wb") as f:
                f.write(payload)
            return Path(tmp)
        bin_path.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(bin_path, payload)
        _atomic_write(meta_path, json.dumps(record, sort_keys=True).encode("utf-8"))
        return bin_path

    @staticmethod
    def _verify(key: str, bin_path: Path, meta_path: Path) -> bool:
        try:
            record = json.loads(meta_path.read_text("utf-8"))
            if record.get("format") != CACHE_FORMAT or record.get("key") != key:
                return False
            payload = bin_path.read_bytes()
        except (OSError, ValueError, AttributeError):
            return False
        return (len(payload) == record.get("size")
                and hashlib.sha256(payload).hexdigest() == record.get("sha256"))


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
