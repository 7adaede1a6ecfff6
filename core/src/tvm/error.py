"""Every exception class of the project, in one place.

Errors say what is wrong and how to fix it. Backends raise these classes too, so that users can
catch one family whatever the hardware.
"""

from __future__ import annotations

__all__ = [
    "BackendError",
    "BackendWarning",
    "BoundsCheckError",
    "CodegenError",
    "BackendNotInstalledError",
    "CompileError",
    "DiagnosticError",
    "DispatchError",
    "DispatchFail",
    "IRDepthError",
    "KernelFormError",
    "IRVerifyError",
    "MetalRuntimeUnavailable",
    "RegistrationConflict",
    "TVMError",
    "TargetError",
]


class TVMError(Exception):
    """Base class of every error raised by tvm."""


class IRVerifyError(TVMError, ValueError):
    """The IR breaks a rule; the message names the node and the rule."""


class IRDepthError(TVMError, RecursionError):
    """The IR (or a script) is nested more deeply than tvm's recursive algorithms allow; the
    message says where (when known) and how to flatten it."""


class KernelFormError(IRVerifyError):
    """The kernel-form ids of a function (``T.cta_id``, ``T.thread_id``, ...) are inconsistent."""


class DiagnosticError(TVMError, SyntaxError):
    """A TVMScript parse error: carries file, line, column and the source line with a caret."""

    def __init__(self, message: str, filename: str = "<unknown>", lineno: int = 0,
                 col: int = 0, source_line: str = "") -> None:
        self.message = message
        self.filename = filename
        self.lineno_ = lineno
        self.col = col
        self.source_line = source_line
        caret = ""
        if source_line:
            caret = f"\n    {source_line.rstrip()}\n    {' ' * col}^"
        text = f"{filename}:{lineno}:{col + 1}: error: {message}{caret}"
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


class CodegenError(TVMError):
    """Code generation met something the target cannot express (e.g. an op with no rule)."""


class BackendNotInstalledError(BackendError, ImportError):
    """A backend (or something only a backend provides) was asked for but is not installed."""


class MetalRuntimeUnavailable(BackendError, RuntimeError):
    """The Metal runtime cannot run here (not macOS, no pyobjc-framework-Metal, no GPU); the
    message says which, and how to check or run the kernels elsewhere (tvm-backend-metal)."""


class TargetError(TVMError, ValueError):
    """An unknown or invalid target, target kind or tag."""


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


class BoundsCheckError(TVMError, IndexError):
    """A run-time bounds check (``bounds_check=True`` / ``TVM_BOUNDS_CHECK=1``) caught an access
    outside its buffer; the message names the buffer and the index."""


class DispatchError(TVMError, RuntimeError):
    """No dispatch variant lowers a tile-primitive call; the message is the table of every
    variant and why it declined."""


class DispatchFail(TVMError):
    """Raised by a tile-primitive dispatch variant (through ``fail``) to decline a call."""
