"""``PopenWorker``: run a function in a child process and wait for its result, as the seed's
``tvm.support.popen_pool.PopenWorker`` does (tests use it to keep a crashing or hanging kernel
out of the test process).

The child is a fork of the caller (``multiprocessing``'s ``fork`` context), so the function may
be a closure; its result and any exception it raises must be picklable to come back.
"""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Callable
from typing import Any

__all__ = ["PopenWorker"]


def _child(conn: Any, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    try:
        conn.send((True, fn(*args, **kwargs)))
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the parent
        conn.send((False, (exc, traceback.format_exc())))
    finally:
        conn.close()


class PopenWorker:
    """``w.send(fn, args, kwargs, timeout)`` starts ``fn`` in a child process; ``w.recv()``
    returns what it returned, raises what it raised, or raises ``TimeoutError`` (the child is
    killed) once ``timeout`` seconds have passed."""

    def __init__(self) -> None:
        self._proc: Any = None
        self._conn: Any = None
        self._timeout: float | None = None

    def send(self, fn: Callable[..., Any], args: tuple[Any, ...] = (),
             kwargs: dict[str, Any] | None = None, timeout: float | None = None) -> None:
        if self._proc is not None:
            raise RuntimeError("PopenWorker.send: the previous call's result was not received; "
                               "call recv() first")
        ctx = multiprocessing.get_context("fork")
        parent, child = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(target=_child, args=(child, fn, tuple(args), dict(kwargs or {})),
                                 daemon=True)
        self._proc.start()
        child.close()
        self._conn, self._timeout = parent, timeout

    def recv(self) -> Any:
        if self._proc is None:
            raise RuntimeError("PopenWorker.recv: nothing was sent; call send(fn) first")
        proc, conn, self._proc = self._proc, self._conn, None
        try:
            if not conn.poll(self._timeout):
                proc.kill()
                raise TimeoutError(f"PopenWorker: the function did not return within "
                                   f"{self._timeout} s; the worker was killed")
            try:
                ok, value = conn.recv()
            except EOFError:
                proc.join()
                raise ChildProcessError(f"PopenWorker: the worker exited with code "
                                        f"{proc.exitcode} before returning a result") from None
        finally:
            conn.close()
            proc.join(timeout=5)
        if ok:
            return value
        exc, trace = value
        raise exc from ChildProcessError(f"in the worker process:\n{trace}")

    def kill(self) -> None:
        """Stop a running call (its result is dropped)."""
        if self._proc is not None:
            self._proc.kill()
            self._proc.join()
            self._conn.close()
            self._proc = None
