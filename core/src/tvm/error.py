"""Every exception class of the project, in one place.

Errors say what is wrong and how to fix it. Backends raise these classes too, so that users can
catch one family whatever the hardware.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .ir.span import Span

__all__ = [
    "AutotuneError",
    "BackendError",
    "BarrierDivergenceError",
    "BackendWarning",
    "BoundsCheckError",
    "CodegenError",
    "BackendNotInstalledError",
    "CompileError",
    "DeadlockError",
    "DiagnosticError",
    "DispatchError",
    "DispatchFail",
    "EmulatorError",
    "ExecContextError",
    "ExecutableFileError",
    "IRDepthError",
    "IntegrityError",
    "LayoutError",
    "KernelFormError",
    "IRVerifyError",
    "DeviceLimitError",
    "DeviceUnavailableError",
    "LoweringError",
    "LoweringTypeError",
    "LoweringValueError",
    "TensorMapEncodeError",
    "NotModelledError",
    "OptionError",
    "PerformanceWarning",
    "RaceError",
    "RegistrationConflict",
    "RequirementError",
    "ScopeIdExtentError",
    "TVMError",
    "TargetError",
    "format_location",
    "located",
    "trim_internal_frames",
    "warn",
]


def format_location(message: str, filename: str, line: int, column: int, source_line: str = "",
                    end_column: int | None = None) -> str:
    """``file:line:col: error: <first line of message>``, the source line with a caret under
    the spot (``^~~~`` up to ``end_column``), then the rest of the message. Parse errors and
    errors located at a call's :class:`~tvm.ir.Span` print this way."""
    first, _, rest = message.partition("\n")
    text = f"{filename}:{line}:{column + 1}: error: {first}"
    if source_line:
        width = max(1, (end_column if end_column is not None else column + 1) - column)
        text += f"\n    {source_line.rstrip()}\n    {' ' * column}^{'~' * (width - 1)}"
    return f"{text}\n{rest}" if rest else text


class TVMError(Exception):
    """Base class of every error raised by tvm.

    ``span`` (a :class:`~tvm.ir.Span`, usually None) is where in the user's kernel the error
    arose; when it is set the error prints like a parse error (file, line, caret).
    """

    span: Span | None = None

    def __str__(self) -> str:
        text = super().__str__()
        if self.span is None:
            return text
        s = self.span
        return format_location(text, s.filename, s.line, s.column, s.text, s.end_column)


class InternalError(TVMError):
    """The seed's name for an error raised by a failed check (Apache TVM's ``ICHECK``). Its
    tests catch script and IR errors as this class, so :class:`DiagnosticError` and
    :class:`IRVerifyError` are kinds of it."""


class IRVerifyError(InternalError, ValueError):
    """The IR breaks a rule; the message names the node and the rule."""


class IRDepthError(TVMError, RecursionError):
    """The IR (or a script) is nested more deeply than tvm's recursive algorithms allow; the
    message says where (when known) and how to flatten it."""


class KernelFormError(IRVerifyError):
    """The kernel-form ids of a function (``T.cta_id``, ``T.thread_id``, ...) are inconsistent."""


class ScopeIdExtentError(KernelFormError):
    """The extents of a kernel's ids disagree (``T.warp_id([3])`` with ``T.thread_id([100])``,
    a grid that is not a whole number of clusters, a lane id that is not 32)."""


class ExecContextError(TVMError, ValueError):
    """A filter or a scope change asks for a set of active threads that the execution-context
    model (:mod:`tvm.tirx.exec_context`) cannot represent, or for none at all; the message says
    which axis and range, and what would work instead."""


class DiagnosticError(InternalError, SyntaxError):
    """A TVMScript parse error: carries file, line, column and the source line with a caret."""

    def __init__(self, message: str, filename: str = "<unknown>", lineno: int = 0,
                 col: int = 0, source_line: str = "") -> None:
        self.message = message
        self.filename = filename
        self.lineno_ = lineno
        self.col = col
        self.source_line = source_line
        text = format_location(message, filename, lineno, col, source_line)
        super().__init__(text)
        # SyntaxError fields, so tools that understand SyntaxError can point at the spot.
        self.msg = text
        self.lineno = lineno
        self.offset = col + 1
        self.text = source_line

    def __str__(self) -> str:
        return self.msg


class RegistrationConflict(TVMError):
    """Two registrants claimed the same entry of a registry without asking to override."""


class BackendError(TVMError):
    """A backend failed to load or is unusable."""


class BackendWarning(RuntimeWarning):
    """A backend failed to load; ``import tvm`` continued without it."""


class PerformanceWarning(UserWarning):
    """The kernel asks for something that compiles but costs time (a vectorised loop far wider
    than the target's vectors); the message says what tvm did instead and how to write it."""


class CodegenError(TVMError):
    """Code generation met something the target cannot express (e.g. an op with no rule); at
    the call's span when the op call came from the user's script."""


class RequirementError(CodegenError):
    """An intrinsic's code needs something its target does not have (an SM architecture, a
    device feature): the message names the intrinsic, what it needs and how to get it."""


class DeviceLimitError(DiagnosticError, CodegenError):
    """A kernel asks for more than its target's device allows (grid or block dimensions,
    threads, shared memory), found before codegen: at the script line that asks for it when
    known. ``limit`` is the target attribute exceeded; ``target`` the target, as text."""

    def __init__(self, message: str, span: Span | None = None, *, limit: str = "",
                 target: str = "") -> None:
        self.limit = limit
        self.target = target
        if span is None:
            super().__init__(message)
            self.msg = message
        else:
            super().__init__(message, span.filename, span.line, span.column, span.text)
        self.span = None  # the location is part of the message already


class LoweringError(TVMError, RuntimeError):
    """An error while lowering a tile primitive call or an intrinsic of the user's kernel,
    reported at the call's span. It wraps errors of other types (``__cause__``)."""

    def __init__(self, message: str, span: Span | None = None) -> None:
        super().__init__(message)
        self.span = span


class LoweringTypeError(LoweringError, TypeError):
    """A ``TypeError`` raised while lowering a call, reported at the call's span."""


class LoweringValueError(LoweringError, ValueError):
    """A ``ValueError`` (a shape or data type that does not fit) raised while lowering a call,
    reported at the call's span."""


class TensorMapEncodeError(LoweringValueError, InternalError):
    """The arguments of a host-side tensor-map encode (``T.call_packed(
    "runtime.cuTensorMapEncodeTiled", ...)``) break one of the encode's rules; the message
    gives the rule in the driver's words, then the value and what to write instead. A kind of
    :class:`InternalError`, as the seed's runtime check is."""


class DispatchError(LoweringError):
    """No dispatch variant applies to a tile primitive call; the message has the table of every
    variant tried and why it declined."""


class BackendNotInstalledError(BackendError, ImportError):
    """A backend (or something only a backend provides) was asked for but is not installed."""


class DeviceUnavailableError(BackendError, RuntimeError):
    """A compiled executable cannot run here: no device, driver or runtime of its kind. The
    message says which is missing and what works instead (compiling needs no device).
    Backends subclass it for their own runtime (``tvm_backend_metal.MetalRuntimeUnavailable``).
    """


class OptionError(TVMError, TypeError):
    """A compile option ``tvm.compile`` does not know for the target, or of the wrong type."""


class TargetError(TVMError, ValueError):
    """An unknown or invalid target, target kind or tag."""


class LayoutError(TVMError, ValueError, AssertionError):
    """Arguments a layout operation cannot use (a permutation that is none, ...). An
    ``AssertionError`` too: the seed checks these with assertions."""


class CompileError(TVMError):
    """An external compiler failed; the message carries its log and the command or options."""

    def __init__(self, message: str, *, log: str = "", command: str = "") -> None:
        self.log = log
        self.command = command
        text = message
        if command:
            text += f"\ncommand: {command}"
        if log:
            text += f"\n--- compiler output ---\n{log.rstrip()}"
        super().__init__(text)


class ExecutableFileError(TVMError, ValueError):
    """A file given to ``tvm.runtime.load_module`` cannot be an executable: not a regular file,
    too large, or malformed; the message names the file and the field."""


class IntegrityError(ExecutableFileError):
    """A file's or cache entry's digest does not match its contents (damage, tampering, or not
    the file pinned with ``expected_sha256``); the message names the file and both digests."""


class AutotuneError(TVMError):
    """No candidate of a tuning search compiled, ran and gave the right answer (the message
    lists each candidate and what went wrong), or a search was asked of a bad configuration."""


class BoundsCheckError(TVMError, IndexError):
    """A run-time bounds check (``bounds_check=True`` / ``TVM_BOUNDS_CHECK=1``) caught an access
    outside its buffer; the message names the buffer and the index."""


class EmulatorError(TVMError, RuntimeError):
    """A kernel run by a CPU emulator of a GPU (``tvm.compile(f, "cuda", emulate=True)``, the
    Metal emulator) did something a GPU would not run correctly; the message names the kernel,
    the threads and what happened. Out-of-bounds accesses raise :class:`BoundsCheckError`."""


class BarrierDivergenceError(EmulatorError):
    """A block barrier (``__syncthreads()``) reached by only part of a block, or by its threads
    at different calls."""


class DeadlockError(EmulatorError):
    """Every thread of a block is blocked and none can proceed (a wait that never completes);
    the message lists the blocked threads and what each waits for."""


class RaceError(EmulatorError):
    """Two threads of a block access the same shared-memory address, at least one writing, with
    no barrier between them."""


class NotModelledError(EmulatorError, NotImplementedError):
    """The kernel uses something the emulator does not model yet (it is named)."""


class DispatchFail(TVMError):
    """Raised by a tile-primitive dispatch variant (through ``fail``) to decline a call.

    ``fix`` says how the user can change the call so that it applies; the dispatch error prints
    it under the table of variants."""

    def __init__(self, reason: str = "", *, fix: str = "") -> None:
        super().__init__(reason)
        self.fix = fix


# -- locating errors at the user's source --------------------------------------------------------
_WRAPPERS: tuple[tuple[type[BaseException], type[LoweringError]], ...] = (
    (TypeError, LoweringTypeError),
    (ValueError, LoweringValueError),
    (LookupError, LoweringValueError),
)


def _located_error(err: Exception, span: Span) -> TVMError:
    """``err`` itself with its span set (a tvm error), or a :class:`LoweringError` of the
    matching kind wrapping it (any other exception)."""
    if isinstance(err, TVMError):
        if err.span is None:
            err.span = span
        return err
    cls = next((w for base, w in _WRAPPERS if isinstance(err, base)), LoweringError)
    text = err.args[0] if isinstance(err, KeyError) and err.args else str(err)
    return cls(f"{type(err).__name__}: {text}" if cls is LoweringError else str(text), span)


@contextlib.contextmanager
def located(span: Span | None) -> Iterator[None]:
    """Errors raised inside the block are reported at ``span`` (the innermost span wins):
    tvm errors get the span, other exceptions become :class:`LoweringError` subclasses."""
    if span is None:
        yield
        return
    try:
        yield
    except Exception as err:
        new = _located_error(err, span)
        if new is err:
            raise
        raise new from err


_F = TypeVar("_F", bound=Callable[..., Any])


def trim_internal_frames(fn: _F) -> _F:
    """Decorator of user-facing entry points (``tvm.compile``): an error located in the user's
    kernel is re-raised without the compiler's internal frames, as parse errors are. With
    ``TVM_LOG_LEVEL=DEBUG`` the whole traceback is kept."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except TVMError as err:
            if err.span is None or _keep_frames():
                raise
            raise err.with_traceback(None) from None

    return wrapper  # type: ignore[return-value]  # same signature as fn (functools.wraps)


def _keep_frames() -> bool:
    return os.environ.get("TVM_LOG_LEVEL", "").strip().upper() in ("DEBUG", "10")


# -- warnings at the user's line -----------------------------------------------------------------
_INTERNAL_MODULES = ("tvm", "tvm_backend_")
_IMPORT_MACHINERY = ("<frozen importlib", "<frozen zipimport")


def warn(message: str, category: type[Warning] = UserWarning, *, span: Span | None = None,
         internal: tuple[str, ...] = ()) -> None:
    """Warn at the user's line: at ``span`` when given (a line of the user's kernel), else at
    the first frame outside tvm, its backends (``tvm_backend_*``), the import machinery and the
    modules named in ``internal`` (prefixes of module names)."""
    if span is not None:
        warnings.warn_explicit(message, category, span.filename, span.line, module="tvm")
        return
    modules = _INTERNAL_MODULES + tuple(internal)
    level, frame = 2, sys._getframe(1)  # stacklevel 2 is warn's caller
    while frame is not None and _is_internal(frame, modules):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    warnings.warn(message, category, stacklevel=level)


def _is_internal(frame: Any, modules: tuple[str, ...]) -> bool:
    if frame.f_code.co_filename.startswith(_IMPORT_MACHINERY):
        return True
    name = str(frame.f_globals.get("__name__", ""))
    return any(name == m or name.startswith(m if m.endswith("_") else m + ".") for m in modules)
