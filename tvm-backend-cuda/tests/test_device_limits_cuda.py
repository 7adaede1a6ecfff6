"""CUDA device limits checked before codegen, at the script line that asks (issue 26, item 5),
and NVRTC failures located at the script line, the raw log in ``.log``."""

from __future__ import annotations

import inspect
from typing import Any, no_type_check

import pytest

import tvm
from tvm.error import CompileError, DeviceLimitError
from tvm.script import tirx as T
from tvm_backend_cuda.plugin import register_backend

register_backend()

H100 = "nvidia/nvidia-h100"


def _line_of(fn: Any, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@no_type_check
def _grid(y: int) -> Any:
    @T.prim_func
    def tall(A: T.Buffer((65536,), "float32")):
        T.device_entry()
        bx, by = T.cta_id([1, y])
        tx = T.thread_id([32])
        A[by] = A[by] + 1.0

    return tall


def test_grid_y_of_65536_is_a_located_compile_time_error() -> None:
    with pytest.raises(DeviceLimitError) as info:
        tvm.compile(_grid(65536), target=H100)
    err = info.value
    line = _line_of(_grid, "T.cta_id([1, y])")
    head, source = str(err).splitlines()[:2]
    assert head == (f"{__file__}:{line}:9: error: kernel `tall_kernel`: grid dimension y is "
                    "65536 (T.cta_id); target 'cuda' (nvidia/nvidia-h100) allows at most 65535 "
                    "(max_grid_dims): put the longest extent first (grid x allows 2147483647), "
                    "or loop over part of it inside the kernel")
    assert source.strip() == "bx, by = T.cta_id([1, y])"
    assert err.limit == "max_grid_dims" and isinstance(err, tvm.error.DiagnosticError)
    assert isinstance(err, tvm.error.CodegenError)


def test_grid_y_of_65535_compiles() -> None:
    assert tvm.compile(_grid(65535), target=H100).cubin[:4] == b"\x7fELF"


@no_type_check
def _shared(n: int, scope: str) -> Any:
    @T.prim_func
    def smem(A: T.Buffer((256,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([256])
        S = T.alloc_buffer((n,), "float32", scope=scope)
        S[tx] = A[tx]
        A[tx] = S[tx] + 1.0

    return smem


def test_240_kb_of_static_shared_memory_is_located_not_a_ptxas_message() -> None:
    # past 48 KB the static buffers are placed in dynamic shared memory, so the limit that
    # refuses them is the arch's opt-in one
    with pytest.raises(DeviceLimitError, match=(
            rf"^{__file__}:{_line_of(_shared, 'T.alloc_buffer')}:9: error: kernel "
            r"`smem_kernel`: shared buffer `S` brings its shared memory to 245760 bytes; target "
            r"'cuda' \(nvidia/nvidia-h100\) allows at most 232448 "
            r"\(max_dynamic_shared_memory_per_block\): use smaller tiles\n")):
        tvm.compile(_shared(61440, "shared"), target=H100)


def test_static_shared_memory_past_48_kb_goes_to_dynamic_shared_memory() -> None:
    big = tvm.compile(_shared(25600, "shared"), target=H100)  # 100 KB
    assert "tvm_dyn_smem" in big.inspect_source()
    assert "__shared__ float S[" not in big.inspect_source()
    assert big.cubin[:4] == b"\x7fELF"
    small = tvm.compile(_shared(4096, "shared"), target=H100)  # 16 KB stays static
    assert "__shared__" in small.inspect_source() and "tvm_dyn_smem" not in small.inspect_source()


def test_dynamic_shared_memory_is_checked_against_the_arch_opt_in_limit() -> None:
    with pytest.raises(DeviceLimitError, match=r"brings its shared memory to 245760 bytes; target "
                                               r"'cuda' \(nvidia/nvidia-h100\) allows at most "
                                               r"232448 \(max_dynamic_shared_memory_per_block\)"):
        tvm.compile(_shared(61440, "shared.dyn"), target=H100)
    with pytest.raises(DeviceLimitError, match=r"allows at most 166912 "
                                               r"\(max_dynamic_shared_memory_per_block\)"):
        tvm.compile(_shared(45000, "shared.dyn"), target="nvidia/nvidia-a100")
    assert tvm.compile(_shared(45000, "shared.dyn"), target=H100).cubin[:4] == b"\x7fELF"


@no_type_check
def _threads(x: int, z: int = 1) -> Any:
    @T.prim_func
    def wide(A: T.Buffer((4096,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx, ty, tz = T.thread_id([x, 1, z])
        A[tx] = A[tx] + 1.0

    return wide


def test_threads_per_block_and_block_dims() -> None:
    with pytest.raises(DeviceLimitError, match=r"kernel `wide_kernel`: a block of 2048 threads; "
                                               r"target 'cuda' \(nvidia/nvidia-h100\) allows at "
                                               r"most 1024 \(max_threads_per_block\)"):
        tvm.compile(_threads(1024, 2), target=H100)
    with pytest.raises(DeviceLimitError, match=r"block dimension z is 65 \(T.thread_id\); target "
                                               r"'cuda' \(nvidia/nvidia-h100\) allows at most 64 "
                                               r"\(max_block_dims\)"):
        tvm.compile(_threads(8, 65), target=H100)


def test_a_user_stated_smaller_device_is_checked() -> None:
    target = {"kind": "cuda", "arch": "sm_80", "max_threads_per_block": 256,
              "max_num_threads": 256}
    with pytest.raises(DeviceLimitError, match=r"a block of 512 threads; target 'cuda' allows "
                                               r"at most 256 \(max_threads_per_block\)"):
        tvm.compile(_threads(512), target=target)


@no_type_check
def _fp8_mul() -> Any:
    @T.prim_func
    def mul(A: T.Buffer((128,), "float8_e4m3fn"), B: T.Buffer((128,), "float8_e4m3fn"),
            C: T.Buffer((128,), "float8_e4m3fn")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([128])
        C[tx] = A[tx] * B[tx]

    return mul


def test_an_nvrtc_failure_is_located_at_the_script_line_with_the_log_kept() -> None:
    with pytest.raises(CompileError) as info:
        tvm.compile(_fp8_mul(), target=H100)
    err = info.value
    text = str(err)
    line = _line_of(_fp8_mul, "C[tx] = A[tx] * B[tx]")
    assert text.startswith(f"{__file__}:{line}:9: error: NVRTC ")
    assert 'error: no operator "*" matches these operands' in text
    assert "operand types are: __nv_fp8_e4m3 * __nv_fp8_e4m3" in text
    assert "(the compiler's full output is in this error's .log)" in text
    assert "cuda_bf16.h" not in text and len(text) < 1200  # was a 2.5 KB dump
    assert "cuda_bf16.h" in err.log and 'no operator "*"' in err.log
    assert err.span is not None and err.span.line == line
