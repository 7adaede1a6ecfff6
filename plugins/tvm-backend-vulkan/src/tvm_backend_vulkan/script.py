"""Vulkan's TVMScript namespaces: none (as in the seed). Kernels for Vulkan are written with
core's ``T`` and ``Tx``; the GLSL builtins a variant needs are ``T.call_extern`` calls
(:mod:`.op`)."""

from __future__ import annotations

__all__ = ["NAMESPACES"]

NAMESPACES: dict[str, object] = {}
