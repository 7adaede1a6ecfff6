"""run_tool: every external tool runs with a timeout, and every failure is one CompileError."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tvm.error import CompileError
from tvm.runtime.tool import compile_in_folder, run_tool

ROOT = Path(__file__).resolve().parents[3]
SOURCE_TREES = [ROOT / "core" / "src", *ROOT.glob("tvm-backend-*/src"),
                *ROOT.glob("plugins/*/src")]


def test_a_tool_that_fails_carries_command_log_and_kept_input(tmp_path):
    src = tmp_path / "kernel.c"
    src.write_text("broken\n")
    script = "import sys; print('out line'); print('bad token in kernel.c', file=sys.stderr); " \
             "sys.exit(3)"
    cmd = [sys.executable, "-c", script, str(src)]
    with pytest.raises(CompileError) as info:
        run_tool(cmd, "compiling kernel 'k'", 30, keep=src, tool="the test compiler")
    err = info.value
    first = str(err).splitlines()[0]
    assert first == (f"the test compiler failed (exit code 3) compiling kernel 'k' (its input is "
                     f"kept at {src}); run the command below to reproduce")
    assert err.command == shlex.join(cmd)
    assert f"\ncommand: {shlex.join(cmd)}" in str(err)
    assert "out line" in err.log and "bad token in kernel.c" in err.log
    # the command in the error reproduces the failure
    again = subprocess.run(shlex.split(err.command), capture_output=True, text=True)
    assert again.returncode == 3 and "bad token" in again.stderr


def test_a_tool_that_times_out_is_stopped():
    cmd = [sys.executable, "-c", "import sys, time; print('started', flush=True); time.sleep(30)"]
    with pytest.raises(CompileError) as info:
        run_tool(cmd, "checking the shader", 0.5)
    err = info.value
    name = Path(sys.executable).name
    assert str(err).startswith(f"{name} did not finish within 0.5 s checking the shader and was "
                               "stopped; run the command below to reproduce")
    assert err.command == shlex.join(cmd)


def test_a_missing_tool_says_how_to_install_it(tmp_path):
    missing = str(tmp_path / "no-such-compiler")
    with pytest.raises(CompileError) as info:
        run_tool([missing, "-c", "x.c"], "compiling the module", hint="install it with apt")
    text = str(info.value)
    assert text.startswith(f"no-such-compiler ({missing!r}) could not be run compiling the "
                           "module: No such file or directory; install it with apt")
    assert info.value.command == shlex.join([missing, "-c", "x.c"])


def test_a_file_that_is_not_executable_is_a_compile_error(tmp_path):
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\nexit 0\n")  # no x bit
    with pytest.raises(CompileError, match=r"could not be run probing it: Permission denied"):
        run_tool([str(tool)], "probing it")


def test_check_false_returns_the_failed_run_and_env_is_shown_in_the_command():
    cmd = [sys.executable, "-c", "import os, sys; print(os.environ['TVM_TOOL_T']); sys.exit(2)"]
    proc = run_tool(cmd, "probing it", 30, env={"TVM_TOOL_T": "a b"}, check=False)
    assert proc.returncode == 2 and proc.stdout.strip() == "a b"
    with pytest.raises(CompileError) as info:
        run_tool(cmd, "probing it", 30, env={"TVM_TOOL_T": "a b"})
    assert info.value.command == "TVM_TOOL_T='a b' " + shlex.join(cmd)


def test_an_empty_command_is_refused():
    with pytest.raises(CompileError, match="cannot run a tool compiling x: the command is empty"):
        run_tool([], "compiling x")


_DIRECT = re.compile(r"\bsubprocess\.(run|Popen|call|check_call|check_output)\b|\bos\.(system|"
                     r"popen|exec\w*|spawn\w*)\(")


def test_compile_in_folder_returns_the_output_and_removes_the_folder():
    copy = "import shutil, sys; shutil.copy(sys.argv[1], sys.argv[2])"
    seen = []

    def command(src, out):
        seen.append(src.parent)
        return [sys.executable, "-c", copy, str(src), str(out)]

    data = compile_in_folder("int x;\n", command, "copying 'k'", prefix="tvm-test-",
                             files=("k.c", "k.o"), output="object file")
    assert data == b"int x;\n"
    assert not seen[0].exists()


def test_compile_in_folder_without_output_names_the_tool_and_what_it_did():
    def command(src, out):
        return [sys.executable, "-c", "print('nothing written')", str(src)]

    with pytest.raises(CompileError) as info:
        compile_in_folder("int x;\n", command, "compiling 'k'", prefix="tvm-test-",
                          files=("k.c", "k.o"), output="object file", tool="the test compiler")
    assert str(info.value).splitlines()[0] == "the test compiler wrote no object file compiling 'k'"
    assert "nothing written" in info.value.log


def test_every_tool_in_the_sources_runs_through_run_tool():
    offenders = []
    for tree in SOURCE_TREES:
        for path in tree.rglob("*.py"):
            if path.name == "tool.py" and path.parent.name == "runtime":
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if _DIRECT.search(line):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == [], "run external tools with tvm.runtime.tool.run_tool:\n" + "\n".join(
        offenders)
