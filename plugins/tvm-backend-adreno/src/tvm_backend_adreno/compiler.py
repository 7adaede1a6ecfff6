"""Adreno's compile stage is the OpenCL or Vulkan backend's (the kind of the tag's target).
Here so that the backend has the file layout every backend has."""

from __future__ import annotations

__all__: list[str] = []
