"""The stream of a launch (:func:`launch_stream`: the caller's, else torch's current one, else
the device's default) and cuda.core's ``launch``, each resolved on first use: cuda.core and torch
are not imported until a kernel runs, and a launch after the first looks up cached wrappers."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

# cuda.core Stream wrappers of foreign stream handles, one per handle (building one costs µs).
_STREAM_BY_HANDLE: dict[int, Any] = {}


def _wrap_stream(handle: int) -> Any:
    import cuda.core as cc

    s = cc.LEGACY_DEFAULT_STREAM if handle == 0 else cc.Stream.from_handle(handle)
    _STREAM_BY_HANDLE[handle] = s
    return s


def _torch_raw_stream_lazy(device: int) -> int:
    """Replaces itself with torch's raw current-stream getter on first use."""
    global _TORCH_RAW_STREAM
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is None:  # what Triton and Inductor use; fall back to the public API
        def raw(dev: int) -> int:
            return torch.cuda.current_stream(dev).cuda_stream
    _TORCH_RAW_STREAM = raw
    return raw(device)


_TORCH_RAW_STREAM: Callable[[int], int] = _torch_raw_stream_lazy


def torch_raw_stream_getter() -> Callable[[int], int]:
    """torch's raw current-stream getter (device index -> handle), resolved without calling it."""
    global _TORCH_RAW_STREAM
    if _TORCH_RAW_STREAM is _torch_raw_stream_lazy:
        import torch

        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if raw is None:
            def raw(dev: int) -> int:
                return torch.cuda.current_stream(dev).cuda_stream
        _TORCH_RAW_STREAM = raw
    return _TORCH_RAW_STREAM


def _launch_lazy(*args: Any) -> None:
    """Replaces itself with cuda.core.launch on first use (no import in the hot path)."""
    global _LAUNCH
    from cuda.core import launch

    _LAUNCH = launch
    launch(*args)


_LAUNCH: Callable[..., None] = _launch_lazy


def core_launch() -> Callable[..., None]:
    """``cuda.core.launch``, resolved (for callers that keep it in a closure)."""
    global _LAUNCH
    if _LAUNCH is _launch_lazy:
        from cuda.core import launch

        _LAUNCH = launch
    return _LAUNCH


def core_stream(handle: int) -> Any:
    """The cached cuda.core Stream wrapping a raw stream handle."""
    s = _STREAM_BY_HANDLE.get(handle)
    return s if s is not None else _wrap_stream(handle)


_DEFAULT_STREAMS: dict[int, Any] = {}


def launch_stream(device: int, stream: Any = None) -> Any:
    """The cuda.core Stream of a launch on ``device``, the one rule of every launch of this
    backend: ``stream`` when given (a cuda.core Stream, a torch or cupy stream, anything with
    ``__cuda_stream__``, or a handle), else the caller's current torch stream on that device
    when torch is imported (whatever the arguments are), else cuda.core's default stream of the
    device. So a launch is ordered with the caller's torch work, is captured by
    ``torch.cuda.graph`` and is bracketed by CUDA events recorded on torch's stream."""
    if stream is not None:
        return _explicit_stream(stream)
    if "torch" in sys.modules:
        handle = _TORCH_RAW_STREAM(device)
        s = _STREAM_BY_HANDLE.get(handle)
        return s if s is not None else _wrap_stream(handle)
    s = _DEFAULT_STREAMS.get(device)
    if s is None:
        from cuda.core import Device

        s = _DEFAULT_STREAMS[device] = Device(device).default_stream
    return s


def _explicit_stream(stream: Any) -> Any:
    import cuda.core as cc

    if isinstance(stream, cc.Stream):
        return stream
    if isinstance(stream, int):
        handle = stream
    elif hasattr(stream, "__cuda_stream__"):
        handle = int(stream.__cuda_stream__()[1])
    elif hasattr(stream, "cuda_stream"):  # torch.cuda.Stream
        handle = int(stream.cuda_stream)
    elif hasattr(stream, "ptr"):  # cupy Stream
        handle = int(stream.ptr)
    else:
        raise TypeError(
            f"cannot use {type(stream).__name__} as a CUDA stream; pass a cuda.core Stream, a "
            "torch or cupy stream, or a stream handle (int)"
        )
    s = _STREAM_BY_HANDLE.get(handle)
    return s if s is not None else _wrap_stream(handle)
