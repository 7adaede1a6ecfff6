"""``tvm.runtime.disco``: the seed's sessions of worker processes, one per GPU (``Session``,
``ProcessSession``, ``ThreadedSession``), which its multi-GPU NVSHMEM tests drive.

They are not provided here: this project launches a kernel on one device of the calling
process (a CUDA kernel's NVSHMEM calls compile and run on one PE). The names exist so that
code importing them loads; creating a session raises an error that says so.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ProcessSession", "Session", "ThreadedSession"]


class Session:
    """A disco session (not provided here; see the module's doc)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            f"tvm.runtime.disco.{type(self).__name__}: disco sessions (one worker process per "
            "GPU, as the seed's multi-GPU NVSHMEM tests use) are not provided; this project runs "
            "a kernel on one device of the calling process")


class ProcessSession(Session):
    """A disco session of worker processes (not provided here)."""


class ThreadedSession(Session):
    """A disco session of worker threads (not provided here)."""
