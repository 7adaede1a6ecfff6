"""The runtime shared by tvm's CPU emulators of GPU kernels (Metal's, CUDA's).

``tvm_emu_fibers.h`` (in this folder, :data:`HEADER_DIR`) is the execution model: blocks spread
over OS threads, each thread of a block a fiber, barriers, warp collectives, waits, and the
checks (barrier divergence, deadlock) with the failure codes of :data:`FAILURES`. A dialect's
shim includes it; its compiled launcher returns one of those codes and a message, which
:func:`raise_for` turns into the exception.

:func:`run_isolated` runs a launch in a forked child on shared memory, so a kernel that crashes
(an access no check caught, a fiber stack overflow) raises in the caller instead of killing it.

Nothing here imports numpy at import time (``import tvm`` stays light).
"""

from __future__ import annotations

import contextlib
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

__all__ = ["FAILURES", "HEADER_DIR", "header_digest", "raise_for", "run_isolated"]

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


def run_isolated(launch: Callable[[dict[int, int]], None], arrays: Mapping[int, Any],
                 *, what: str = "the kernel") -> None:
    """Run ``launch(pointers)`` in a forked child, on copies of ``arrays`` (numpy arrays by
    argument index) in shared memory, then copy them back; ``pointers`` maps each index to the
    address of its copy. A tvm error raised in the child is raised again here with its class
    and message; a child killed by a signal raises :class:`~tvm.error.EmulatorError`, and the
    arrays are unchanged. Without ``os.fork`` the launch runs in this process."""
    import numpy as np

    if not hasattr(os, "fork"):
        launch({i: int(a.ctypes.data) for i, a in arrays.items()})
        return
    layout, total = {}, 0
    for index, arr in arrays.items():
        layout[index] = total
        total += (arr.nbytes + 63) // 64 * 64
    shm = mmap.mmap(-1, max(total, 64))  # MAP_SHARED | MAP_ANONYMOUS
    staged: dict[int, Any] = {}
    try:
        for index, arr in arrays.items():
            staged[index] = np.frombuffer(shm, dtype=arr.dtype, count=arr.size,
                                          offset=layout[index])
            staged[index][...] = arr.reshape(-1)
        pointers = {i: int(a.ctypes.data) for i, a in staged.items()}
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: never returns into the caller's Python code
            code = 0
            faulthandler.disable()  # a crash is reported by the parent, not dumped here
            os.close(read_end)
            try:
                launch(pointers)
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
        for index, arr in arrays.items():
            arr.reshape(-1)[...] = staged[index]
    finally:
        staged.clear()
        with contextlib.suppress(BufferError):  # a view still alive: it keeps the mapping
            shm.close()
