"""Checks of target attributes that several backends' ``tags.py`` validators make alike.

A GPU-like target kind has ``max_threads_per_block`` (the largest block the device runs) and
``max_num_threads`` (the block size the compiler assumes); the second cannot exceed the first,
and a vendor may cap the first. :func:`check_thread_counts` is that check, with one message for
every backend.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["check_thread_counts"]


def check_thread_counts(attrs: Mapping[str, Any], *, most: int | None = None,
                        device: str = "") -> None:
    """Raise ``ValueError`` unless ``max_num_threads <= max_threads_per_block`` and, with
    ``most``, ``1 <= max_threads_per_block <= most`` (``device`` names the devices in the
    message: ``"AMD GPUs"``)."""
    threads = attrs["max_threads_per_block"]
    if most is not None and not 1 <= threads <= most:
        raise ValueError(f"max_threads_per_block must be 1..{most} on {device}, got {threads}")
    if attrs["max_num_threads"] > threads:
        raise ValueError(f"max_num_threads ({attrs['max_num_threads']}) exceeds "
                         f"max_threads_per_block ({threads})")
