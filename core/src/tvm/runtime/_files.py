"""Reading files that hold code (exported executables, cache entries) without trusting them: only
regular files, never more than a size bound, and opened so that a FIFO cannot block."""

from __future__ import annotations

import os
import stat

from ..error import ExecutableFileError

__all__ = ["file_kind", "read_regular"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # opening a FIFO for reading must not wait for a writer
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_CHUNK = 1 << 20


def file_kind(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, in words."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"


def read_regular(path: str | os.PathLike[str], *, limit: int | None = None,
                 follow_symlinks: bool = False) -> bytes:
    """The bytes of ``path`` when it is a regular file of at most ``limit`` bytes.

    The file is checked on the open descriptor before anything is read: a FIFO, a device or a
    directory (or, unless ``follow_symlinks``, a symbolic link) raises
    :class:`~tvm.error.ExecutableFileError`, and so does a file larger than ``limit`` (checked
    again while reading, for a file that grows). ``FileNotFoundError`` and other ``OSError``\\ s
    of ``open`` pass through.
    """
    flags = os.O_RDONLY | _NONBLOCK | _CLOEXEC | (0 if follow_symlinks else _NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        if not follow_symlinks and os.path.islink(path):
            raise ExecutableFileError(f"{os.fspath(path)} is a symbolic link; it is not "
                                      "followed") from None
        raise err from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ExecutableFileError(f"{os.fspath(path)} is {file_kind(st.st_mode)}, not a "
                                      "regular file")
        if limit is not None and st.st_size > limit:
            raise ExecutableFileError(f"{os.fspath(path)} is {st.st_size} bytes, more than the "
                                      f"{limit} bytes read from such a file")
        return _read_all(fd, path, limit)
    finally:
        os.close(fd)


def _read_all(fd: int, path: str | os.PathLike[str], limit: int | None) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if limit is not None and total > limit:
            raise ExecutableFileError(f"{os.fspath(path)} grew past {limit} bytes while it was "
                                      "read")
        chunks.append(chunk)
