"""One declaration per intrinsic: everything else is derived from it (core's ``tvm.ir.intrin``,
with CUDA's own fields: the SM range and the emulation body).

A family module declares each intrinsic once, on its codegen rule::

    @intrin("ptx.bar.sync", "name_bar_id, thread_count")
    def _bar_sync(call, emit): ...

and from that spec come

- the op ``tirx.ptx.bar_sync`` (``tirx.<namespace>.<name>``; ``name`` defaults to the rest of the
  path with dots as underscores), a ``device_intrin`` of namespace ``ptx``;
- its printed form ``T.ptx.bar.sync(...)`` and the member ``T.ptx.bar.sync`` of the script
  namespace (the path);
- the builder ``ptx_bar_sync(name_bar_id, thread_count)`` in ``tvm_backend_cuda.op`` (the seed's
  name, ``<namespace>_<name>`` unless ``builder=`` says otherwise);
- the seed's flat op name ``tirx.ptx_bar_sync``, an alias of the op (``alias=``);
- its CUDA rule.

The second argument says how builder arguments become the op's operands: a parameter list
(``"dst_ptr, n_cols, cta_group=1"``, ``"fmt, *args"``) means the operands are the arguments in
that order, defaults filled in; a function means the operands are what it returns (its
signature is the builder's), for builders that compute operands (cache policies, register
counts). ``choices`` and ``strings`` check arguments by name before any operand is built: a
value outside its choices raises ``ValueError``, a non-string where a string is required
``TypeError`` (so the script namespace falls back to the raw operand form, see ``script.py``).

A declaration may also be a second operand form of an op declared before it (``form_of=`` that
op's path): it has its own builder and script path but no op of its own, its calls are calls of
that op told apart by their operand count, with the call's result type given by the builder
(:class:`Typed`), and they print (and parse) as ``T.<that path>("<dtype>", *operands)``. The
seed's legacy cp.async (``ptx_cp_async_legacy``: five operands, the element type as the call's
type) is one.

Convenience builders over other intrinsics (``cuda_warp_sum`` builds ``warp_reduce``) have no op
of their own; :func:`sugar` declares them with their script path.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
from collections.abc import Callable
from typing import Any

from tvm.error import NotModelledError
from tvm.ir import CallEffect, const
from tvm.ir import expr as E
from tvm.ir import intrin as _core
from tvm.ir.intrin import PURE, UPDATE, Builder, DTypeRule, Requirement, SugarSpec, Typed, element

from ._base import EMULATE_ATTR, RULE_ATTR, Emit, Rule
from ._render import CStyleEmit

__all__ = [
    "FAMILIES",
    "NARGS_ATTR",
    "PURE",
    "TABLE",
    "UPDATE",
    "DTypeRule",
    "Builder",
    "IntrinSpec",
    "SugarSpec",
    "Typed",
    "build",
    "element",
    "intrin",
    "resolve_cache_policy",
    "sm_range",
    "spec_at",
    "sugar",
]

FAMILIES = (
    "cuda_misc",
    "cuda_warp",
    "ptx_misc",
    "ptx_math",
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


@dataclasses.dataclass(frozen=True)
class IntrinSpec(_core.IntrinSpec):
    """A CUDA intrinsic: core's spec, with the SM range its code assembles for and its
    emulation body."""

    min_arch: int = 0  # the oldest SM the emitted code assembles for
    max_arch: int | None = None  # the newest, when a later SM dropped the instruction (wgmma)
    family: str = ""
    # the emulation rule(call, emit): C++ for the CPU emulator (tvm_backend_cuda.emulator), where
    # the CUDA rule emits PTX; None: the CUDA rule's text is used when it is plain CUDA C++
    emulate: Rule | None = None

    @functools.cached_property
    def emulate_rule(self) -> Rule | None:
        """The op's emulation rule (an alternative form's for a call of its operand count)."""
        forms = self.forms
        if not forms:
            return self.emulate
        if self.emulate is None and all(f.emulate is None for f in forms):  # type: ignore[attr-defined]
            return None

        def rule(call: E.Call, emit: Emit) -> str:
            n = len(call.args)
            form: Any = next((f for f in forms if f.fits(n)), None) or self
            if form.emulate is None:
                raise NotModelledError(f"intrinsic {form.path} has no emulation body; the CUDA "
                                       "emulator cannot run a kernel that uses it")
            return str(form.emulate(call, emit))

        return rule


class CudaIntrinTable(_core.IntrinTable):
    """The CUDA intrinsics: every op also carries its rule(call, emit) (``cuda.intrin_rule``),
    its raw operand count range (``cuda.nargs``), its SM range (``min_arch``, ``max_arch``)
    and its emulation rule (``cuda.emulate_rule``) as op attributes."""

    default_alias = True  # the seed's flat op names: tirx.<builder>

    def op_attrs(self, spec: _core.IntrinSpec) -> dict[str, Any]:
        assert isinstance(spec, IntrinSpec)
        attrs = super().op_attrs(spec)
        attrs.update(min_arch=spec.min_arch, max_arch=spec.max_arch)
        attrs[RULE_ATTR] = spec.codegen_rule
        attrs[NARGS_ATTR] = spec.nargs
        if spec.emulate_rule is not None:
            attrs[EMULATE_ATTR] = spec.emulate_rule
        return attrs


def _cstyle_rule(rule: Rule) -> Any:
    """Adapt ``rule(call, emit)`` to core's C-style codegen form ``rule(codegen, call, args)``."""

    def cstyle(cg: Any, call: E.Call, args: list[str]) -> str:
        return rule(call, CStyleEmit(cg))

    cstyle.__wrapped__ = rule  # type: ignore[attr-defined]
    return cstyle


def _load_families() -> None:
    for fam in FAMILIES:
        importlib.import_module(f"{__package__}.{fam}")


TABLE = CudaIntrinTable("cuda", adapt=_cstyle_rule, raw_operands=True, spec_type=IntrinSpec,
                        load=_load_families)


def _arch_of(target: Any) -> int | None:
    arch = (getattr(target, "attrs", None) or {}).get("arch")
    digits = "".join(c for c in str(arch) if c.isdigit()) if arch else ""
    return int(digits) if digits else None


@functools.cache
def sm_range(min_arch: int, max_arch: int | None = None) -> Requirement:
    """The target's SM architecture is in ``[min_arch, max_arch]`` (an arch it does not say
    passes; NVRTC is the judge then)."""
    if max_arch is None:
        what = f"sm_{min_arch} or newer"
    elif max_arch == min_arch:
        what = f"sm_{min_arch}a (no other architecture has it)"
    else:
        what = f"sm_{min_arch} to sm_{max_arch}"

    def holds(target: Any) -> bool:
        arch = _arch_of(target)
        return arch is None or (arch >= min_arch and (max_arch is None or arch <= max_arch))

    def fix(target: Any) -> str:
        return (f"the target's arch is {target.attrs.get('arch')}; compile for one that has it, "
                f"e.g. target={{'kind': 'cuda', 'arch': 'sm_{min_arch}a'}}")

    return Requirement(what, holds, fix)


def intrin(
    path: str,
    params: str | Callable[..., Any] = "",
    *,
    min_arch: int = 0,
    max_arch: int | None = None,
    emulate: Rule | None = None,
    effect: CallEffect = UPDATE,
    **kwargs: Any,
) -> Callable[[Rule], Rule]:
    """Declare the intrinsic printed ``T.<path>(...)``; decorates its CUDA rule(call, emit).

    Core's :meth:`tvm.ir.intrin.IntrinTable.declare` keywords, and CUDA's: ``min_arch`` /
    ``max_arch``, the SM range the emitted code assembles for (a requirement checked against
    the target's ``arch`` before the rule runs, and op attributes), and ``emulate``, the
    intrinsic's emulation rule (same contract as the CUDA rule): the C++ the CPU emulator
    compiles in place of the PTX, usually a call of a named helper of the emulator's shim
    (``emu/tvm_cuda_emu.h``). A kernel using an intrinsic whose CUDA rule emits PTX and that has
    no emulation rule fails to build for the emulator, naming it.

    ``params`` is the builder's parameter list (operands = arguments) or a function from the
    builder's arguments to the operands (give ``nargs=``); ``form_of`` makes this an
    alternative operand form of the op declared at that path (the module docstring).
    """
    requires = (sm_range(min_arch, max_arch),) if min_arch or max_arch is not None else ()
    family = _core.caller_module()

    def deco(rule: Rule) -> Rule:
        TABLE.declare(path, params, rule=rule, effect=effect, requires=requires,
                      min_arch=min_arch, max_arch=max_arch, family=family, emulate=emulate,
                      **kwargs)
        return rule

    return deco


def sugar(path: str, *, export: bool = True) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare ``T.<path>`` as the decorated convenience builder (``export``: also in
    ``tvm_backend_cuda.op`` under the function's name)."""
    return TABLE.sugar(path, export=export)


def spec_at(path: str) -> IntrinSpec:
    """The spec of the intrinsic at ``T.<path>``."""
    spec = TABLE.spec(path)
    assert isinstance(spec, IntrinSpec)
    return spec


def build(path: str, *args: Any, **kwargs: Any) -> E.Call:
    """Build a call of the intrinsic at ``T.<path>`` with its builder's arguments."""
    return TABLE.build(path, *args, **kwargs)


# -- helpers for operand functions ---------------------------------------------------------------
_CACHE_POLICY = {
    "evict_normal": 0x1000000000000000,
    "evict_first": 0x12F0000000000000,
    "evict_last": 0x14F0000000000000,
}


def resolve_cache_policy(cache_hint: Any, policy: Any) -> tuple[Any, int]:
    """``(policy operand, has_policy)`` from a ``cache_hint`` name or an explicit policy."""
    if not isinstance(cache_hint, str):
        raise TypeError(f"cache_hint must be a str, got {type(cache_hint).__name__}")
    if policy is not None:
        return policy, 1
    if not cache_hint:
        return const(0, "uint64"), 0
    if cache_hint not in _CACHE_POLICY:
        raise ValueError(
            f"unknown cache_hint {cache_hint!r}; expected one of {sorted(_CACHE_POLICY)} or "
            f"pass cache_policy="
        )
    return const(_CACHE_POLICY[cache_hint], "uint64"), 1
