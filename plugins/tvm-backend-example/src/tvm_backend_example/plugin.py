"""The hooks of the example backend: the only module tvm imports when it loads the backend.

Keep this module cheap: no SDK imports at the top; each hook imports what it registers.
"""

from __future__ import annotations

from typing import Any

from tvm.plugin import BackendInfo, hookimpl

NAME = "example"
KIND = "example"


@hookimpl
def tvm_backend_info() -> BackendInfo:
    from . import __version__

    # api_range: the plugin-API versions this backend was written against (core has 1).
    return BackendInfo(
        name=NAME,
        version=__version__,
        api_range=">=1,<2",
        description="a minimal example backend (template)",
    )


@hookimpl
def tvm_module_aliases() -> dict[str, str]:
    # tvm.backend.example and tvm.tirx.example both name this package.
    return {NAME: "tvm_backend_example"}


@hookimpl
def tvm_target_kinds() -> list[Any]:
    from tvm.target import Attr, TargetKind

    return [
        TargetKind(
            KIND,
            attrs={
                "vector_width": Attr(int, 4, "SIMD lanes of the (imaginary) device"),
                "mcpu": Attr(str, "generic", "the device model"),
            },
            default_keys=(KIND, "cpu"),
            device_type="cpu",
            validate=_validate,
            doc="the example backend's target",
        )
    ]


def _validate(attrs: dict[str, Any]) -> None:
    if attrs["vector_width"] not in (1, 2, 4, 8, 16):
        raise ValueError(
            f"vector_width must be a power of two up to 16, got {attrs['vector_width']}"
        )


@hookimpl
def tvm_target_tags() -> dict[str, dict[str, Any]]:
    from .tags import TAGS

    return TAGS


@hookimpl
def tvm_register_ops() -> None:
    from . import op

    op.register_ops()


@hookimpl
def tvm_script_namespaces() -> dict[str, object]:
    from .script import ExampleNamespace

    return {"example": ExampleNamespace()}


@hookimpl
def tvm_tir_pipelines() -> dict[str, Any]:
    from .pipeline import example_pipeline

    return {"example": example_pipeline}


@hookimpl
def tvm_default_pipeline(target: Any) -> str | None:
    # Broadcast to every backend: answer only for our own targets.
    return "example" if target.kind.name == KIND else None
