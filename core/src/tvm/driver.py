"""``tvm.compile``: lower a PrimFunc or IRModule for a target and build an executable.

1. Resolve the target (a ``Target``, a kind or tag string, a config dict; ``None`` means the
   enclosing ``with Target(...)``, else ``"c"``).
2. Pick the :class:`~tvm.transform.Pipeline`: ``tir_pipeline`` (a registered name, or a
   pipeline), else the one the target's backend names (``get_default_tir_pipeline``).
3. Run it inside a ``PassContext`` with the target in scope: its ``main`` stage over the
   module, then ``device`` on kernels (``tirx.is_kernel``) and ``host`` on the rest.
4. Build with the builder of the target's kind (:func:`tvm.backend.contract.build`: options,
   codegen, the compile cache, compile, stage dumps, load).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from .backend import contract, ensure_builtin_backends
from .error import trim_internal_frames
from .ir.depth import recursion_guard
from .ir.function import IRModule, PrimFunc
from .ir.verify import verify
from .target import Target
from .tirx.compilation_pipeline import get_default_tir_pipeline, get_tir_pipeline
from .transform import Pass, PassContext, Pipeline
from .transform._context import _default

__all__ = ["compile", "ensure_builtin_backends", "lower", "resolve_target"]


@trim_internal_frames
def compile(  # noqa: A001 - the seed's name: tvm.compile
    func_or_mod: PrimFunc | IRModule,
    target: Any = None,
    tir_pipeline: Any = None,
    *,
    pass_config: Mapping[str, Any] | None = None,
    **options: Any,
) -> Any:
    """Compile ``func_or_mod`` for ``target``; returns the backend's
    :class:`~tvm.runtime.Executable`.

    ``tir_pipeline``: a pipeline name registered with ``register_tir_pipeline``, a
    :class:`~tvm.transform.Pipeline`, or what :meth:`Pipeline.of <tvm.transform.Pipeline.of>`
    makes one of (a pass or ``mod -> mod`` function as the main stage; the older
    ``(main_pass, finalize_host, finalize_device)`` tuple). ``pass_config`` goes to the
    ``PassContext``; every other keyword is a compiler option for the backend (host:
    ``opt_level``, ``cc``, ``cache``, ...).
    """
    tgt = _as_target(target)
    builder = contract.get_builder(tgt.kind.name)
    opts = builder.options_type.parse(tgt, options)  # a bad option fails before lowering
    # resolved once, with the options: what the machine implies (cuda's arch) must not come
    # back as if the caller had given it (an emulated build is for the emulated device)
    tgt = builder.resolve_target(tgt, opts)
    lowered = lower(func_or_mod, tgt, tir_pipeline, pass_config=pass_config)
    with _pass_context(pass_config, tgt), recursion_guard("tvm.compile"):
        return contract.build(lowered, tgt, opts)


@trim_internal_frames
def lower(func_or_mod: PrimFunc | IRModule, target: Any = None, tir_pipeline: Any = None, *,
          pass_config: Mapping[str, Any] | None = None) -> IRModule:
    """Run the TIR pipeline for ``target`` and return the module the backend compiles."""
    tgt = resolve_target(target)
    mod = _as_module(func_or_mod, tgt)
    pipeline = _pipeline(tir_pipeline, tgt)
    with tgt, _pass_context(pass_config, tgt), recursion_guard("lowering"):
        verify(mod)  # the rules, located at the script's lines, before any pass runs
        mod = _apply(pipeline.main, mod)
        mod = _finalize(mod, pipeline.host, pipeline.device)
    return mod


def resolve_target(target: Any) -> Any:
    """A :class:`~tvm.target.Target` from what ``tvm.compile`` accepts, as its builder
    resolves it on this machine (:meth:`~tvm.backend.contract.Builder.resolve_target`:
    ``"cuda"`` gets the arch of the GPU here)."""
    tgt = _as_target(target)
    builder = contract.find_builder(tgt.kind.name)
    return tgt if builder is None else builder.resolve_target(tgt)


def _as_target(target: Any) -> Any:
    """The :class:`~tvm.target.Target` ``target`` names (the current one, else ``c``, for
    None), not yet resolved by its builder."""
    ensure_builtin_backends()
    if target is None:
        return Target.current() or Target("c")
    return target if isinstance(target, Target) else Target(target)


# -- helpers ----------------------------------------------------------------------------------


def _as_module(func_or_mod: Any, target: Any) -> IRModule:
    if isinstance(func_or_mod, PrimFunc):
        mod = IRModule({func_or_mod.name: func_or_mod})
    elif isinstance(func_or_mod, IRModule):
        mod = func_or_mod
    else:
        raise TypeError(f"tvm.compile expects a PrimFunc or an IRModule, got "
                        f"{type(func_or_mod).__name__}; decorate the function with @T.prim_func")
    # Bind the target to functions that name none, as passes read it from the function.
    funcs = {name: f if "target" in f.attrs else f.with_attr("target", target)
             for name, f in mod.functions.items()}
    return IRModule(funcs, mod.attrs)


def _pipeline(spec: Any, target: Any) -> Pipeline:
    if spec is None:
        spec = get_default_tir_pipeline(target)
    if isinstance(spec, str):
        return get_tir_pipeline(spec)
    return Pipeline.of(spec, name="tir_pipeline")


def _apply(step: Pass | None, mod: IRModule) -> IRModule:
    return mod if step is None else step(mod)


def _finalize(mod: IRModule, host: Pass | None, device: Pass | None) -> IRModule:
    if host is None and device is None:
        return mod
    kernels = {n: f for n, f in mod.functions.items() if f.attrs.get("tirx.is_kernel")}
    others = {n: f for n, f in mod.functions.items() if n not in kernels}
    out: dict[str, PrimFunc] = {}
    if others:
        out.update(_apply(host, IRModule(others, mod.attrs)).functions)
    if kernels:
        out.update(_apply(device, IRModule(kernels, mod.attrs)).functions)
    return IRModule(out, mod.attrs)


@contextlib.contextmanager
def _pass_context(config: Mapping[str, Any] | None, target: Any) -> Iterator[None]:
    current = PassContext.current()
    if current is not _default() and not config:
        yield  # the caller's own PassContext: keep its options and instruments as they are
        return
    merged = {"target": target, **current.config, **dict(config or {})}
    ctx = PassContext(opt_level=current.opt_level, required_pass=current.required_pass,
                      disabled_pass=current.disabled_pass, instruments=current.instruments,
                      config=merged, dump_dir=current.dump_dir)
    with ctx:
        yield
