"""Work folders of compiles, and files that exist only while this process runs.

Every folder is made under one private root, ``$TMPDIR/tvm-work-<uid>/`` (mode 0700), named
``<prefix><pid>-<random>``. A compile removes its folder when it is done (a failed one keeps it,
so the command in its error can be run again); a process that was killed cannot, so the first
work folder a process makes sweeps the folders of processes that no longer exist, once they are
older than :data:`STALE_S`. Files needed only while the process runs (the binaries of
``TVM_CACHE=0``) go into one folder per process that is removed at exit.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import stat
import tempfile
import threading
import time
from pathlib import Path

__all__ = ["STALE_S", "process_file", "sweep_stale", "work_folder", "work_root"]

#: a dead process's work folder is removed once it is this old (seconds)
STALE_S = 600.0
_NAME = re.compile(r"(\d+)-[A-Za-z0-9_]{8}$")  # <prefix><pid>-<mkdtemp's 8 characters>
_lock = threading.RLock()
_swept = False
_process_folder: Path | None = None


def work_root() -> Path | None:
    """The private root of work folders, or None when it cannot be made safely (another user
    owns it, or it is not a real directory): then folders go straight into ``$TMPDIR``."""
    getuid = getattr(os, "getuid", None)
    root = Path(tempfile.gettempdir()) / f"tvm-work-{getuid() if getuid else 'user'}"
    with contextlib.suppress(FileExistsError):
        os.mkdir(root, 0o700)
    try:
        st = os.lstat(root)
    except OSError:
        return None
    owned = getuid is None or st.st_uid == getuid()
    if not stat.S_ISDIR(st.st_mode) or not owned or stat.S_IMODE(st.st_mode) & 0o077:
        return None
    return root


def work_folder(prefix: str = "tvm-") -> Path:
    """A new private folder for one compile; remove it with ``shutil.rmtree`` when done."""
    root = work_root()
    if root is not None:
        sweep_stale(root)
    folder = tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=root)
    return Path(folder)


def sweep_stale(root: Path, *, force: bool = False) -> list[Path]:
    """Remove the folders under ``root`` of processes that no longer run (older than
    :data:`STALE_S`); once per process unless ``force``. Returns what was removed."""
    global _swept
    with _lock:
        if _swept and not force:
            return []
        _swept = True
    removed = []
    now = time.time()
    for child in root.iterdir() if root.is_dir() else ():
        m = _NAME.search(child.name)
        if m is None or _alive(int(m.group(1))):
            continue
        try:
            st = os.lstat(child)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and now - st.st_mtime >= STALE_S:
            shutil.rmtree(child, ignore_errors=True)
            removed.append(child)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def process_file(payload: bytes, suffix: str = ".bin") -> Path:
    """A file holding ``payload`` that is removed when this process exits."""
    global _process_folder
    with _lock:
        if _process_folder is None or not _process_folder.is_dir():
            _process_folder = work_folder("tvm-nocache-")
            atexit.register(shutil.rmtree, _process_folder, True)
        folder = _process_folder
    fd, name = tempfile.mkstemp(suffix=suffix, dir=folder)
    with os.fdopen(fd, "wb") as f:
        f.write(payload)
    return Path(name)
