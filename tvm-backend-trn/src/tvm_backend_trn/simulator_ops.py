"""The numbers of :mod:`.simulator`: the numpy dtype of each element type and the element-wise
op tables its engines compute with (numpy, and ``ml_dtypes`` for bf16/fp8, imported when a
kernel is simulated, not at import)."""

from __future__ import annotations

from typing import Any

INT_DTYPES = {"int32", "int16", "int8", "uint32", "uint16", "uint8"}


def np_dtype(name: str) -> Any:
    import numpy as np

    if name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))
    return np.dtype(name)


def unary_table() -> dict[str, Any]:
    import numpy as np

    def erf(x: Any) -> Any:
        # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7, below fp32 resolution at 1).
        s = np.sign(x)
        a = np.abs(x)
        t = 1.0 / (1.0 + 0.3275911 * a)
        poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (
            -1.453152027 + t * 1.061405429))))
        return s * (1.0 - poly * np.exp(-a * a))

    return {
        "copy": lambda x: x,
        "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x),
        "reciprocal": lambda x: 1.0 / x, "tanh": np.tanh,
        "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)), "relu": lambda x: np.maximum(x, 0),
        "gelu": lambda x: 0.5 * x * (1.0 + erf(x / np.sqrt(np.float32(2)))),
        "gelu_apprx_tanh": lambda x: 0.5 * x * (1.0 + np.tanh(
            np.float32(0.7978845608) * (x + np.float32(0.044715) * x * x * x))),
        "silu": lambda x: x / (1.0 + np.exp(-x)), "square": np.square, "abs": np.abs,
        "sin": np.sin, "sign": np.sign, "softplus": lambda x: np.logaddexp(0, x),
    }


def binary_table() -> dict[str, Any]:
    import numpy as np

    return {
        "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
        "maximum": np.maximum, "minimum": np.minimum, "power": np.power,
        "equal": np.equal, "not_equal": np.not_equal, "greater": np.greater,
        "greater_equal": np.greater_equal, "less": np.less, "less_equal": np.less_equal,
        "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
        "bitwise_xor": np.bitwise_xor, "left_shift": np.left_shift,
        "right_shift": np.right_shift,
    }


BITWISE = {"bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"}
