"""CUDA device intrinsics: one module per family, each declaring every intrinsic once.

A declaration (``_spec.intrin`` on the codegen rule) gives the op, its builder (the seed's name
in ``tvm_backend_cuda.op``), its script path (``T.ptx.wgmma.commit_group``, also its printed
name), the seed's flat op name (an alias of the op) and the CUDA rule. Nothing is registered at
import: :func:`register_ops` (called by the plugin's ``tvm_register_ops`` hook, inside the
loader's transaction) registers every op as a ``device_intrin`` with its namespace, printer
name, effect, result-type rule and CUDA rule, and its alias. The rule contract is in
``_base.py`` and README.md beside this file.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any

from tvm.ir import Op, OpCategory
from tvm.ir import expr as E
from tvm.ir.op import OP_REGISTRY

from ._base import EMULATE_ATTR, RULE_ATTR, CodegenContext, Emit, Rule, get_rule
from ._render import CStyleEmit, SnippetEmit, render
from ._spec import SPECS, SUGAR, Builder, IntrinSpec, SugarSpec

__all__ = [
    "FAMILIES",
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

FAMILIES = (
    "cuda_misc",
    "ptx_misc",
    "ldmatrix",
    "mma",
    "cp_async",
    "bulk",
    "mbarrier",
    "sync",
    "wgmma",
    "tcgen05",
    "nvshmem",
)
# (min, max) operand count of the raw call; max None = any (an alternative form's count is on its
# declaration, IntrinSpec.forms)
NARGS_ATTR = "cuda.nargs"


@functools.cache
def _load_families() -> None:
    for fam in FAMILIES:
        importlib.import_module(f"{__name__}.{fam}")


def all_specs() -> list[IntrinSpec]:
    """Every declared intrinsic, in declaration order."""
    _load_families()
    return list(SPECS)


def all_sugar() -> list[SugarSpec]:
    """Every convenience builder (a script path over other intrinsics, no op of its own)."""
    _load_families()
    return list(SUGAR)


@functools.cache
def builders() -> dict[str, Callable[..., Any]]:
    """The seed's builder names (``tvm_backend_cuda.op``) -> builder functions."""
    table: dict[str, Callable[..., Any]] = {}
    named: list[tuple[str, Callable[..., Any]]] = [(s.builder_name, s.builder) for s in all_specs()]
    named += [(s.fn.__name__, s.fn) for s in all_sugar() if s.export]
    for name, fn in named:
        if name in table:
            raise ValueError(f"two CUDA intrinsics declare the builder name {name!r}")
        table[name] = fn
    return table


def register_ops() -> list[Op]:
    """Register every CUDA/PTX/NVSHMEM intrinsic and its seed alias; ops already registered by
    this same registration are left alone, so calling it twice is harmless."""
    ops = []
    for spec in all_specs():
        if spec.form_of is not None:  # a second operand form of another spec's op
            continue
        rule = spec.codegen_rule
        existing = OP_REGISTRY.get(spec.name)
        if existing is not None and existing.get_attr(RULE_ATTR) is rule:
            ops.append(existing)
            continue
        # the forms print their dtype first: T.ptx.cp_async("float16", dst, ...) (core printer)
        form_attrs: dict[str, Any] = {}
        if spec.forms:
            form_attrs["script_dtype"] = tuple(f.nargs[0] for f in spec.forms)
        op = Op.register(
            spec.name,
            category=OpCategory.DEVICE_INTRIN,
            namespace=spec.namespace,
            printer_name=spec.printer_name,
            effect=spec.effect,
            dtype=spec.dtype,
            script_kwargs=spec.script_kwargs,
            min_arch=spec.min_arch,
            max_arch=spec.max_arch,
            **form_attrs,
        )
        op.set_attr(RULE_ATTR, rule)
        op.set_attr(NARGS_ATTR, spec.nargs)
        if spec.emulate_rule is not None:
            op.set_attr(EMULATE_ATTR, spec.emulate_rule)
        op.set_codegen("cuda", _cstyle_rule(rule))
        if spec.alias is not None:
            Op.register_alias(spec.alias, spec.name)
        ops.append(op)
    return ops


def _cstyle_rule(rule: Rule) -> Any:
    """Adapt ``rule(call, emit)`` to core's C-style codegen form ``rule(codegen, call, args)``."""

    def cstyle(cg: Any, call: E.Call, args: list[str]) -> str:
        return rule(call, CStyleEmit(cg))

    cstyle.__wrapped__ = rule  # type: ignore[attr-defined]
    return cstyle
