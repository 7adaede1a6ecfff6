"""``PassContext``: the configuration and instruments every pass runs under."""

from __future__ import annotations

import contextvars
import os
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import _logging
from .._scopes import pop_scope, push_scope
from ..ir.node import Node

if TYPE_CHECKING:
    from ..ir import IRModule
    from ._pass import Pass

__all__ = ["PassContext", "PassInfo", "PassInstrument"]

_DEBUG = 10  # logging.DEBUG, without importing logging (see tvm._logging)


_stack: contextvars.ContextVar[tuple[PassContext, ...]] = contextvars.ContextVar(
    "tvm_pass_context_stack", default=()
)


class PassInfo:
    """What an instrument learns about the pass being run."""

    __slots__ = ("name", "opt_level", "required")

    def __init__(self, name: str, opt_level: int, required: Sequence[str] = ()) -> None:
        self.name = name
        self.opt_level = opt_level
        self.required = tuple(required)

    def __repr__(self) -> str:
        return f"PassInfo({self.name!r}, opt_level={self.opt_level})"


class PassInstrument:
    """Hooks run around passes. Override the ones you need; instruments may also be any object
    with some of these methods (duck typing).

    Order: ``enter_pass_ctx`` when the context is entered; for every pass ``should_run`` (all
    instruments must agree), then ``run_before_pass`` in instrument order, the pass, then
    ``run_after_pass`` in instrument order; ``exit_pass_ctx`` when the context is left.
    """

    def enter_pass_ctx(self) -> None:
        """Called when the owning :class:`PassContext` is entered."""

    def exit_pass_ctx(self) -> None:
        """Called when the owning :class:`PassContext` is left."""

    def should_run(self, mod: IRModule, info: PassInfo) -> bool:
        """Return False to skip the pass."""
        return True

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        """Called with the module a pass is about to transform."""

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        """Called with the module a pass returned."""


class PassContext:
    """Options for a run of passes, entered with ``with``.

    ``opt_level``: passes whose ``opt_level`` is higher are skipped unless listed in
    ``required_pass``; passes named in ``disabled_pass`` are skipped. ``config`` is a free-form
    dict that passes read (``"tir.disable_vectorize"``, ``"target"``, ...). ``instruments`` see
    every pass (see :class:`PassInstrument`). ``dump_dir`` (default: the ``TVM_DUMP_DIR``
    environment variable) receives the module's text after every pass, one file per stage named
    ``NN_<pass>.py``.
    """

    def __init__(
        self,
        opt_level: int = 2,
        required_pass: Iterable[str] = (),
        disabled_pass: Iterable[str] = (),
        instruments: Sequence[Any] = (),
        config: Mapping[str, Any] | None = None,
        dump_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if not isinstance(opt_level, int) or opt_level < 0:
            raise ValueError(f"PassContext: opt_level must be a non-negative int, got {opt_level!r}")
        self.opt_level = opt_level
        self.required_pass = frozenset(required_pass)
        self.disabled_pass = frozenset(disabled_pass)
        self.instruments = list(instruments)
        self.config: dict[str, Any] = dict(config or {})
        self.dump_dir = None if dump_dir is None else Path(dump_dir)
        self._stage = 0
        self._depth = 0

    # -- scope -----------------------------------------------------------------------------
    def __enter__(self) -> PassContext:
        push_scope(_stack, self)
        for inst in self.instruments:
            _hook(inst, "enter_pass_ctx")()
        return self

    def __exit__(self, *exc: object) -> None:
        pop_scope(_stack, self, "PassContext")
        for inst in self.instruments:
            _hook(inst, "exit_pass_ctx")()

    @staticmethod
    def current() -> PassContext:
        """The innermost entered context, or a process-wide default one."""
        stack = _stack.get()
        return stack[-1] if stack else _default()

    # -- running passes --------------------------------------------------------------------
    def is_enabled(self, info: PassInfo) -> bool:
        if info.name in self.disabled_pass:
            return False
        if info.name in self.required_pass:
            return True
        return info.opt_level <= self.opt_level

    def run(self, p: Pass, mod: IRModule) -> IRModule:
        """Run ``p`` on ``mod`` under this context: skip rules, instruments, then the dump."""
        info = p.info
        if not self.is_enabled(info):
            return mod
        if not all(_hook(inst, "should_run", True)(mod, info) for inst in self.instruments):
            return mod
        if self._depth == 0 and self._stage == 0:
            self._dump(mod, "input")
        for inst in self.instruments:
            _hook(inst, "run_before_pass")(mod, info)
        self._depth += 1
        start = time.perf_counter()
        try:
            out = p.transform_module(mod, self)
        finally:
            self._depth -= 1
        if not p.is_composite:
            _logging.log("tvm.transform", _DEBUG, "pass %s: %.2f ms", info.name,
                         (time.perf_counter() - start) * 1e3)
        for inst in self.instruments:
            _hook(inst, "run_after_pass")(out, info)
        if not p.is_composite:
            self._dump(out, info.name)
        return out

    # -- dumping ---------------------------------------------------------------------------
    def _dump_target(self) -> Path | None:
        if self.dump_dir is not None:
            return self.dump_dir
        env = os.environ.get("TVM_DUMP_DIR")
        return Path(env) if env else None

    def _dump(self, mod: IRModule, name: str) -> None:
        directory = self._dump_target()
        if directory is None:
            return
        directory.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r"[^A-Za-z0-9_]+", "_", name)
        index = self._stage
        self._stage += 1
        (directory / f"{index:02d}_{safe}.py").write_text(module_text(mod))

    def __repr__(self) -> str:
        return (f"PassContext(opt_level={self.opt_level}, config={self.config!r}, "
                f"instruments={self.instruments!r})")


def module_text(mod: Any) -> str:
    """TVMScript text of ``mod``, or a plain structural form when printing fails."""
    try:
        return mod.script()
    except Exception as err:  # a dump must never stop compilation
        plain = Node.__repr__(mod) if isinstance(mod, Node) else repr(mod)
        return f"# TVMScript printing failed ({type(err).__name__}: {err}); plain form:\n{plain}\n"


def _hook(inst: Any, name: str, default: Any = None) -> Any:
    method = getattr(inst, name, None)
    if method is not None:
        return method
    return lambda *args: default


_DEFAULT: list[PassContext] = []


def _default() -> PassContext:
    if not _DEFAULT:
        _DEFAULT.append(PassContext())
    return _DEFAULT[0]
