"""Adreno's device access is the OpenCL backend's (pyopencl; the device the target's
``device_type``/``platform`` pick) or the Vulkan backend's. Here so that the backend has the file
layout every backend has."""

from __future__ import annotations

__all__: list[str] = []
