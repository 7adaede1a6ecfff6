"""The smaller findings of issue 26 (item 6): a non-string ``scope=``, the files of
``TVM_CACHE=0``, the work folders of killed compiles, and the longest flat sum that parses."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import tvm
from tvm.error import DiagnosticError
from tvm.runtime import workdir


@pytest.mark.parametrize("scope", ["3", "None", '["shared"]'])
def test_a_non_string_scope_is_a_parse_error(scope: str) -> None:
    source = textwrap.dedent(f"""
        from tvm.script import tirx as T

        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            B = T.alloc_buffer((4,), "float32", scope={scope})
            for i in range(4):
                B[i] = A[i]
        """)
    with pytest.raises(DiagnosticError, match=r"^<string>:6:5: error: buffer B: scope must be a "
                                              r"storage scope string such as 'global', 'shared' "
                                              r"or 'local', not "):
        tvm.script.from_source(source)


_COMPILE_TWICE = textwrap.dedent("""
    import numpy as np, tvm
    from tvm.script import tirx as T

    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = A[i] + 1.0

    for _ in range(2):
        a = np.zeros(4, "float32")
        tvm.compile(f, target="c")(a)
        assert a.tolist() == [1.0] * 4
    print("ok")
""")


def test_tvm_cache_0_leaves_no_files_behind(tmp_path) -> None:
    # Before: every compile left a /tmp/tvm-nocache-*.bin file.
    script = _script(tmp_path / "src")
    env = {**os.environ, "TVM_CACHE": "0", "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    proc = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
    left = [p for p in (tmp_path / "tmp").rglob("*") if p.is_file()]
    assert left == []


def _script(folder: Path) -> Path:
    folder.mkdir()
    path = folder / "compile_twice.py"  # @T.prim_func reads its source from a file
    path.write_text(_COMPILE_TWICE)
    return path


# the real compiler for tvm's probes; a compile of the module hangs until killed
_SLOW_CC = """#!/bin/sh
case "$*" in *module.c*) sleep 60 ;; esac
exec cc "$@"
"""


def test_the_work_folder_of_a_killed_compile_is_swept(tmp_path, monkeypatch) -> None:
    cc = tmp_path / "slow-cc"
    cc.write_text(_SLOW_CC)
    cc.chmod(0o755)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TVM_CACHE": "0", "TMPDIR": str(tmp), "CC": str(cc)}
    proc = subprocess.Popen([sys.executable, str(_script(tmp_path / "src"))], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    root = tmp / f"tvm-work-{os.getuid()}"
    deadline = time.time() + 120
    while time.time() < deadline and not list(root.glob(f"tvm-c-{proc.pid}-*")):
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    (left,) = root.glob(f"tvm-c-{proc.pid}-*")  # the compile could not clean up
    assert (left / "module.c").is_file()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    monkeypatch.setattr(workdir, "STALE_S", 0.0)
    assert workdir.work_root() == root
    removed = workdir.sweep_stale(root, force=True)
    assert removed == [left] and not left.exists()


def test_a_live_process_folder_is_never_swept(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(workdir, "STALE_S", 0.0)
    mine = workdir.work_folder("tvm-test-")
    assert mine.parent == workdir.work_root()
    assert oct(Path(mine.parent).stat().st_mode & 0o777) == "0o700"
    assert workdir.sweep_stale(mine.parent, force=True) == [] and mine.exists()


def _flat_sum(n: int, op: str = "+") -> str:
    terms = f" {op} ".join(f"A[{i % 8}]" for i in range(n))
    return textwrap.dedent(f"""
        from tvm.script import tirx as T

        @T.prim_func
        def f(A: T.Buffer((8,), "float64"), B: T.Buffer((1,), "float64")):
            B[0] = {terms}
        """)


def test_a_flat_sum_of_300_terms_parses_prints_and_runs() -> None:
    # Before: 156 terms at most (the printer recursed once per term).
    f = tvm.script.from_source(_flat_sum(300))
    again = tvm.script.from_source(f.script())
    assert tvm.ir.structural_equal(f, again)
    a = np.arange(8, dtype="float64")
    b = np.zeros(1, "float64")
    tvm.compile(f, target="c")(a, b)
    assert b[0] == sum(float(a[i % 8]) for i in range(300))


def test_a_flat_product_of_300_terms_prints_back() -> None:
    f = tvm.script.from_source(_flat_sum(300, "*"))
    assert tvm.ir.structural_equal(f, tvm.script.from_source(f.script()))


def test_a_longer_flat_sum_is_refused_where_it_is_written() -> None:
    with pytest.raises(DiagnosticError, match=r"^<string>:6:\d+: error: this expression nests "
                                              r"more than 160 levels deep"):
        tvm.script.from_source(_flat_sum(400))
