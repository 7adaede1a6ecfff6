"""The example backend's pipeline: core's default pipeline (a real backend adds its passes)."""

from __future__ import annotations

import dataclasses
from typing import Any

from tvm.backend.sdk import Pipeline, get_tir_pipeline

__all__ = ["example_pipeline"]


def example_pipeline(**kwargs: Any) -> Pipeline:
    """A :class:`~tvm.transform.Pipeline`: core's default one, renamed (``dataclasses.replace``
    also swaps a stage: ``main=Sequential([MyPass(), default.main])``)."""
    return dataclasses.replace(get_tir_pipeline("default", **kwargs), name="example")
