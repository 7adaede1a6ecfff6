"""Streams, events and graphs of the CUDA emulator's device, named as ``torch.cuda`` names
them (``Stream``, ``stream``, ``current_stream``, ``Event``, ``CUDAGraph``, ``graph``,
``synchronize``), so code written against torch's CUDA streams reads the same against these.

The model:

* a :class:`Stream` is a FIFO of work (kernel launches, host functions, event records, waits
  on events) that one worker thread runs in order, asynchronously to the host: a launch on a
  stream returns at once, and what it writes is there after the stream is synchronized, or
  for work queued behind it on the same stream;
* the device's default stream (:data:`DEFAULT`) runs each piece of work when it is issued, on
  the issuing thread (as a GPU does with ``CUDA_LAUNCH_BLOCKING=1``): a launch on it returns
  with its results written and its errors raised. Side streams do not wait for it, nor it for
  them (torch's streams are non-blocking ones) except through events (``wait_stream``);
* a launch's stream follows :func:`launch_stream`: the ``stream=`` it is given, else the
  calling thread's current stream (``with stream(s):``), else the default stream, the rule
  of :func:`tvm_backend_cuda.streams.launch_stream` with the emulator's current stream in
  place of torch's;
* an :class:`Event` recorded on a stream completes when the work issued there before it has
  run; its time is taken then (``elapsed_time`` between two, in ms);
* ``with graph(g):`` captures: the launches and host functions issued on the capturing stream
  are recorded into ``g`` instead of running, and ``g.replay()`` issues them again, in order,
  on the current stream (arrays are read and written when the replay runs, as a GPU graph's
  kernels read their pointers' memory);
* an error of work on a side stream (a bounds or race report of a kernel) is kept and raised
  by the next ``synchronize`` of that stream (or of the device); the work queued behind it on
  that stream is skipped, its events still complete.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["DEFAULT", "CUDAGraph", "Event", "Stream", "current_stream", "graph", "host",
           "launch_stream", "stream", "synchronize"]

_Work = Callable[[], None]
#: a stream's worker thread ends after this long with nothing to run (started again on demand)
_IDLE_SECONDS = 1.0


class Stream:
    """An emulated CUDA stream (module docstring): work runs in issue order on its worker."""

    def __init__(self, *, blocking_with_host: bool = False) -> None:
        self._inline = blocking_with_host
        self._queue: queue.Queue[tuple[_Work, bool]] = queue.Queue()
        self._worker: threading.Thread | None = None
        self._start = threading.Lock()
        self._error: BaseException | None = None
        #: while captured into a graph, the list its work is recorded into
        self._capture: list[_Work] | None = None
        _ALL.add(self)

    def __repr__(self) -> str:
        return "<emulated CUDA stream (default)>" if self._inline else \
            f"<emulated CUDA stream 0x{id(self):x}>"

    # -- issuing -------------------------------------------------------------------------------

    def submit(self, work: _Work, *, always: bool = False) -> None:
        """Issue ``work`` (a kernel launch or host function) on this stream; ``always``: run it
        even after an earlier error of the stream (event records and waits)."""
        if self._capture is not None:
            self._capture.append(work)
            return
        if self._inline:
            work()
            return
        with self._start:  # the worker stops when idle; one is started again here
            self._queue.put((work, always))
            if self._worker is None:
                self._worker = threading.Thread(target=self._run, daemon=True,
                                                name=f"tvm-cuda-emu-stream-{id(self):x}")
                self._worker.start()

    def launch_host_func(self, fn: Callable[[], Any]) -> None:
        """Run ``fn()`` on this stream, after the work issued before it (``cudaLaunchHostFunc``)."""
        def run() -> None:
            fn()

        self.submit(run)

    def _run(self) -> None:
        while True:
            try:
                work, always = self._queue.get(timeout=_IDLE_SECONDS)
            except queue.Empty:
                with self._start:
                    if self._queue.empty():
                        self._worker = None
                        return
                continue
            try:
                if always or self._error is None:
                    work()
            except BaseException as exc:  # noqa: BLE001 - kept, raised by synchronize
                if self._error is None:
                    self._error = exc
            finally:
                self._queue.task_done()

    # -- ordering ------------------------------------------------------------------------------

    def wait_event(self, event: Event) -> None:
        """Work issued here after this waits for ``event``'s last record to complete."""
        done = event._done
        if done is not None:
            def wait() -> None:
                done.wait()

            self.submit(wait, always=True)

    def wait_stream(self, other: Stream) -> None:
        """Work issued here after this waits for the work issued on ``other`` so far."""
        self.wait_event(other.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        event = Event() if event is None else event
        event.record(self)
        return event

    def query(self) -> bool:
        """Whether all work issued here has run."""
        return self._inline or self._queue.unfinished_tasks == 0

    def synchronize(self) -> None:
        """Wait for the work issued here; raise the first error it had (then forget it)."""
        if not self._inline:
            self._queue.join()
        error, self._error = self._error, None
        if error is not None:
            raise error


#: every stream made (weakly), for :func:`synchronize`
_ALL: weakref.WeakSet[Stream] = weakref.WeakSet()
#: the emulated device's default stream: work runs as it is issued (module docstring)
DEFAULT = Stream(blocking_with_host=True)


class _Current(threading.local):
    stream: Stream = DEFAULT


_CURRENT = _Current()


def current_stream(device: Any = None) -> Stream:
    """The calling thread's current stream (the default stream unless ``with stream(s):``)."""
    return _CURRENT.stream


@contextlib.contextmanager
def stream(s: Stream | None) -> Iterator[None]:
    """Make ``s`` the calling thread's current stream in the block (None: leave it)."""
    if s is None:
        yield
        return
    before, _CURRENT.stream = _CURRENT.stream, s
    try:
        yield
    finally:
        _CURRENT.stream = before


_make_current = stream


def launch_stream(explicit: Any = None) -> Stream:
    """The stream of an emulated launch: ``explicit`` when given, else the calling thread's
    current stream (the default stream unless ``with stream(s):``)."""
    if explicit is None:
        return _CURRENT.stream
    if isinstance(explicit, Stream):
        return explicit
    raise TypeError(
        f"cannot use {type(explicit).__name__} as a stream of the CUDA emulator; pass a "
        "tvm_backend_cuda.emulated_streams.Stream (a CUDA stream orders GPU work only)")


def host(fn: Callable[[], Any]) -> None:
    """Run host work ``fn()`` on the current stream, in order with the launches there (on the
    GPU, torch's operations are queued on torch's current stream by themselves)."""
    current_stream().launch_host_func(fn)


def synchronize() -> None:
    """Wait for the work of every stream; raise the first error one had."""
    first: BaseException | None = None
    for s in list(_ALL):
        try:
            s.synchronize()
        except BaseException as exc:  # noqa: BLE001 - the others are waited for first
            first = first or exc
    if first is not None:
        raise first


class Event:
    """An emulated CUDA event: ``record(stream)`` completes when the work issued on the
    stream before it has run (default: the current stream)."""

    def __init__(self, enable_timing: bool = False, **_: Any) -> None:
        self.enable_timing = enable_timing
        self._done: threading.Event | None = None
        self._time: float | None = None

    def record(self, stream: Stream | None = None) -> None:
        s = current_stream() if stream is None else stream
        done = self._done = threading.Event()
        self._time = None

        def complete() -> None:
            self._time = time.perf_counter()
            done.set()

        s.submit(complete, always=True)

    def query(self) -> bool:
        return self._done is None or self._done.is_set()

    def synchronize(self) -> None:
        if self._done is not None:
            self._done.wait()

    def wait(self, stream: Stream | None = None) -> None:
        (current_stream() if stream is None else stream).wait_event(self)

    def elapsed_time(self, end: Event) -> float:
        """Milliseconds from this event's completion to ``end``'s (both recorded with
        ``enable_timing=True`` and completed)."""
        if not (self.enable_timing and end.enable_timing):
            raise RuntimeError("both events must be created with enable_timing=True")
        if self._time is None or end._time is None:
            raise RuntimeError("both events must be recorded and completed "
                               "(synchronize the later one first)")
        return (end._time - self._time) * 1000.0


class CUDAGraph:
    """Work captured by :func:`graph`, issued again by :meth:`replay`."""

    def __init__(self) -> None:
        self._work: list[_Work] | None = None

    def replay(self) -> None:
        if self._work is None:
            raise RuntimeError("this graph has not been captured")
        s = current_stream()
        for work in self._work:
            s.submit(work)


@contextlib.contextmanager
def graph(g: CUDAGraph, stream: Stream | None = None) -> Iterator[CUDAGraph]:
    """Capture the work issued on ``stream`` (default: a new one, made current) into ``g``;
    nothing captured runs until ``g.replay()``."""
    s = Stream() if stream is None else stream
    if s._inline:
        raise RuntimeError("the default stream cannot be captured; capture a side stream")
    s.synchronize()
    captured: list[_Work] = []
    s._capture = captured
    try:
        with _make_current(s):
            yield g
    finally:
        s._capture = None
    g._work = captured
