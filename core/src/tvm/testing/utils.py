"""Small numeric helpers for tests (numpy is imported inside the functions)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..backend import is_loaded
from ..backend._discovery import scan_entry_points
from ..runtime.devices import cuda, numpy_dtype

__all__ = ["assert_allclose", "installed_backends", "present_backends", "random_array",
           "skip_if_installed", "tolerance"]


def tolerance(dtype: str) -> tuple[float, float]:
    """(rtol, atol) suited to a result stored in ``dtype``."""
    return {
        "float16": (1e-2, 1e-2),
        "bfloat16": (3e-2, 3e-2),
        "float8_e4m3fn": (1.3e-1, 1.3e-1),
        "float8_e5m2": (2.5e-1, 2.5e-1),
        "float64": (1e-10, 1e-10),
    }.get(dtype, (1e-5, 1e-5))


def random_array(shape: Any, dtype: str = "float32", *, seed: int = 0, low: float = -1.0,
                 high: float = 1.0) -> Any:
    """A reproducible random array of ``dtype`` (ints drawn from [-8, 8))."""
    import numpy as np

    rng = np.random.default_rng(seed)
    if dtype.startswith(("int", "uint")):
        lo = 0 if dtype.startswith("uint") else -8
        return rng.integers(lo, 8, size=shape).astype(dtype)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    return rng.uniform(low, high, size=shape).astype(dtype)


def assert_allclose(actual: Any, desired: Any, dtype: str | None = None, **kwargs: Any) -> None:
    import numpy as np

    rtol, atol = tolerance(dtype or str(np.asarray(desired).dtype))
    kwargs.setdefault("rtol", rtol)
    kwargs.setdefault("atol", atol)
    np.testing.assert_allclose(np.asarray(actual, dtype="float64"), np.asarray(desired, dtype="float64"), **kwargs)


def installed_backends() -> set[str]:
    """Names of the backends whose distributions are installed (entry points; nothing imported)."""
    return {ep.name for ep in scan_entry_points()}


def skip_if_installed(*names: str) -> Any:
    """A pytest mark skipping a test that checks behaviour without these backends installed
    (the "pip install tvm-backend-x" hints), in environments where one of them is installed,
    or loaded in the test process (a source checkout: a backend's tests load it in-process,
    possibly after this test was collected, so this is decided when the test runs)."""
    import pytest  # noqa: PLC0415 - pytest is not a dependency of tvm-core: the other helpers work without it

    condition = f"__import__('tvm.testing.utils', fromlist=['_']).present_backends({names!r})"
    return pytest.mark.skipif(condition, reason=f"backend(s) {sorted(names)} installed or loaded "
                              "here; this test checks the behaviour without them (it runs in the "
                              "core session)")


def present_backends(names: tuple[str, ...]) -> list[str]:
    """Those of ``names`` installed here (entry points) or loaded in this process."""
    return sorted(n for n in names if n in installed_backends() or is_loaded(n))


np_dtype_from_str = numpy_dtype


def cuda_unavailable(major: int = 0, minor: int = 0, exact: bool = False) -> str | None:
    """None when ``tvm.cuda(0)`` can run kernels of compute capability ``major.minor`` here
    (at least, or exactly), else why not."""
    dev = cuda(0)
    reason = dev.unavailable()
    if reason is not None:
        return reason
    have = dev.compute_version
    if have is None:
        return "the CUDA device's compute capability is unknown"
    got = tuple(int(p) for p in have.split("."))
    want = (major, minor)
    if exact and got[0] != major:
        return f"needs a CUDA device of compute capability {major}.x; this one is {have}"
    if not exact and got < want:
        return f"needs a CUDA device of compute capability {major}.{minor} or later; this one is {have}"
    return None


def requires_cuda_compute_version(major: int, minor: int = 0, exact: bool = False
                                  ) -> Callable[[Any], Any]:
    """Skip the test (function or class) unless ``tvm.cuda(0)`` is there, of compute capability
    ``major.minor`` or later (``exact``: of major version ``major``); decided when the test runs.
    Under ``TVM_CUDA_EMULATE=1`` the emulated device counts, with its arch
    (``TVM_CUDA_EMULATE_ARCH``)."""

    def mark(test: Any) -> Any:
        import pytest  # noqa: PLC0415 - only test code uses this

        if isinstance(test, type):
            condition = (f"__import__('tvm.testing.utils', fromlist=['_'])"
                         f".cuda_unavailable({major}, {minor}, {exact}) is not None")
            return pytest.mark.skipif(condition, reason=f"needs CUDA compute capability "
                                      f"{major}.{minor}{'' if exact else '+'}")(test)

        @functools.wraps(test)
        def run(*args: Any, **kwargs: Any) -> Any:
            reason = cuda_unavailable(major, minor, exact)
            if reason is not None:
                pytest.skip(reason)
            return test(*args, **kwargs)

        return run

    return mark


#: skip the test unless tvm.cuda(0) is there (a GPU, or the emulator under TVM_CUDA_EMULATE=1)
requires_cuda = requires_cuda_compute_version(0)
requires_gpu = requires_cuda


def generate_random_array(dtype: str, shape: Any, *, seed: int | None = None) -> Any:
    """A random numpy array of tvm dtype ``dtype`` (the seed's helper): floats uniform in
    [-1, 1) (bfloat16/float8 through ml_dtypes), integers in their range up to +-64, bools
    half true. ``seed`` None draws from numpy's global generator, as the seed does."""
    import numpy as np  # noqa: PLC0415 - numpy is not needed at import tvm

    shape = tuple(shape) if isinstance(shape, (list, tuple)) else (int(shape),)
    npdt = numpy_dtype(dtype)
    rng: Any = np.random if seed is None else np.random.default_rng(seed)
    if npdt == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(npdt, np.integer):
        info = np.iinfo(npdt)
        lo, hi = max(int(info.min), -64), min(int(info.max), 64)
        draw = rng.randint if seed is None else rng.integers
        return np.asarray(draw(lo, hi + 1, size=shape)).astype(npdt)
    return (rng.random(shape) * 2 - 1).astype("float32").astype(npdt)
