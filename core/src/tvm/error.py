"""Every exception class of the project, in one place.

Errors say what is wrong and how to fix it. Backends raise these classes too, so that users can
catch one family whatever the hardware.
"""

from __future__ import annotations

__all__ = [
    "BackendError",
    "BackendWarning",
    "CodegenError",
    "BackendNotInstalledError",
    "CompileError",
    "DiagnosticError",
    "DispatchFail",
    "IRVerifyError",
    "DeviceUnavailableError",
    "OptionError",
    "RegistrationConflict",
    "TVMError",
    "TargetError",
]


class TVMError(Exception):
    """Base class of every error raised by tvm."""


class IRVerifyError(TVMError, ValueError):
    """The IR breaks a rule; the message names the node and the rule."""


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


class DeviceUnavailableError(BackendError, RuntimeError):
    """A compiled executable cannot run here: no device, driver or runtime of its kind. The
    message says which is missing and what works instead (compiling needs no device).
    Backends subclass it for their own runtime (``tvm_backend_metal.MetalRuntimeUnavailable``).
    """


class OptionError(TVMError, TypeError):
    """A compile option ``tvm.compile`` does not know for the target, or of the wrong type."""


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


class DispatchFail(TVMError):
    """Raised by a tile-primitive dispatch variant (through ``fail``) to decline a call."""
