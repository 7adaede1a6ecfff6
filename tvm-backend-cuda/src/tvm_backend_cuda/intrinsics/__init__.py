"""CUDA device intrinsics: one module per family, each declaring every intrinsic once.

A declaration (``_spec.intrin`` on the codegen rule, core's ``tvm.ir.intrin`` with CUDA's SM
range and emulation body) gives the op, its builder (the seed's name
in ``tvm_backend_cuda.op``), its script path (``T.ptx.wgmma.commit_group``, also its printed
name), the seed's flat op name (an alias of the op) and the CUDA rule. Nothing is registered at
import: :func:`register_ops` (called by the plugin's ``tvm_register_ops`` hook, inside the
loader's transaction) registers every op as a ``device_intrin`` with its namespace, printer
name, effect, result-type rule and CUDA rule, and its alias. The rule contract is in
``_base.py`` and README.md beside this file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tvm.ir import Op

from ._base import CodegenContext, Emit, Rule, get_rule
from ._render import CStyleEmit, SnippetEmit, render
from ._spec import FAMILIES, NARGS_ATTR, TABLE, Builder, IntrinSpec, SugarSpec

__all__ = [
    "FAMILIES",
    "NARGS_ATTR",
    "TABLE",
    "Builder",
    "CodegenContext",
    "CStyleEmit",
    "Emit",
    "IntrinSpec",
    "Rule",
    "SnippetEmit",
    "SugarSpec",
    "all_specs",
    "all_sugar",
    "builders",
    "get_rule",
    "register_ops",
    "render",
]


def all_specs() -> list[IntrinSpec]:
    """Every declared intrinsic, in declaration order."""
    return TABLE.specs()  # type: ignore[return-value]  # the table makes IntrinSpec (its spec_type)


def all_sugar() -> list[SugarSpec]:
    """Every convenience builder (a script path over other intrinsics, no op of its own)."""
    return TABLE.all_sugar()


def builders() -> dict[str, Callable[..., Any]]:
    """The seed's builder names (``tvm_backend_cuda.op``) -> builder functions."""
    return TABLE.builders()


def register_ops() -> list[Op]:
    """Register every CUDA/PTX/NVSHMEM intrinsic and its seed alias; ops already registered by
    this same registration are left alone, so calling it twice is harmless."""
    return TABLE.register_ops()
