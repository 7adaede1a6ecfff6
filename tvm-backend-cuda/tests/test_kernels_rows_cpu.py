"""The memory-bound kernels of ``tvm_backend_cuda.kernels`` without a GPU: numerics on the CPU emulator
(odd row lengths, a row count that leaves a CTA partly idle, both dtypes), and the generated
code at the benchmark's shapes: 16-byte global loads and stores, nothing in local memory."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import tvm
from tvm_backend_cuda.plugin import register_backend

register_backend()

from cta_emulator import run_kernel  # noqa: E402

from tvm_backend_cuda.kernels import (  # noqa: E402
    add_func,
    layer_norm_func,
    rms_norm_func,
    softmax_func,
)
from tvm_backend_cuda.kernels._rows import plan_rows, thread_choices  # noqa: E402

FACTORIES = {"softmax": softmax_func, "rmsnorm": rms_norm_func, "layernorm": layer_norm_func,
             "add": add_func}


def _np(dtype: str) -> Any:
    import ml_dtypes

    return ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float32


def _ref(kind: str, args: list[np.ndarray]) -> np.ndarray:
    x = args[0].astype(np.float64)
    if kind == "softmax":
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)
    w = args[1].astype(np.float64)
    if kind == "rmsnorm":
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-6) * w
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * w + args[2].astype(np.float64)


# (kind, m, n, dtype, threads a row: None = the planner's; the others are tuning candidates)
ROW_CASES = [("softmax", 5, 136, "bfloat16", None), ("softmax", 3, 1024, "float32", None),
             ("softmax", 2, 4096, "bfloat16", None), ("rmsnorm", 9, 1024, "bfloat16", None),
             ("rmsnorm", 2, 2056, "float32", None), ("layernorm", 3, 1000, "float32", None),
             ("layernorm", 2, 4104, "bfloat16", None), ("softmax", 5, 1024, "float32", 32),
             ("rmsnorm", 2, 1000, "bfloat16", 64), ("layernorm", 2, 2048, "float32", 512)]


@pytest.mark.parametrize("kind, m, n, dtype, threads", ROW_CASES)
def test_row_kernel_on_the_emulator(kind: str, m: int, n: int, dtype: str,
                                    threads: int | None) -> None:
    rng = np.random.default_rng(m * n)
    dt = _np(dtype)
    args = [(rng.standard_normal((m, n)) * 3).astype(dt)]
    if kind != "softmax":
        args.append((rng.random(n) + 0.5).astype(dt))
    if kind == "layernorm":
        args.append(rng.standard_normal(n).astype(dt))
    args.append(np.full((m, n), np.nan, dtype=dt))
    run_kernel(FACTORIES[kind](m, n, dtype, threads=threads), args)
    got = args[-1].astype(np.float64)
    assert not np.isnan(got).any()
    want = _ref(kind, args)
    tol = 1e-5 if dtype == "float32" else 1e-2
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < tol


@pytest.mark.parametrize("n, dtype", [(8, "float32"), (4096 + 8, "bfloat16"),
                                      (2 * 4096, "float32")])
def test_add_on_the_emulator(n: int, dtype: str) -> None:
    rng = np.random.default_rng(n)
    dt = _np(dtype)
    a, b = rng.standard_normal(n).astype(dt), rng.standard_normal(n).astype(dt)
    c = np.full(n, np.nan, dtype=dt)
    f = add_func(n, dtype)
    run_kernel(f, [a, b, c], blocks=None)
    want = (a.astype(np.float32) + b.astype(np.float32)).astype(dt)
    np.testing.assert_array_equal(c, want)


def test_bad_shapes_say_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="the row length must be a positive multiple of 8, got 100"):
        softmax_func(4, 100)
    with pytest.raises(ValueError, match=r"dtype 'float16': the row kernels take \('float32', "
                                         r"'bfloat16'\)"):
        rms_norm_func(4, 64, "float16")
    with pytest.raises(ValueError, match="n must be a positive multiple of 8, got 12"):
        add_func(12)


PTX_CASES = [("add", (1 << 28,)), ("softmax", (8192, 8192)), ("rmsnorm", (32768, 1024)),
             ("layernorm", (4096, 4096))]


@pytest.mark.parametrize("kind, shape", PTX_CASES)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_bench_kernel_ptx_moves_16_bytes(kind: str, shape: tuple[int, ...], dtype: str) -> None:
    ex = tvm.compile(FACTORIES[kind](*shape, dtype=dtype), target={"kind": "cuda", "arch": "sm_90a"})
    ptx = ex.inspect_source("ptx")
    kinds = set(re.findall(r"\b(ld\.global[.\w]*|st\.global[.\w]*)", ptx))
    assert kinds and all(".v4." in k for k in kinds), kinds
    assert ".local" not in ptx


def test_thread_layout_choices() -> None:
    # the planner's choice first, then the powers of two whose vectors fit the registers
    assert thread_choices(4096, "bfloat16") == [256, 64, 128, 512]
    assert thread_choices(64, "float32") == [32]
    assert plan_rows(1024, "float32", 32).rows_per_cta == 4  # one warp a row
    with pytest.raises(ValueError, match="threads=48: a row takes a multiple of 32 threads"):
        plan_rows(1024, "float32", 48)
    with pytest.raises(ValueError, match="threads=32: a row of 8192 float32 would take 256 "
                                         "elements a thread"):
        plan_rows(8192, "float32", 32)
