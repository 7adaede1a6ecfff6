"""The host target ``c`` beside numpy: call overhead, element-wise, row-wise and GEMM kernels.

    PYTHONPATH=core/src python bench/host_perf.py [--rounds 15] [--quick]

Every kernel is TVMScript with whole-buffer tile primitives (``Tx.add``, ``Tx.max``, ...),
compiled with ``tvm.compile(..., target="c")``: the host's dispatch variants, ``FuseRowLoops``,
and the compiler flags and ISA the host backend probes. numpy computes the same thing the way
a numpy user writes it. Each row checks ours against numpy first.

Method: ours and numpy take turns, round by round (``--rounds``, default 15), so that drift on
a shared machine hits both alike; a round times a batch of calls sized to about 20 ms, and the
table gives the median per call of the rounds. ``numpy / ours`` is numpy's time over ours
(above 1: ours is faster). The header gives the machine, its cores, the load average before and
after, numpy's BLAS (threadpoolctl), the compiler, the ISA and OpenMP's thread count.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any, no_type_check

import numpy as np

import tvm
from tvm.demo import tiled_matmul_kernel
from tvm.script import tirx as T
from tvm.script.tirx import tile as Tx

EPS = 1e-5


# -- kernels ------------------------------------------------------------------------------------
@no_type_check
def add_kernel(n: int) -> Any:
    @T.prim_func
    def add(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
            C: T.Buffer((n,), "float32")):
        Tx.add(C, A, B)

    return add


@no_type_check
def softmax_kernel(m: int, n: int) -> Any:
    @T.prim_func
    def softmax(X: T.Buffer((m, n), "float32"), Y: T.Buffer((m, n), "float32")):
        row_max = T.alloc_buffer((m, 1), "float32")
        row_sum = T.alloc_buffer((m, 1), "float32")
        Tx.max(row_max, X, axes=-1)
        Tx.sub(Y, X, row_max)
        Tx.exp(Y, Y)
        Tx.sum(row_sum, Y, axes=-1)
        Tx.fdiv(Y, Y, row_sum)

    return softmax


@no_type_check
def rmsnorm_kernel(m: int, n: int) -> Any:
    inv_n = 1.0 / n

    @T.prim_func
    def rmsnorm(X: T.Buffer((m, n), "float32"), W: T.Buffer((n,), "float32"),
                Y: T.Buffer((m, n), "float32")):
        ss = T.alloc_buffer((m, 1), "float32")
        Tx.mul(Y, X, X)  # Y is the scratch row: the fused loop keeps it in cache
        Tx.sum(ss, Y, axes=-1)
        Tx.fma(ss, ss, inv_n, EPS)
        Tx.rsqrt(ss, ss)
        Tx.mul(Y, X, ss)
        Tx.mul(Y, Y, W)

    return rmsnorm


@no_type_check
def layernorm_kernel(m: int, n: int) -> Any:
    inv_n = 1.0 / n

    @T.prim_func
    def layernorm(X: T.Buffer((m, n), "float32"), G: T.Buffer((n,), "float32"),
                  Bias: T.Buffer((n,), "float32"), Y: T.Buffer((m, n), "float32")):
        mean = T.alloc_buffer((m, 1), "float32")
        var = T.alloc_buffer((m, 1), "float32")
        Tx.sum(mean, X, axes=-1)
        Tx.mul(mean, mean, inv_n)
        Tx.sub(Y, X, mean)
        Tx.mul(Y, Y, Y)
        Tx.sum(var, Y, axes=-1)
        Tx.fma(var, var, inv_n, EPS)
        Tx.rsqrt(var, var)
        Tx.sub(Y, X, mean)
        Tx.mul(Y, Y, var)
        Tx.mul(Y, Y, G)
        Tx.add(Y, Y, Bias)

    return layernorm


@no_type_check
def gemm_kernel(n: int) -> Any:
    @T.prim_func
    def gemm(A: T.Buffer((n, n), "float32"), B: T.Buffer((n, n), "float32"),
             C: T.Buffer((n, n), "float32")):
        Tx.gemm(C, A, B)

    return gemm


# -- numpy references -----------------------------------------------------------------------------
def np_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_rmsnorm(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS) * w


def np_layernorm(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + EPS) * g + b


# -- timing -------------------------------------------------------------------------------------
def _batch_size(fn: Callable[[], Any], target_s: float = 0.02) -> int:
    t = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t, 1e-7)
    return max(1, min(100_000, int(target_s / once)))


def compare(ours: Callable[[], Any], ref: Callable[[], Any], rounds: int) -> tuple[float, float]:
    """Median seconds per call of ``ours`` and ``ref``, taking turns round by round."""
    for _ in range(3):  # warm-up: thread pools, caches, page faults
        ours()
        ref()
    n_ours, n_ref = _batch_size(ours), _batch_size(ref)
    t_ours: list[float] = []
    t_ref: list[float] = []
    for _ in range(rounds):
        for fn, n, out in ((ours, n_ours, t_ours), (ref, n_ref, t_ref)):
            time.sleep(0.002)  # let the other side's worker threads go idle
            t = time.perf_counter()
            for _ in range(n):
                fn()
            out.append((time.perf_counter() - t) / n)
    return statistics.median(t_ours), statistics.median(t_ref)


# -- rows ---------------------------------------------------------------------------------------
def _fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.2f} us"
    return f"{seconds * 1e3:.3f} ms"


def run(rounds: int, quick: bool) -> list[list[str]]:
    rng = np.random.default_rng(0)
    rows: list[list[str]] = []

    def row(what: str, ours: Callable[[], Any], ref: Callable[[], Any], target: str = "") -> None:
        t_ours, t_ref = compare(ours, ref, rounds)
        rows.append([what, _fmt(t_ours), _fmt(t_ref), f"{t_ref / t_ours:.2f}x", target])
        print("  " + " | ".join(rows[-1]), flush=True)

    # call overhead: a 16-element add, ours against numpy's ufunc call
    n = 16
    ex = tvm.compile(add_kernel(n), target="c")
    a, b, c = (rng.standard_normal(n).astype("float32") for _ in range(3))
    ex(a, b, c)
    np.testing.assert_array_equal(c, a + b)
    f = ex.get_function("add")
    row("call overhead: add 16 f32, `ex(a, b, c)`", lambda: ex(a, b, c),
        lambda: np.add(a, b, out=c), "<= 3 us")
    row("call overhead: add 16 f32, `f(a, b, c)` (f = ex.get_function)", lambda: f(a, b, c),
        lambda: np.add(a, b, out=c), "<= 3 us")

    for log2 in (10, 16, 24) if not quick else (10, 16):
        n = 1 << log2
        ex = tvm.compile(add_kernel(n), target="c")
        a, b, c = (rng.standard_normal(n).astype("float32") for _ in range(3))
        ex(a, b, c)
        np.testing.assert_array_equal(c, a + b)
        row(f"add 2^{log2} f32", lambda ex=ex, a=a, b=b, c=c: ex(a, b, c),
            lambda a=a, b=b, c=c: np.add(a, b, out=c), ">= 1x" if log2 >= 16 else "")

    for m, n in ((1024, 1024), (8192, 1024)) if not quick else ((1024, 1024),):
        x = rng.standard_normal((m, n)).astype("float32")
        w = rng.standard_normal(n).astype("float32")
        bias = rng.standard_normal(n).astype("float32")
        y = np.zeros_like(x)
        ex = tvm.compile(softmax_kernel(m, n), target="c")
        ex(x, y)
        np.testing.assert_allclose(y, np_softmax(x), rtol=1e-5, atol=1e-7)
        row(f"row softmax {m}x{n} f32", lambda ex=ex, x=x, y=y: ex(x, y),
            lambda x=x: np_softmax(x), ">= 1x")
        ex = tvm.compile(rmsnorm_kernel(m, n), target="c")
        ex(x, w, y)
        np.testing.assert_allclose(y, np_rmsnorm(x, w), rtol=1e-4, atol=1e-5)
        row(f"RMSNorm {m}x{n} f32", lambda ex=ex, x=x, w=w, y=y: ex(x, w, y),
            lambda x=x, w=w: np_rmsnorm(x, w), ">= 1x")
        ex = tvm.compile(layernorm_kernel(m, n), target="c")
        ex(x, w, bias, y)
        np.testing.assert_allclose(y, np_layernorm(x, w, bias), rtol=1e-4, atol=1e-4)
        row(f"LayerNorm {m}x{n} f32", lambda ex=ex, x=x, w=w, b=bias, y=y: ex(x, w, b, y),
            lambda x=x, w=w, b=bias: np_layernorm(x, w, b), ">= 1x")

    for n in (256, 1024, 2048) if not quick else (256, 1024):
        a, b = (rng.standard_normal((n, n)).astype("float32") for _ in range(2))
        c = np.zeros((n, n), "float32")
        ex = tvm.compile(gemm_kernel(n), target="c")
        ex(a, b, c)
        np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-3, atol=1e-3 * np.sqrt(n))
        row(f"GEMM {n}^3 f32 (Tx.gemm vs numpy.matmul)", lambda ex=ex, a=a, b=b, c=c: ex(a, b, c),
            lambda a=a, b=b, c=c: np.matmul(a, b, out=c), ">= 0.5x" if n >= 1024 else "")

    n = 256
    a, b = (rng.standard_normal((n, n)).astype("float32") for _ in range(2))
    c = np.zeros((n, n), "float32")
    for t in (16, 32, 64):
        ex = tvm.compile(tiled_matmul_kernel(n, n, n, t), target="c")
        ex(a, b, c)
        np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-3, atol=1e-3 * np.sqrt(n))
        row(f"tiled matmul {n}^3 f32, {t}^3 Tx.gemm tiles in T.parallel (vs numpy.matmul)",
            lambda ex=ex, a=a, b=b, c=c: ex(a, b, c),
            lambda a=a, b=b, c=c: np.matmul(a, b, out=c))
    return rows


def header() -> list[str]:
    from tvm.host.compiler import get_toolchain

    tc = get_toolchain()
    isa = tc.vector_isa
    try:
        from threadpoolctl import threadpool_info

        blas = "; ".join(f"{i.get('internal_api')} {i.get('version')} "
                         f"({i.get('threading_layer')}, {i.get('num_threads')} threads, "
                         f"{i.get('architecture')})"
                         for i in threadpool_info() if i.get("user_api") == "blas") or "none found"
    except ImportError:
        blas = "threadpoolctl not installed"
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return [
        f"# Host target c beside numpy, {datetime.datetime.now().isoformat(timespec='seconds')}",
        f"# machine: {platform.node()} / {cpu} / {os.cpu_count()} cores / "
        f"Python {platform.python_version()} / numpy {np.__version__}",
        f"# numpy BLAS (threadpoolctl): {blas}",
        f"# compiler: {tc.version}; ISA {isa.name} ({' '.join(isa.flags) or 'default flags'}); "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="smaller sizes only")
    parser.add_argument("--smoke", action="store_true", help="--quick with 1 round")
    args = parser.parse_args()
    if args.smoke:
        args.rounds, args.quick = 1, True
    lines = header()
    load0 = os.getloadavg()
    for line in lines:
        print(line, flush=True)
    rows = run(args.rounds, args.quick)
    load1 = os.getloadavg()
    print(f"# load average (1, 5, 15 min): before {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, "
          f"after {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    print()
    print("| what | ours | numpy | numpy / ours | target |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
