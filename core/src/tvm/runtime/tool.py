"""Running external tools (compilers, assemblers, checkers): one runner, one error.

Every external program tvm or a backend runs (the host C compiler, Metal's C++ checker,
hexagon-clang, hipcc, glslangValidator, spirv-val) goes through :func:`run_tool`. It always has a
timeout, and every way the tool can fail (not installed, not executable, too slow, a non-zero
exit) is a :class:`~tvm.error.CompileError` that names what was being done, carries the exact
command line and the tool's output, and says how to reproduce it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..error import CompileError
from .workdir import work_folder

__all__ = ["DEFAULT_TIMEOUT_S", "PROBE_TIMEOUT_S", "compile_in_folder", "run_tool"]

#: seconds a compile or check may take before it is stopped
DEFAULT_TIMEOUT_S = 600.0
#: seconds a probe (``--version``, a feature test) may take
PROBE_TIMEOUT_S = 30.0


def run_tool(cmd: Sequence[str], what: str, timeout: float = DEFAULT_TIMEOUT_S, *,
             env: Mapping[str, str] | None = None, check: bool = True,
             keep: str | os.PathLike[str] | None = None, hint: str = "",
             shown_env: Mapping[str, str] | None = None, tool: str | None = None
             ) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` (an argument list) and return its completed process (text output).

    ``what`` says what the run is for, as a phrase that follows the tool's name in a message
    ("compiling kernel 'k' for gfx90a"); ``tool`` names the tool in messages (default: the
    command's file name). ``timeout`` is in seconds. ``env`` adds variables to the environment (those
    of ``shown_env``, when given, are the ones the reproducing command line shows). ``keep``
    names the input that a failed run leaves in place, so the command can be run again;
    ``hint`` is appended to the message of a tool that cannot be run (how to install it).

    Raises :class:`~tvm.error.CompileError` when the tool is missing or cannot be executed, when
    it runs past ``timeout``, and (unless ``check=False``) when it exits with a non-zero code.
    """
    argv = [os.fspath(a) for a in cmd]
    if not argv:
        raise CompileError(f"cannot run a tool {what}: the command is empty")
    name = tool or Path(argv[0]).name
    shown = shlex.join(argv)
    extra = dict(env or {})
    prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in (shown_env or extra).items())
    command = f"{prefix} {shown}" if prefix else shown
    run_env = {**os.environ, **extra} if extra else None
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              env=run_env, check=False)
    except subprocess.TimeoutExpired as err:
        raise CompileError(
            f"{name} did not finish within {timeout:g} s {what} and was stopped{_kept(keep)}; "
            "run the command below to reproduce",
            log=_text(err.stdout) + _text(err.stderr), command=command) from err
    except OSError as err:
        tip = f"; {hint}" if hint else ""
        raise CompileError(
            f"{name} ({argv[0]!r}) could not be run {what}: {err.strerror or err}{tip}",
            command=command) from err
    if check and proc.returncode != 0:
        raise CompileError(
            f"{name} failed (exit code {proc.returncode}) {what}{_kept(keep)}; run the "
            "command below to reproduce",
            log=(proc.stdout or "") + (proc.stderr or ""), command=command)
    return proc


def compile_in_folder(source: str, command: Callable[[Path, Path], Sequence[str]], what: str, *,
                      prefix: str, files: tuple[str, str], output: str = "output",
                      env: Mapping[str, str] | None = None, tool: str | None = None,
                      timeout: float = DEFAULT_TIMEOUT_S) -> bytes:
    """Compile ``source`` with one tool run and return what it wrote.

    ``source`` goes to ``files[0]`` in a fresh work folder (``prefix``); ``command(src, out)`` is
    run there with :func:`run_tool` (``what``, ``env``, ``tool``, ``timeout`` as there; a failed
    run keeps the source); the bytes of ``files[1]`` are returned and the folder removed. A run
    that writes no ``files[1]`` is a :class:`~tvm.error.CompileError` "<tool> wrote no
    <output> <what>" with the tool's output.
    """
    folder = work_folder(prefix)
    src, out = folder / files[0], folder / files[1]
    src.write_text(source, encoding="utf-8")
    argv = [os.fspath(a) for a in command(src, out)]
    result = run_tool(argv, what, timeout, env=env, keep=src, tool=tool)
    if not out.is_file():
        raise CompileError(f"{tool or Path(argv[0]).name} wrote no {output} {what}",
                           log=result.stderr + result.stdout, command=shlex.join(argv))
    data = out.read_bytes()
    shutil.rmtree(folder, ignore_errors=True)
    return data


def _kept(keep: str | os.PathLike[str] | None) -> str:
    return f" (its input is kept at {os.fspath(keep)})" if keep is not None else ""


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data
