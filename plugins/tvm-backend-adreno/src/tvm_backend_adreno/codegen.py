"""Adreno's codegen is the OpenCL backend's (:mod:`tvm_backend_opencl.codegen`) for
``qcom/adreno-opencl*`` targets and the Vulkan backend's for ``qcom/adreno-vulkan*``: an Adreno
tag is a target of those kinds, built by their builders. Nothing is printed here; the module is
here so that the backend has the file layout every backend has."""

from __future__ import annotations

__all__: list[str] = []
