"""Launch-bounds hints: ``T.attr({"tirx.launch_bounds_min_blocks_per_sm": M})`` and
``"tirx.launch_bounds_max_blocks_per_cluster"`` in a kernel body move onto the device function.
"""

from __future__ import annotations

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.visitor import Mutator

__all__ = ["LAUNCH_BOUNDS_KEYS", "MAX_BLOCKS_PER_CLUSTER", "MIN_BLOCKS_PER_SM",
           "extract_launch_bounds"]

MIN_BLOCKS_PER_SM = "tirx.launch_bounds_min_blocks_per_sm"
MAX_BLOCKS_PER_CLUSTER = "tirx.launch_bounds_max_blocks_per_cluster"
LAUNCH_BOUNDS_KEYS = (MIN_BLOCKS_PER_SM, MAX_BLOCKS_PER_CLUSTER)


def extract_launch_bounds(stmt: S.Stmt) -> tuple[S.Stmt, dict[str, int]]:
    """Strip the launch-bounds ``AttrStmt``s from ``stmt``; return the body and their values.

    Raises ValueError when a value is not an integer (``"<key> expects an integer value"``),
    not positive (``"<key> must be positive"``) or given twice with different values
    (``"Conflicting <key> values"``).
    """
    ex = _Extractor()
    return ex.visit(stmt), ex.found


class _Extractor(Mutator):
    def __init__(self) -> None:
        self.found: dict[str, int] = {}

    def visit_AttrStmt(self, s: S.AttrStmt) -> S.Stmt:
        if s.attr_key not in LAUNCH_BOUNDS_KEYS:
            return self.generic_visit(s)  # type: ignore[return-value]
        key = s.attr_key
        value = s.value
        if not (isinstance(value, E.IntImm) and value.dtype.is_integer):
            raise ValueError(f"{key} expects an integer value, got {_show(value)}")
        if value.value <= 0:
            raise ValueError(f"{key} must be positive, got {value.value}")
        old = self.found.get(key)
        if old is not None and old != value.value:
            raise ValueError(f"Conflicting {key} values: {old} and {value.value}")
        self.found[key] = value.value
        return self.visit(s.body)


def _show(value: object) -> str:
    if isinstance(value, E.FloatImm):
        return f"{value.value} ({value.dtype})"
    if isinstance(value, E.StringImm):
        return repr(value.value)
    if isinstance(value, E.Var):
        return f"the variable {value.name}"
    if isinstance(value, E.IntImm):
        return f"{bool(value.value)} (bool)"
    return type(value).__name__
