"""Small numeric helpers for tests (numpy is imported inside the functions)."""

from __future__ import annotations

from typing import Any

from ..backend import is_loaded
from ..backend._discovery import scan_entry_points

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
