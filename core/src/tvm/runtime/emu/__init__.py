"""The runtime shared by tvm's CPU emulators of GPU kernels (Metal's, CUDA's).

``tvm_emu_fibers.h`` (in this folder, :data:`HEADER_DIR`) is the execution model: blocks spread
over OS threads, each thread of a block a fiber, barriers, warp collectives, waits, and the
checks (barrier divergence, deadlock) with the failure codes of :data:`FAILURES`. A dialect's
shim includes it; its compiled launcher returns one of those codes and a message, which
:func:`raise_for` turns into the exception.

:func:`run_isolated` runs a launch in a forked child, which sends what the launch changed back
through shared memory, so a kernel that crashes (an access no check caught, a fiber stack
overflow) raises in the caller instead of killing it.

Nothing here imports numpy at import time (``import tvm`` stays light).
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import functools
import hashlib
import mmap
import os
import signal
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ... import error as _error

__all__ = ["FAILURES", "HEADER_DIR", "header_digest", "raise_for", "run_isolated",
           "split_top_level"]

HEADER_DIR = Path(__file__).resolve().parent

#: failure code of a launch (tvm_emu::Code) -> the exception raised for it
FAILURES: dict[int, type[_error.TVMError]] = {
    1: _error.EmulatorError,
    2: _error.BoundsCheckError,
    3: _error.BarrierDivergenceError,
    4: _error.DeadlockError,
    5: _error.RaceError,
    6: _error.NotModelledError,
}


@functools.cache
def header_digest() -> str:
    """A digest of the runtime's headers (part of every emulator build's cache key)."""
    h = hashlib.sha256()
    for path in sorted(HEADER_DIR.glob("*.h")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def raise_for(code: int, message: str, prefix: str = "") -> None:
    """Raise the exception of a launch's failure ``code`` (nothing for 0)."""
    if code == 0:
        return
    cls = FAILURES.get(code, _error.EmulatorError)
    raise cls(f"{prefix}{message}")


#: bytes of an array the child sends back at once (one flag each: an all-zero piece is not sent)
_PIECE = 1 << 20


def run_isolated(launch: Callable[[dict[int, int]], None], arrays: Mapping[int, Any],
                 *, what: str = "the kernel") -> None:
    """Run ``launch(pointers)`` in a forked child, on the child's copy-on-write view of
    ``arrays`` (contiguous numpy arrays by argument index; ``pointers`` maps each index to its
    address), and take back what the launch changed. A tvm error raised in the child is raised
    again here with its class and message; a child killed by a signal raises
    :class:`~tvm.error.EmulatorError`, and the arrays are unchanged. Without ``os.fork`` the
    launch runs in this process.

    The child sends each array back through shared memory in pieces of :data:`_PIECE` bytes,
    skipping the all-zero ones, and this process writes only the pieces that differ: an input
    the kernel only reads is neither copied nor dirtied, and zero pages stay unallocated (a
    3 GiB zero-filled input costs no memory)."""
    import numpy as np

    if not hasattr(os, "fork"):
        launch({i: int(a.ctypes.data) for i, a in arrays.items()})
        return
    views = {i: _bytes_of(a, i, what) for i, a in arrays.items()}
    layout, total = {}, 0
    for index, view in views.items():
        layout[index] = total
        total += -(-view.size // _PIECE) * _PIECE
    shm = mmap.mmap(-1, max(total, 1))  # MAP_SHARED | MAP_ANONYMOUS: untouched pages cost nothing
    sent = mmap.mmap(-1, max(total // _PIECE, 1))  # a flag per piece: the child sent it
    out = np.frombuffer(shm, dtype=np.uint8)
    flags = np.frombuffer(sent, dtype=np.uint8)
    try:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: never returns into the caller's Python code
            code = 0
            faulthandler.disable()  # a crash is reported by the parent, not dumped here
            os.close(read_end)
            try:
                launch({i: int(a.ctypes.data) for i, a in arrays.items()})
                _send_back(views, layout, out, flags)
            except _error.TVMError as exc:  # the parent raises it again
                os.write(write_end, f"{type(exc).__name__}\n{exc}".encode()[:65536])
                code = 4
            except BaseException as exc:  # noqa: BLE001 - reported through the exit code
                os.write(write_end, f"EmulatorError\n{type(exc).__name__}: {exc}".encode())
                code = 4
            os._exit(code)
        os.close(write_end)
        with os.fdopen(read_end, "rb") as pipe:
            child_error = pipe.read().decode(errors="replace")
        _, status = os.waitpid(pid, 0)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 4:
            name, _, message = child_error.partition("\n")
            cls = getattr(_error, name, None)
            if not (isinstance(cls, type) and issubclass(cls, _error.TVMError)):
                cls = _error.EmulatorError
            raise cls(message)
        if os.WIFSIGNALED(status):
            sig = signal.Signals(os.WTERMSIG(status)).name
            raise _error.EmulatorError(
                f"{what} crashed with {sig} (an access outside every checked buffer, or a fiber "
                "stack overflow); the arrays are unchanged")
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            raise _error.EmulatorError(f"{what} failed in the worker process (exit status "
                                       f"{status}); its error is on stderr")
        _take_back(views, layout, out, flags)
    finally:
        del out, flags
        for mapping in (shm, sent):
            with contextlib.suppress(BufferError):  # a view still alive: it keeps the mapping
                mapping.close()


def _bytes_of(arr: Any, index: int, what: str) -> Any:
    """The bytes of the contiguous numpy array ``arr``, as a writable uint8 view of its memory."""
    import numpy as np

    if not arr.flags.c_contiguous:
        raise ValueError(f"{what}: argument {index} is not a contiguous array")
    return np.ctypeslib.as_array((ctypes.c_uint8 * max(arr.nbytes, 1)).from_address(
        arr.ctypes.data))[:arr.nbytes]


def _send_back(views: Mapping[int, Any], layout: Mapping[int, int], out: Any, flags: Any) -> None:
    """In the child, after the launch: each array's pieces that are not all zero, into ``out``."""
    for index, view in views.items():
        base = layout[index]
        for at in range(0, view.size, _PIECE):
            piece = view[at:at + _PIECE]
            if piece.any():
                out[base + at:base + at + piece.size] = piece
                flags[(base + at) // _PIECE] = 1


def _take_back(views: Mapping[int, Any], layout: Mapping[int, int], out: Any,
               flags: Any) -> None:
    """Write into each array the pieces the child's differ in (a piece not sent is zeros)."""
    import numpy as np

    for index, view in views.items():
        base = layout[index]
        for at in range(0, view.size, _PIECE):
            piece = view[at:at + _PIECE]
            if flags[(base + at) // _PIECE]:
                result = out[base + at:base + at + piece.size]
                if not np.array_equal(piece, result):
                    piece[...] = result
            elif piece.any():
                piece[...] = 0


def split_top_level(text: str, sep: str = ",", opening: str = "([{<", closing: str = ")]}>"
                    ) -> list[tuple[int, str]]:
    """``text`` split at the ``sep`` characters outside brackets (C++ parameter lists,
    attribute lists, template arguments), as ``(offset, piece)`` pairs; one piece when there is
    no top-level ``sep``. The emulators read the declarations of generated source with it."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in opening:
            depth += 1
        elif ch in closing:
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append((start, text[start:i]))
            start = i + 1
    parts.append((start, text[start:]))
    return parts
