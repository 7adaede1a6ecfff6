"""``Pipeline``: what ``tvm.compile`` runs, three named stages of passes.

A pipeline factory (registered with ``register_tir_pipeline`` or a backend's
``tvm_tir_pipelines`` hook) returns one. The stages run in order: ``main`` over the whole
module, then ``host`` on the functions that are not kernels and ``device`` on the kernels
(``tirx.is_kernel``). A stage left out (``None``) leaves its functions as they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

from ..ir import IRModule, PrimFunc
from ._context import PassContext
from ._pass import Pass, module_pass

__all__ = ["STAGES", "Pipeline"]

#: The stage names, in the order they run.
STAGES = ("main", "host", "device")


@dataclasses.dataclass(frozen=True)
class Pipeline:
    """A named pipeline: ``main`` (the lowering), ``host`` and ``device`` (the finalizers run on
    host functions and on kernels before codegen). Each stage is a
    :class:`~tvm.transform.Pass` (usually a ``Sequential``) or ``None``.

    >>> Pipeline("mine", Sequential([StmtSimplify()]), device=Sequential([StmtSimplify()]))

    ``dataclasses.replace(p, main=Sequential([MyPass(), p.main]))`` makes a variant.
    """

    name: str
    main: Pass | None = None
    host: Pass | None = None
    device: Pass | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"a Pipeline needs a non-empty name, got {self.name!r}")
        for stage, step in self.stages(include_empty=True):
            if step is not None and not isinstance(step, Pass):
                raise TypeError(f"Pipeline {self.name!r}: stage {stage!r} must be a "
                                f"tvm.transform.Pass or None, got {type(step).__name__}; wrap a "
                                "function with tvm.transform.module_pass")

    def stages(self, *, include_empty: bool = False) -> Iterator[tuple[str, Pass | None]]:
        """``(stage name, pass)`` in the order they run; empty stages only if asked."""
        for stage in STAGES:
            step = getattr(self, stage)
            if step is not None or include_empty:
                yield stage, step

    def __str__(self) -> str:
        lines = [f"Pipeline({self.name!r},"]
        for stage, step in self.stages(include_empty=True):
            inner = str(step).replace("\n", "\n  ")
            lines.append(f"  {stage}={inner},")
        lines.append(")")
        return "\n".join(lines)

    @classmethod
    def of(cls, spec: Any, name: str = "pipeline") -> Pipeline:
        """A pipeline from what ``tvm.compile(tir_pipeline=...)`` accepts besides a name.

        - a :class:`Pipeline`: itself;
        - a :class:`~tvm.transform.Pass`: the ``main`` stage;
        - a ``mod -> mod`` function: the ``main`` stage, wrapped in a module pass;
        - the older tuple ``(main, finalize_host, finalize_device)``: ``main`` as above; each
          finalizer is ``None``, a pass, or a function of no arguments that returns one (or a
          ``mod -> mod`` function), as ``tvm.tirx.pipeline.finalize_host_passes`` was.
        """
        if isinstance(spec, Pipeline):
            return spec
        if isinstance(spec, (tuple, list)):
            return cls._from_tuple(spec, name)
        if isinstance(spec, Pass) or callable(spec):
            return cls(name, _stage(spec, name))
        raise TypeError(f"tir_pipeline must be a pipeline name, a Pipeline, a Pass or a "
                        f"mod -> mod function, got {type(spec).__name__}")

    @classmethod
    def _from_tuple(cls, spec: tuple[Any, ...] | list[Any], name: str) -> Pipeline:
        if len(spec) != 3:
            raise TypeError("a pipeline tuple is (main_pass, finalize_host, finalize_device), "
                            f"got {len(spec)} items")
        main, host, device = spec
        return cls(name, _stage(main, f"{name}.main"), _finalizer(host, f"{name}.host"),
                   _finalizer(device, f"{name}.device"))


def _finalizer(item: Any, name: str) -> Pass | None:
    """A finalizer of the tuple form: a pass, None, or a factory of one (called here)."""
    if callable(item) and not isinstance(item, Pass):
        item = item()
    return _stage(item, name)


def _stage(item: Any, name: str) -> Pass | None:
    if item is None or isinstance(item, Pass):
        return item
    if not callable(item):
        raise TypeError(f"pipeline stage {name}: expected a Pass or a mod -> mod function, "
                        f"got {type(item).__name__}")
    return _function_pass(item)


def _function_pass(fn: Callable[[IRModule], Any]) -> Pass:
    """A module pass running ``fn(mod)``; a PrimFunc result becomes a one-function module."""

    def run(mod: IRModule, ctx: PassContext) -> IRModule:
        out = fn(mod)
        if isinstance(out, PrimFunc):
            return IRModule({out.name: out}, mod.attrs)
        if not isinstance(out, IRModule):
            raise TypeError(f"pipeline step {fn!r} returned {type(out).__name__}, "
                            "not an IRModule")
        return out

    return module_pass(run, name=getattr(fn, "__name__", "function"))
