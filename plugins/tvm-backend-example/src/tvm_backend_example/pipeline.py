"""The example backend's pipeline: core's default pipeline (a real backend adds its passes)."""

from __future__ import annotations

import dataclasses
from typing import Any

from tvm.backend import sdk

__all__ = ["example_pipeline"]


def example_pipeline(**kwargs: Any) -> sdk.Pipeline:
    """A :class:`~tvm.transform.Pipeline`: core's default one, renamed (``dataclasses.replace``
    also swaps a stage: ``main=Sequential([MyPass(), default.main])``)."""
    return dataclasses.replace(sdk.get_tir_pipeline("default", **kwargs), name="example")
