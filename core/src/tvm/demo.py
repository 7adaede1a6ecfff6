"""The main job: ``python -m tvm demo`` compiles and runs real kernels, checks them against
numpy and prints a table of time and correctness.

Rows come from every loaded backend through the ``tvm_demo_cases`` hook: the host backend ``c``
adds the kernels of :data:`KERNELS` for the CPU; a GPU backend adds its own rows when its
hardware is present (it may reuse :data:`KERNELS` with :func:`make_case`, giving functions that
move arrays to and from its device). The exit code is 1 when any row fails.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO, no_type_check

from . import driver
from .backend import ensure_builtin_backends, list_backends
from .plugin import DemoCase, DemoResult, get_plugin_manager
from .script import tirx as T
from .script.tirx import tile as Tx

__all__ = ["KERNELS", "DemoKernel", "add_arguments", "collect_cases", "format_sources",
           "format_table", "main", "make_case", "matmul_demo", "rand_f32", "row_softmax_kernel", "run", "run_cases",
           "softmax_demo", "softmax_ref",
           "tiled_matmul_kernel", "zeros_f32"]


@dataclass(frozen=True)
class DemoKernel:
    """A demo kernel: ``build()`` returns the PrimFunc; ``inputs(rng)`` the argument arrays
    (outputs included, in parameter order); ``reference(*inputs)`` the expected output;
    ``output`` the index of the output argument."""

    name: str
    build: Callable[[], Any]
    inputs: Callable[[Any], list[Any]]
    reference: Callable[..., Any]
    output: int
    rtol: float = 1e-5
    atol: float = 1e-5


# -- kernels (TVMScript) --------------------------------------------------------------------------

VADD_N = 1 << 16
SOFTMAX_M, SOFTMAX_N = 256, 512
MATMUL_M = MATMUL_N = MATMUL_K = 256
TILE = 32


@no_type_check  # TVMScript: the parser, not Python, gives these annotations meaning
def _vector_add() -> Any:
    n, threads = VADD_N, 128

    @T.prim_func
    def vector_add(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
                   C: T.Buffer((n,), "float32")):
        T.device_entry()
        bx = T.cta_id([n // threads])
        tx = T.thread_id([threads])
        C[bx * threads + tx] = A[bx * threads + tx] + B[bx * threads + tx]

    return vector_add


@no_type_check  # TVMScript: the parser, not Python, gives these annotations meaning
def _softmax() -> Any:
    m, n = SOFTMAX_M, SOFTMAX_N

    @T.prim_func
    def softmax(A: T.Buffer((m, n), "float32"), B: T.Buffer((m, n), "float32")):
        row_max = T.alloc_buffer((m,), "float32")
        row_sum = T.alloc_buffer((m,), "float32")
        for i in T.parallel(m):
            Tx.max(row_max[i:i + 1], A[i:i + 1, 0:n], axes=-1)
            Tx.sub(B[i:i + 1, 0:n], A[i:i + 1, 0:n], row_max[i])
            Tx.exp(B[i:i + 1, 0:n], B[i:i + 1, 0:n])
            Tx.sum(row_sum[i:i + 1], B[i:i + 1, 0:n], axes=-1)
            Tx.fdiv(B[i:i + 1, 0:n], B[i:i + 1, 0:n], row_sum[i])

    return softmax


@no_type_check  # TVMScript: the parser, not Python, gives these annotations meaning
def row_softmax_kernel(m: int, n: int, threads: int) -> Any:
    """``B = softmax(A)`` over the rows of an ``m x n`` array in the kernel form: one CTA of
    ``threads`` threads per row, the row max and sum by ``Tx.cta`` reductions (each GPU
    backend's CTA variants, or core's with its barrier)."""

    @T.prim_func
    def softmax(A: T.Buffer((m, n), "float32"), B: T.Buffer((m, n), "float32")):
        T.device_entry()
        bx = T.cta_id([m])
        tx = T.thread_id([threads])
        red = T.alloc_buffer((1,), "float32", scope="shared")
        Tx.cta.max(red[0:1], A[bx:bx + 1, 0:n], axes=-1)
        Tx.cta.sub(B[bx:bx + 1, 0:n], A[bx:bx + 1, 0:n], red[0])
        Tx.cta.exp(B[bx:bx + 1, 0:n], B[bx:bx + 1, 0:n])
        Tx.cta.sum(red[0:1], B[bx:bx + 1, 0:n], axes=-1)
        Tx.cta.fdiv(B[bx:bx + 1, 0:n], B[bx:bx + 1, 0:n], red[0])

    return softmax


@no_type_check  # TVMScript: the parser, not Python, gives these annotations meaning
def tiled_matmul_kernel(m: int = MATMUL_M, n: int = MATMUL_N, k: int = MATMUL_K,
                        t: int = TILE) -> Any:
    """``C = A @ B`` in ``t``-square tiles of C (a parallel loop over tile rows), each
    accumulated from ``Tx.gemm`` calls on ``t``-square tiles of A and B."""

    @T.prim_func
    def matmul(A: T.Buffer((m, k), "float32"), B: T.Buffer((k, n), "float32"),
               C: T.Buffer((m, n), "float32")):
        for bi in T.parallel(m // t):
            for bj in T.serial(n // t):
                acc = T.alloc_buffer((t, t), "float32", scope="local")
                Tx.fill(acc, 0.0)
                for kk in T.serial(k // t):
                    Tx.gemm(acc, A[bi * t:bi * t + t, kk * t:kk * t + t],
                            B[kk * t:kk * t + t, bj * t:bj * t + t], acc, beta=1.0)
                Tx.copy(C[bi * t:bi * t + t, bj * t:bj * t + t], acc)

    return matmul


def rand_f32(rng: Any, *shape: int) -> Any:
    """A float32 array of ``shape`` drawn from ``rng`` (demo inputs)."""
    return rng.standard_normal(shape).astype("float32")


def zeros_f32(*shape: int) -> Any:
    """A float32 array of zeros (a demo output)."""
    import numpy as np

    return np.zeros(shape, "float32")


def softmax_ref(a: Any, _out: Any = None) -> Any:
    """numpy's softmax over the last axis, in float64 (the reference of the softmax rows)."""
    import numpy as np

    e = np.exp(a.astype("float64") - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def softmax_demo(name: str, build: Callable[[], Any], m: int, n: int) -> DemoKernel:
    """The row softmax demo of an ``[m, n]`` float32 input: ``build()`` returns a kernel
    ``(A, B)`` with ``B = softmax(A)`` over rows (every backend's softmax row)."""
    return DemoKernel(name, build, lambda rng: [rand_f32(rng, m, n), zeros_f32(m, n)],
                      softmax_ref, output=1, rtol=1e-4, atol=1e-6)


def matmul_demo(name: str, build: Callable[[], Any], m: int, k: int, n: int) -> DemoKernel:
    """The float32 matmul demo ``C = A @ B`` (``[m, k] @ [k, n]``): ``build()`` returns a kernel
    ``(A, B, C)``; checked against numpy's product in float64 (every backend's matmul row)."""
    return DemoKernel(name, build,
                      lambda rng: [rand_f32(rng, m, k), rand_f32(rng, k, n), zeros_f32(m, n)],
                      lambda a, b, _c: a.astype("float64") @ b.astype("float64"), output=2,
                      rtol=1e-4, atol=1e-3)


KERNELS: list[DemoKernel] = [
    DemoKernel("vector add", _vector_add,
               lambda rng: [rand_f32(rng, VADD_N), rand_f32(rng, VADD_N), zeros_f32(VADD_N)],
               lambda a, b, _c: a + b, output=2),
    softmax_demo("row softmax", _softmax, SOFTMAX_M, SOFTMAX_N),
    matmul_demo("tiled matmul (Tx.gemm)", tiled_matmul_kernel, MATMUL_M, MATMUL_K, MATMUL_N),
]


# -- running --------------------------------------------------------------------------------------


def make_case(kernel: DemoKernel, target: str, *, backend: str = "",
              to_device: Callable[[Any], Any] | None = None,
              to_numpy: Callable[[Any], Any] | None = None,
              synchronize: Callable[[], None] | None = None,
              repeat: int = 10) -> DemoCase:
    """A demo row running ``kernel`` on ``target``; device backends pass array movers."""

    def run() -> DemoResult:
        return run_kernel(kernel, target, to_device=to_device, to_numpy=to_numpy,
                          synchronize=synchronize, repeat=repeat)

    return DemoCase(kernel.name, target, run, backend=backend)


def run_kernel(kernel: DemoKernel, target: str, *, to_device: Callable[[Any], Any] | None = None,
               to_numpy: Callable[[Any], Any] | None = None,
               synchronize: Callable[[], None] | None = None, repeat: int = 10) -> DemoResult:
    """Compile, run and check one kernel; the time is the median of ``repeat`` runs."""
    import numpy as np

    rng = np.random.default_rng(0)
    host_args = kernel.inputs(rng)
    expected = kernel.reference(*host_args)
    t0 = time.perf_counter()
    ex = driver.compile(kernel.build(), target=target)
    compile_ms = (time.perf_counter() - t0) * 1e3
    args = [to_device(a) for a in host_args] if to_device else host_args
    sync = synchronize or (lambda: None)
    ex(*args)  # the result that is checked
    sync()
    for _ in range(3):  # warm-up: thread pools, caches
        ex(*args)
    sync()
    got = args[kernel.output]
    got = np.asarray(to_numpy(got) if to_numpy else got)
    times = []
    for _ in range(max(1, repeat)):
        t = time.perf_counter()
        ex(*args)
        sync()
        times.append((time.perf_counter() - t) * 1e3)
    err = float(np.max(np.abs(got.astype("float64") - expected))) if got.size else 0.0
    ok = bool(np.allclose(got, expected, rtol=kernel.rtol, atol=kernel.atol))
    return DemoResult(ok, float(np.median(times)), err, note=f"compile {compile_ms:.0f} ms",
                      source=_source_of(ex))


def _source_of(ex: Any) -> str:
    try:
        return str(ex.inspect_source())
    except Exception:  # an executable without source text: nothing to show
        return ""


def collect_cases(targets: Sequence[str] | None = None) -> list[DemoCase]:
    """Every demo row of every loaded backend (hook ``tvm_demo_cases``). With ``targets``, only
    the backends with a target kind starting with one of them are asked, so the others do not
    probe their devices."""
    ensure_builtin_backends()
    pm = get_plugin_manager()
    hook = pm.hook.tvm_demo_cases
    if targets:
        others = [pm.get_plugin(r.name) for r in list_backends() if r.state == "loaded"
                  and not any(k.startswith(t) for k in r.target_kinds for t in targets)]
        hook = pm.subset_hook_caller("tvm_demo_cases",
                                     remove_plugins=[p for p in others if p is not None])
    cases: list[DemoCase] = []
    for result in reversed(hook()):
        cases.extend(result or [])
    return cases


def run_cases(cases: Sequence[DemoCase], progress: TextIO | None = None
              ) -> list[tuple[DemoCase, DemoResult]]:
    """Run every case (a failing one becomes a FAIL row). With ``progress`` (a stream), a line
    is written when each case starts and when it ends, so a slow compile is never silent."""
    rows = []
    for i, case in enumerate(cases, 1):
        label = f"[{i}/{len(cases)}] {case.name} on {case.target} ({case.backend or '-'})"
        _say(progress, f"{label}: compiling and running ...")
        t0 = time.perf_counter()
        try:
            result = case.run()
        except Exception as err:  # a failing row must not stop the table
            first = (str(err).strip().splitlines() or [""])[0]
            result = DemoResult(False, float("nan"), float("nan"),
                                note=f"{type(err).__name__}: {first}"[:200])
        status = "ok" if result.ok else "FAIL"
        _say(progress, f"{label}: {status} in {time.perf_counter() - t0:.1f} s")
        rows.append((case, result))
    return rows


def _say(stream: TextIO | None, line: str) -> None:
    if stream is not None:
        print(line, file=stream, flush=True)


def format_sources(rows: Sequence[tuple[DemoCase, DemoResult]]) -> str:
    """The generated source of every row that has one, each under a header line."""
    parts = []
    for case, r in rows:
        if r.source:
            parts.append(f"==== {case.name} on {case.target} ({case.backend or '-'}) ====\n"
                         f"{r.source.rstrip()}\n")
    return "\n".join(parts)


def format_table(rows: Sequence[tuple[DemoCase, DemoResult]]) -> str:
    header = ("kernel", "target", "backend", "time (ms)", "max error", "ok", "note")
    lines = [header]
    for case, r in rows:
        lines.append((case.name, case.target, case.backend or "-", _num(r.time_ms, "{:.3f}"),
                      _num(r.max_abs_error, "{:.2e}"), "ok" if r.ok else "FAIL", r.note))
    widths = [max(len(str(row[i])) for row in lines) for i in range(len(header) - 1)]
    out = []
    for n, row in enumerate(lines):
        cells = [str(c).ljust(w) for c, w in zip(row, widths)]
        out.append("  ".join([*cells, str(row[-1])]).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths) + "  ----")
    return "\n".join(out)


def _num(value: float, fmt: str) -> str:
    return "-" if value != value else fmt.format(value)  # NaN: not measured


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``python -m tvm demo``."""
    parser.add_argument("--target", action="append", default=None, metavar="KIND",
                        help="only rows whose target starts with this, e.g. c or cuda (repeatable)")
    parser.add_argument("--kernel", action="append", default=None, metavar="TEXT",
                        help="only rows whose kernel name contains this (repeatable)")
    parser.add_argument("--show-source", action="store_true",
                        help="print the generated source (C, CUDA C++, MSL, ...) of every row")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress lines on stderr, only the table")


def run(ns: argparse.Namespace) -> int:
    """Run the demo for parsed options (see :func:`add_arguments`); the exit code."""
    progress = None if ns.quiet else sys.stderr
    _say(progress, "collecting demo kernels from the loaded backends ...")
    cases = collect_cases(ns.target)
    if ns.target:
        cases = [c for c in cases if any(c.target.startswith(t) for t in ns.target)]
    if ns.kernel:
        cases = [c for c in cases if any(k in c.name for k in ns.kernel)]
    if not cases:
        print("no demo cases: no loaded backend can run a kernel on this machine"
              + (f" for target {', '.join(ns.target)}" if ns.target else ""))
        return 1
    rows = run_cases(cases, progress)
    if ns.show_source:
        print(format_sources(rows))
    print(format_table(rows))
    failed = sum(1 for _, r in rows if not r.ok)
    print(f"\n{len(rows) - failed} of {len(rows)} kernels correct")
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tvm demo", description=__doc__.split("\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(list(argv) if argv is not None else None))


if __name__ == "__main__":
    raise SystemExit(main())
