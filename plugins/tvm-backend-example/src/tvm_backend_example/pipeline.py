"""The example backend's pipeline: core's default pipeline (a real backend adds its passes)."""

from __future__ import annotations

from typing import Any

from tvm.backend.sdk import get_tir_pipeline

__all__ = ["example_pipeline"]


def example_pipeline(**kwargs: Any) -> Any:
    return get_tir_pipeline("default", **kwargs)
