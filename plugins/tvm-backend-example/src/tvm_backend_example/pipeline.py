"""The example backend's pipeline: core's default pipeline (a real backend adds its passes)."""

from __future__ import annotations

from typing import Any


def example_pipeline(**kwargs: Any) -> Any:
    from tvm.tirx.compilation_pipeline import get_tir_pipeline

    return get_tir_pipeline("default", **kwargs)
