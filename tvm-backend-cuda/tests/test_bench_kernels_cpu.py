"""The memory-bound kernels of ``bench/kernels`` without a GPU: numerics on the CPU emulator
(odd row lengths, a row count that leaves a CTA partly idle, both dtypes), and the generated
code at the benchmark's shapes: 16-byte global loads and stores, nothing in local memory."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tvm
from tvm_backend_cuda.plugin import register_backend

register_backend()
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from cta_emulator import run_kernel  # noqa: E402
from kernels import add, layernorm, rmsnorm, softmax  # noqa: E402


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


ROW_CASES = [("softmax", 5, 136, "bfloat16"), ("softmax", 3, 1024, "float32"),
             ("softmax", 2, 4096, "bfloat16"), ("rmsnorm", 9, 1024, "bfloat16"),
             ("rmsnorm", 2, 2056, "float32"), ("layernorm", 3, 1000, "float32"),
             ("layernorm", 2, 4104, "bfloat16")]


@pytest.mark.parametrize("kind, m, n, dtype", ROW_CASES)
def test_row_kernel_on_the_emulator(kind: str, m: int, n: int, dtype: str) -> None:
    rng = np.random.default_rng(m * n)
    dt = _np(dtype)
    args = [(rng.standard_normal((m, n)) * 3).astype(dt)]
    if kind != "softmax":
        args.append((rng.random(n) + 0.5).astype(dt))
    if kind == "layernorm":
        args.append(rng.standard_normal(n).astype(dt))
    args.append(np.full((m, n), np.nan, dtype=dt))
    factory = {"softmax": softmax.softmax, "rmsnorm": rmsnorm.rmsnorm,
               "layernorm": layernorm.layernorm}[kind]
    run_kernel(factory(m, n, dtype), args)
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
    f = add.add(n, dtype)
    run_kernel(f, [a, b, c], blocks=None)
    want = (a.astype(np.float32) + b.astype(np.float32)).astype(dt)
    np.testing.assert_array_equal(c, want)


def test_bad_shapes_say_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="the row length must be a positive multiple of 8, got 100"):
        softmax.softmax(4, 100)
    with pytest.raises(ValueError, match=r"dtype 'float16': the row kernels take \('float32', "
                                         r"'bfloat16'\)"):
        rmsnorm.rmsnorm(4, 64, "float16")
    with pytest.raises(ValueError, match="n must be a positive multiple of 8, got 12"):
        add.add(12)


PTX_CASES = [("add", (1 << 28,)), ("softmax", (8192, 8192)), ("rmsnorm", (32768, 1024)),
             ("layernorm", (4096, 4096))]


@pytest.mark.parametrize("kind, shape", PTX_CASES)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_bench_kernel_ptx_moves_16_bytes(kind: str, shape: tuple[int, ...], dtype: str) -> None:
    factory = {"add": add.add, "softmax": softmax.softmax, "rmsnorm": rmsnorm.rmsnorm,
               "layernorm": layernorm.layernorm}[kind]
    ex = tvm.compile(factory(*shape, dtype=dtype), target={"kind": "cuda", "arch": "sm_90a"})
    ptx = ex.inspect_source("ptx")
    kinds = set(re.findall(r"\b(ld\.global[.\w]*|st\.global[.\w]*)", ptx))
    assert kinds and all(".v4." in k for k in kinds), kinds
    assert ".local" not in ptx
