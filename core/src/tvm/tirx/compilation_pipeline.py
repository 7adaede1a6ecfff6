"""The registry of TIR pipelines: ``PIPELINE_MAP``, ``register_tir_pipeline``, ``get_tir_pipeline``.

A pipeline *factory* is a callable ``factory(**kwargs)`` returning the
:class:`~tvm.transform.Pipeline` ``tvm.compile`` runs (a factory that still returns the older
``(main, finalize_host, finalize_device)`` tuple is read with ``Pipeline.of``). Core registers ``s_tir``,
``tirx`` and ``default``, which builds whatever ``s_tir`` is (the seed maps ``"default"`` to
``"s_tir"``); backends add theirs through the ``tvm_tir_pipelines`` hook and pick the default
for their targets through ``tvm_default_pipeline``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._hints import missing_message
from .._registry import CORE_OWNER, Registry
from ..plugin import get_plugin_manager
from ..target import Target

if TYPE_CHECKING:
    from ..transform import Pipeline

__all__ = [
    "PIPELINE_MAP",
    "get_default_tir_pipeline",
    "get_tir_pipeline",
    "register_tir_pipeline",
]

PipelineFactory = Callable[..., Any]

PIPELINE_MAP: Registry[str, PipelineFactory] = Registry("tir pipeline")


def register_tir_pipeline(
    name: str, factory: PipelineFactory | None = None, *, override: bool = False
) -> Any:
    """Register ``factory`` under ``name``; usable as a decorator (``@register_tir_pipeline("x")``).

    A name that is taken raises :class:`~tvm.error.RegistrationConflict` naming both
    registrants, unless ``override=True``.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"a TIR pipeline needs a non-empty name, got {name!r}")
    if factory is None:

        def decorate(fn: PipelineFactory) -> PipelineFactory:
            register_tir_pipeline(name, fn, override=override)
            return fn

        return decorate
    if not callable(factory):
        raise TypeError(f"TIR pipeline {name!r}: the factory must be callable, got {factory!r}")
    return PIPELINE_MAP.register(name, factory, override=override)


def get_tir_pipeline(name: str | None = None, **kwargs: Any) -> Pipeline:
    """Build the pipeline ``name`` (``"default"`` when ``None``) with ``factory(**kwargs)``."""
    name = name or "default"
    factory = PIPELINE_MAP.get(name)
    if factory is None:
        raise ValueError(_unknown_message(name))
    from ..transform import Pipeline  # noqa: PLC0415 - tvm.transform loads when a pipeline is built, not with tvm.tirx

    built = factory(**kwargs)
    try:
        return Pipeline.of(built, name=name)
    except TypeError as err:
        raise TypeError(f"TIR pipeline {name!r}: its factory returned {type(built).__name__}, "
                        f"not a tvm.transform.Pipeline ({err})") from err


def get_default_tir_pipeline(target: Any) -> str:
    """The pipeline name for ``target``: the first backend's ``tvm_default_pipeline`` answer,
    or ``"default"``."""
    if not isinstance(target, Target):
        target = Target(target)
    answer = get_plugin_manager().hook.tvm_default_pipeline(target=target)
    return answer if answer else "default"


def _unknown_message(name: str) -> str:
    known = ", ".join(sorted(PIPELINE_MAP.keys())) or "none"
    message = f"unknown TIR pipeline {name!r}; known pipelines: {known}"
    hint = missing_message("tir pipeline", name)
    return f"{message}. {hint}" if hint else message


def _core_pipelines() -> Any:
    """``tvm.tirx.pipeline``, where core's pipelines live, imported when one is built."""
    from . import pipeline  # noqa: PLC0415 - the passes (tvm.tirx.transform, tvm.arith: ~20 ms) load when a pipeline is built, not with tvm.tirx

    return pipeline


def _s_tir_pipeline(**kwargs: Any) -> Any:
    return _core_pipelines().s_tir_pipeline(**kwargs)


def _default_pipeline(**kwargs: Any) -> Any:
    """``"default"`` is ``"s_tir"`` (the registered one, should a backend replace it)."""
    return PIPELINE_MAP["s_tir"](**kwargs)


def _tirx_pipeline(**kwargs: Any) -> Any:
    return _core_pipelines().tirx_pipeline(**kwargs)


PIPELINE_MAP.register("s_tir", _s_tir_pipeline, owner=CORE_OWNER)
PIPELINE_MAP.register("default", _default_pipeline, owner=CORE_OWNER)
PIPELINE_MAP.register("tirx", _tirx_pipeline, owner=CORE_OWNER)
