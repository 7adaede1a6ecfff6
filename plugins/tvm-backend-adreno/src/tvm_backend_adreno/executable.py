"""Adreno registers no builder: ``tvm.compile(f, target="qcom/adreno-opencl")`` is built by the
OpenCL backend's builder (and the Vulkan tags by the Vulkan backend's), after this backend's
``adreno`` pipeline (:mod:`.pipeline`). Here so that the backend has the file layout every
backend has."""

from __future__ import annotations

__all__: list[str] = []
