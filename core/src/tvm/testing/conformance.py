"""The conformance kit: checks that every backend, ours or a third party's, runs against itself.

Each check compiles a small kernel for the backend's target through ``tvm.compile``, runs it on
the backend's device and compares the result with numpy. A backend uses the kit in one of two
ways.

With pytest, subclass :class:`BackendConformance` in the backend's tests (the class name must
start with ``Test`` for pytest to collect it) and say how to reach the device::

    from tvm.testing.conformance import BackendConformance

    class TestCudaConformance(BackendConformance):
        target = "nvidia/nvidia-h100"

        def run_unavailable_reason(self):      # None when kernels can run here
            return None if gpu_present() else "no GPU"

        def to_device(self, array): return torch.from_numpy(array).cuda()
        def to_numpy(self, array): return array.cpu().numpy()
        def synchronize(self): torch.cuda.synchronize()

Without pytest, :func:`run_backend_conformance` runs every check and returns each outcome.

Three more hooks let a backend fit the kit without forking it:

- ``run(ex, args)`` runs a compiled executable (default ``ex(*args)``): a backend with a CPU
  emulator runs through it (Metal off macOS: ``ex.emulate(*args)``).
- ``check_compiled(ex)`` adds a build-time check of every compiled executable (Metal: the
  syntax check of the MSL).
- ``kernel(name)`` returns the kernel a check compiles (default: the kit's kernel-form kernels
  of :data:`KERNELS`); a backend whose kernels are written differently (Trainium: tile
  primitives over on-chip buffers) supplies its own with the same parameters and meaning.

Where kernels cannot run (a CI machine without the GPU), every check still compiles its kernel
and checks that the backend produced source; only the run is skipped, with the reason. The
kernels are written in the kernel form (``T.device_entry``, ``T.cta_id``, ``T.thread_id``) with
tile primitives at CTA scope, so they mean the same on a CPU and on a GPU.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar, no_type_check

import tvm

from ..backend import contract
from ..target import Target

__all__ = ["CHECKS", "KERNELS", "BackendConformance", "NotRun", "run_backend_conformance"]

VADD_N, VADD_THREADS = 1024, 128
ROWS, COLS, CTA_THREADS = 16, 64, 64
GEMM_M, GEMM_N, GEMM_K = 32, 16, 24


class NotRun(Exception):
    """A check compiled its kernel but could not run it here (the message says why)."""


class BackendConformance:
    """The conformance checks as pytest tests; subclass it with the backend's ``target``.

    Override the device hooks when arrays must live on a device; the defaults run on the CPU
    with numpy arrays (the host target ``c``). ``skip_checks`` maps a check name (see
    :data:`CHECKS`) to the reason the backend does not support it yet; it is reported as a skip.
    """

    #: a target kind name, tag, dict or Target; set on the subclass
    target: Any = None
    skip_checks: ClassVar[dict[str, str]] = {}
    #: extra keyword arguments for ``tvm.compile`` (``tir_pipeline=...``)
    compile_options: ClassVar[dict[str, Any]] = {}

    # -- device hooks -----------------------------------------------------------------------
    def run_unavailable_reason(self) -> str | None:
        """None when this machine can run the target's kernels, else why it cannot."""
        return None

    def to_device(self, array: Any) -> Any:
        """A device array holding a copy of the numpy ``array``."""
        return array

    def to_numpy(self, array: Any) -> Any:
        """A numpy copy of the device ``array``."""
        import numpy as np

        return np.asarray(array)

    def synchronize(self) -> None:
        """Wait until launched kernels are done."""

    def run(self, ex: Any, args: list[Any]) -> None:
        """Run the executable ``ex`` on device arrays ``args`` (default: ``ex(*args)``)."""
        ex(*args)

    def check_compiled(self, ex: Any) -> None:
        """An extra check of every compiled executable (raise to fail); default none."""

    def kernel(self, name: str) -> Any:
        """The PrimFunc check ``name`` compiles (``vector_add``, ``elementwise``,
        ``reduction``, ``gemm``): by default the kit's own, from :data:`KERNELS`."""
        return KERNELS[name]()

    def non_contiguous(self, array: Any) -> Any:
        """A non-contiguous device view with the values of the 1-d numpy ``array``."""
        import numpy as np

        doubled = np.zeros(array.size * 2, array.dtype)
        doubled[::2] = array
        return self.to_device(doubled)[::2]

    # -- helpers the checks use -------------------------------------------------------------
    def compile(self, func: Any) -> Any:
        if isinstance(func, str):
            func = self.kernel(func)
        ex = tvm.compile(func, target=self.target, **self.compile_options)
        source = ex.inspect_source()
        assert isinstance(source, str) and source.strip(), \
            f"{self.target}: inspect_source() returned no source"
        self.check_compiled(ex)
        return ex

    def require_run(self) -> None:
        reason = self.run_unavailable_reason()
        if reason:
            raise NotRun(f"compiled for {self.target}; not run: {reason}")

    def call(self, ex: Any, *arrays: Any) -> list[Any]:
        """Run ``ex`` on device copies of ``arrays``; returns numpy copies after the run."""
        args = [self.to_device(a.copy()) for a in arrays]
        self.run(ex, args)
        self.synchronize()
        return [self.to_numpy(a) for a in args]

    # -- the tests --------------------------------------------------------------------------
    def _check(self, name: str) -> None:
        import pytest  # noqa: PLC0415 - pytest is not a dependency of tvm-core: run_backend_conformance runs without it

        if self.target is None:
            pytest.skip("set `target` on the BackendConformance subclass")
        if name in self.skip_checks:
            pytest.skip(f"{name}: {self.skip_checks[name]}")
        try:
            CHECKS[name](self)
        except NotRun as why:
            pytest.skip(str(why))

    def test_vector_add(self) -> None:
        self._check("vector_add")

    def test_elementwise(self) -> None:
        self._check("elementwise")

    def test_reduction(self) -> None:
        self._check("reduction")

    def test_gemm(self) -> None:
        self._check("gemm")

    def test_export_and_load(self) -> None:
        self._check("export_and_load")

    def test_argument_checks(self) -> None:
        self._check("argument_checks")

    def test_cache_follows_the_environment(self) -> None:
        self._check("cache")


# -- kernels --------------------------------------------------------------------------------------


def _tvmscript() -> Any:
    """``tvm.script.tirx`` (``T``; ``T.tile`` is ``Tx``), imported when a kernel is built."""
    from ..script import tirx  # noqa: PLC0415 - tvm.script (~30 ms): tvm.testing is imported by tvm's pytest plugin at the start of every session

    return tirx


@no_type_check  # TVMScript: the parser, not Python, gives these annotations meaning
def vector_add_kernel(dtype: str = "float32") -> Any:
    T = _tvmscript()
    n, threads = VADD_N, VADD_THREADS

    @T.prim_func
    def vector_add(A: T.Buffer((n,), dtype), B: T.Buffer((n,), dtype), C: T.Buffer((n,), dtype)):
        T.device_entry()
        bx = T.cta_id([n // threads])
        tx = T.thread_id([threads])
        C[bx * threads + tx] = A[bx * threads + tx] + B[bx * threads + tx]

    return vector_add


@no_type_check  # TVMScript
def elementwise_kernel() -> Any:
    """B = exp(A * 0.5) + A, then C = max(B, 1.25) - A, through CTA-scope tile primitives."""
    T = _tvmscript()
    Tx = T.tile
    m, n = ROWS, COLS

    @T.prim_func
    def elementwise(A: T.Buffer((m, n), "float32"), B: T.Buffer((m, n), "float32"),
                    C: T.Buffer((m, n), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([CTA_THREADS])
        Tx.cta.exp(B, A, scale=0.5)
        Tx.cta.add(B, B, A)
        Tx.cta.maximum(C, B, 1.25)
        Tx.cta.sub(C, C, A)

    return elementwise


@no_type_check  # TVMScript
def reduction_kernel() -> Any:
    """Row sums and row maxima of A with CTA-scope reductions."""
    T = _tvmscript()
    Tx = T.tile
    m, n = ROWS, COLS

    @T.prim_func
    def reduction(A: T.Buffer((m, n), "float32"), S: T.Buffer((m,), "float32"),
                  M: T.Buffer((m,), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([CTA_THREADS])
        Tx.cta.sum(S, A, axes=-1)
        Tx.cta.max(M, A, axes=-1)

    return reduction


@no_type_check  # TVMScript
def gemm_kernel() -> Any:
    """D = 0.5 * A @ B^T + 2 * C with a CTA-scope Tx.gemm."""
    T = _tvmscript()
    Tx = T.tile
    m, n, k = GEMM_M, GEMM_N, GEMM_K

    @T.prim_func
    def gemm(A: T.Buffer((m, k), "float32"), B: T.Buffer((n, k), "float32"),
             C: T.Buffer((m, n), "float32"), D: T.Buffer((m, n), "float32")):
        T.device_entry()
        bx = T.cta_id([1])
        tx = T.thread_id([CTA_THREADS])
        Tx.cta.gemm(D, A, B, C, transpose_B=True, alpha=0.5, beta=2.0)

    return gemm


# -- checks ---------------------------------------------------------------------------------------


def _rand(*shape: int, seed: int = 0) -> Any:
    import numpy as np

    return np.random.default_rng(seed).uniform(-2.0, 2.0, shape).astype("float32")


def _close(got: Any, want: Any, what: str, rtol: float = 1e-5, atol: float = 1e-5) -> None:
    import numpy as np

    np.testing.assert_allclose(np.asarray(got, "float64"), np.asarray(want, "float64"),
                               rtol=rtol, atol=atol, err_msg=what)


def check_vector_add(kit: BackendConformance) -> None:
    import numpy as np

    ex = kit.compile("vector_add")
    kit.require_run()
    a, b = _rand(VADD_N, seed=1), _rand(VADD_N, seed=2)
    _, _, c = kit.call(ex, a, b, np.zeros(VADD_N, "float32"))
    _close(c, a + b, "vector add")


def check_elementwise(kit: BackendConformance) -> None:
    import numpy as np

    ex = kit.compile("elementwise")
    kit.require_run()
    a = _rand(ROWS, COLS, seed=3)
    zeros = np.zeros((ROWS, COLS), "float32")
    _, b, c = kit.call(ex, a, zeros, zeros)
    want_b = np.exp(a.astype("float64") * 0.5) + a
    _close(b, want_b, "elementwise: exp(A * 0.5) + A", rtol=1e-5)
    _close(c, np.maximum(want_b, 1.25) - a, "elementwise: max(B, 1.25) - A", rtol=1e-5)


def check_reduction(kit: BackendConformance) -> None:
    import numpy as np

    ex = kit.compile("reduction")
    kit.require_run()
    a = _rand(ROWS, COLS, seed=4)
    _, s, mx = kit.call(ex, a, np.zeros(ROWS, "float32"), np.zeros(ROWS, "float32"))
    _close(s, a.astype("float64").sum(-1), "row sum", rtol=1e-5, atol=1e-4)
    _close(mx, a.max(-1), "row max")


def check_gemm(kit: BackendConformance) -> None:
    import numpy as np

    ex = kit.compile("gemm")
    kit.require_run()
    a, b, c = _rand(GEMM_M, GEMM_K, seed=5), _rand(GEMM_N, GEMM_K, seed=6), _rand(GEMM_M, GEMM_N, seed=7)
    *_, d = kit.call(ex, a, b, c, np.zeros((GEMM_M, GEMM_N), "float32"))
    want = 0.5 * (a.astype("float64") @ b.astype("float64").T) + 2.0 * c
    _close(d, want, "gemm: 0.5 * A @ B^T + 2 * C", rtol=1e-4, atol=1e-4)


def check_export_and_load(kit: BackendConformance) -> None:
    """``export_library`` writes a file that ``tvm.runtime.load_module`` turns back into an
    executable with the same source and the same results."""
    import numpy as np

    ex = kit.compile("vector_add")
    with tempfile.TemporaryDirectory(prefix="tvm-conformance-") as tmp:
        path = os.path.join(tmp, "vector_add.tvm")
        ex.export_library(path)
        assert os.path.getsize(path) > 0, f"export_library wrote an empty file {path}"
        loaded = tvm.runtime.load_module(path)
        assert loaded.inspect_source() == ex.inspect_source(), \
            "the loaded module's source differs from the exported one"
        kit.require_run()
        a, b = _rand(VADD_N, seed=8), _rand(VADD_N, seed=9)
        _, _, c = kit.call(loaded, a, b, np.zeros(VADD_N, "float32"))
    _close(c, a + b, "vector add after export_library / load_module")


def check_argument_checks(kit: BackendConformance) -> None:
    """Wrong dtype, shape, rank and a non-contiguous array raise ValueError naming the
    parameter, before anything is launched."""
    import numpy as np

    ex = kit.compile("vector_add")
    kit.require_run()
    good = np.ones(VADD_N, "float32")
    rows = VADD_N // VADD_THREADS
    # The words each message must contain besides the parameter's name: what was passed and
    # what was expected (the wording itself is the backend's).
    bad_cases: list[tuple[str, Callable[[], Any], tuple[str, ...]]] = [
        ("wrong dtype", lambda: kit.to_device(good.astype("float64")), ("float64", "float32")),
        ("wrong shape", lambda: kit.to_device(good[: VADD_N // 2].copy()),
         (str(VADD_N // 2), str(VADD_N))),
        ("wrong rank", lambda: kit.to_device(good.reshape(VADD_THREADS, rows).copy()),
         (f"({VADD_THREADS}, {rows})",)),
        ("non-contiguous", lambda: kit.non_contiguous(good), ("contiguous",)),
    ]
    for what, make_bad, words in bad_cases:
        b = kit.to_device(good.copy())
        c = kit.to_device(np.zeros(VADD_N, "float32"))
        try:
            kit.run(ex, [make_bad(), b, c])
        except ValueError as err:
            text = str(err)
            assert re.search(r"(?<![\w.])'?A'?(?![\w(])", text), \
                f"{what}: the error {text!r} does not name the parameter A"
            missing = [w for w in words if w not in text]
            assert not missing, f"{what}: the error {text!r} does not mention {missing}"
        else:
            raise AssertionError(f"{what}: calling with a bad argument 'A' raised nothing")
        kit.synchronize()
        assert not kit.to_numpy(c).any(), f"{what}: the kernel ran although the arguments were bad"


#: The kit's kernels, by name (what :meth:`BackendConformance.kernel` returns by default).
KERNELS: dict[str, Callable[[], Any]] = {
    "vector_add": vector_add_kernel,
    "elementwise": elementwise_kernel,
    "reduction": reduction_kernel,
    "gemm": gemm_kernel,
}

#: Every check, by name, in the order they run.
@contextlib.contextmanager
def _environ(**values: str | None) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    try:
        for name, value in values.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def check_cache(kit: BackendConformance) -> None:
    """The compile cache follows the environment as for every backend: entries under
    ``$TVM_CACHE_DIR``, else under ``$XDG_CACHE_HOME/tvm`` (for a builder whose compile stage
    is not free, ``cached = True``), and nothing written with ``TVM_CACHE=0``."""
    kind = Target(kit.target).kind.name
    cached = contract.get_builder(kind).cached
    with tempfile.TemporaryDirectory(prefix="tvm-conformance-cache-") as tmp:
        root = Path(tmp)
        with _environ(TVM_CACHE=None, TVM_CACHE_DIR=str(root / "explicit"),
                      XDG_CACHE_HOME=str(root / "xdg")):
            kit.compile("vector_add")
        with _environ(TVM_CACHE=None, TVM_CACHE_DIR=None, XDG_CACHE_HOME=str(root / "xdg")):
            kit.compile("vector_add")
        with _environ(TVM_CACHE="0", TVM_CACHE_DIR=None, XDG_CACHE_HOME=str(root / "off")):
            kit.compile("vector_add")
        explicit, xdg = _files(root / "explicit"), _files(root / "xdg" / "tvm")
        off = _files(root / "off")
    assert not off, f"{kind}: TVM_CACHE=0 still wrote {[str(p) for p in off]}"
    if cached:
        assert explicit, f"{kind}: nothing was cached under TVM_CACHE_DIR"
        assert xdg, f"{kind}: nothing was cached under $XDG_CACHE_HOME/tvm (no TVM_CACHE_DIR)"


CHECKS: dict[str, Callable[[BackendConformance], None]] = {
    "vector_add": check_vector_add,
    "elementwise": check_elementwise,
    "reduction": check_reduction,
    "gemm": check_gemm,
    "export_and_load": check_export_and_load,
    "argument_checks": check_argument_checks,
    "cache": check_cache,
}


def run_backend_conformance(target: Any, kit: BackendConformance | None = None, *,
                            only: list[str] | None = None) -> dict[str, str]:
    """Run the checks for ``target`` without pytest; returns ``{check: outcome}`` where the
    outcome is ``"passed"`` or ``"not run: <why>"``. A failing check raises its AssertionError
    (or the compiler's error), naming the check."""
    kit = kit or BackendConformance()
    kit.target = target
    outcomes: dict[str, str] = {}
    for name, check in CHECKS.items():
        if only is not None and name not in only:
            continue
        if name in kit.skip_checks:
            outcomes[name] = f"not run: {kit.skip_checks[name]}"
            continue
        try:
            check(kit)
        except NotRun as why:
            outcomes[name] = f"not run: {why}"
        except AssertionError as err:
            raise AssertionError(f"conformance check {name!r} failed for {target}: {err}") from err
        else:
            outcomes[name] = "passed"
    return outcomes
