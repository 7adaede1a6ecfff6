"""Metal threadgroup limits checked before codegen, at the script line (issue 26, item 5)."""

from __future__ import annotations

import inspect
from typing import Any, no_type_check

import pytest

import tvm
from tvm.error import DeviceLimitError
from tvm.script import tirx as T

M1 = "apple/m1-gpu"


def _line_of(fn: Any, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@no_type_check
def _threadgroup(threads: int, shared: int) -> Any:
    @T.prim_func
    def tg(A: T.Buffer((2048,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([threads])
        S = T.alloc_buffer((shared,), "float32", scope="shared")
        S[tx % shared] = A[tx]
        A[tx] = S[tx % shared] + 1.0

    return tg


def test_a_threadgroup_of_2048_threads_is_a_located_error() -> None:
    with pytest.raises(DeviceLimitError, match=(
            rf"^{__file__}:{_line_of(_threadgroup, 'T.thread_id')}:9: error: kernel `tg_kernel`: "
            r"a block of 2048 threads; target 'metal' \(apple/m1-gpu\) allows at most 1024 "
            r"\(max_threads_per_block\): use fewer threads per block and more blocks\n")):
        tvm.compile(_threadgroup(2048, 64), target=M1)


def test_64_kb_of_threadgroup_memory_is_a_located_error() -> None:
    with pytest.raises(DeviceLimitError, match=(
            rf"^{__file__}:{_line_of(_threadgroup, 'T.alloc_buffer')}:9: error: kernel "
            r"`tg_kernel`: shared buffer `S` brings its shared memory to 65536 bytes; target "
            r"'metal' \(apple/m1-gpu\) allows at most 32768 \(max_shared_memory_per_block\): use "
            r"smaller tiles\n")):
        tvm.compile(_threadgroup(256, 16384), target=M1)


def test_within_the_limits_compiles() -> None:
    assert "threadgroup" in tvm.compile(_threadgroup(1024, 8192), target=M1).inspect_source()
