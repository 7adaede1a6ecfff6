"""Compiler failures and lowering errors at the script line (issue 26, item 5): the C
compiler's error is mapped back through the generated line, with the raw log in ``.log``;
ptxas-style errors that name a kernel go to the kernel; ``axis_separators`` is a located tvm
error."""

from __future__ import annotations

import inspect
from typing import Any, no_type_check

import pytest

import tvm
from tvm._registry import snapshot_all
from tvm.codegen.source_map import locate_compile_error
from tvm.error import CompileError, LoweringValueError
from tvm.ir.span import Span
from tvm.script import tirx as T


def _line_of(fn: Any, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@no_type_check
def _extern() -> Any:
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.call_extern("float32", "no_such_function", A[i])

    return f


def test_a_c_compiler_error_is_located_at_the_script_line() -> None:
    with pytest.raises(CompileError) as info:
        tvm.compile(_extern(), target="c")
    err = info.value
    line = _line_of(_extern, "no_such_function")
    text = str(err)
    assert text.startswith(f"{__file__}:{line}:13: error: the C compiler failed")
    assert "error: implicit declaration of function ‘no_such_function’" in text
    assert "(the compiler's full output is in this error's .log)" in text
    assert "cc1: some warnings being treated as errors" in err.log  # the raw log, whole
    assert "cc1:" not in text


def test_a_log_naming_a_kernel_is_located_at_the_kernel() -> None:
    @T.prim_func
    def k(A: T.Buffer((32,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([32])
        A[tx] = A[tx] + 1.0

    from tvm.driver import lower
    from tvm.target import Target, TargetKind, register_target_kind

    restore = snapshot_all()
    try:
        register_target_kind(TargetKind("limits_test_gpu", device_type="cuda"))
        mod = lower(k, target=Target("limits_test_gpu"))
    finally:
        restore()
    err = CompileError("ptxas failed", log="ptxas error   : Entry function 'k_kernel' uses too "
                                           "much shared data (0x3c000 bytes, 0xc000 max)\n")
    located = locate_compile_error(err, "", [], mod)
    assert located is not err
    assert located.span is not None and located.span.line == _line_of(
        test_a_log_naming_a_kernel_is_located_at_the_kernel, "T.cta_id([1])")
    assert "Entry function 'k_kernel' uses too much shared data" in str(located)
    assert located.log == err.log


def test_a_log_naming_no_line_of_ours_leaves_the_error_alone() -> None:
    err = CompileError("NVRTC failed", log="/usr/include/x.h(3): error: something\n")
    span = Span("k.py", 3, 4, 9, "x = 1")
    assert locate_compile_error(err, "line\n", [("line", [span])]) is err


@no_type_check
def _separators() -> Any:
    @T.prim_func
    def f(a: T.handle):
        A = T.match_buffer(a, (4, 4), "float32", axis_separators=[1])
        for i, j in T.grid(4, 4):
            A[i, j] = 1.0

    return f


def test_axis_separators_is_a_located_tvm_error() -> None:
    line = _line_of(_separators, "axis_separators=[1]")
    with pytest.raises(LoweringValueError, match=rf"^{__file__}:{line}:9: error: buffer A has "
                                                 r"axis_separators \[1\], which ask for a "
                                                 r"physical buffer of 2 dimensions; the codegens "
                                                 r"here take 1-D \(flat\) buffers only: drop "
                                                 r"axis_separators\n"):
        tvm.compile(_separators(), target="c")
