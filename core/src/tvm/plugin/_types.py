"""Plain data exchanged through the hooks: what a backend says about itself, demo cases."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PLUGIN_API_VERSION", "BackendInfo", "DemoCase", "DemoResult", "api_range_allows"]

# The version of the hook API in tvm/plugin/hookspec.py. Bump it when a hook changes in a way
# that breaks existing backends; backends declare the range they support in BackendInfo.
# 2: tvm_builders (the build contract) replaced tvm_build_module and tvm_load_executable.
PLUGIN_API_VERSION = 2

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class BackendInfo:
    """What a backend says about itself (returned by ``tvm_backend_info``).

    ``name`` is the backend's short name; it must equal the entry-point name.
    ``version`` is the backend's own version (defaults to its distribution's version).
    ``api_range`` is the range of plugin-API versions it supports, as comma-separated
    clauses of ``>=``, ``>``, ``<=``, ``<``, ``==`` or ``!=`` with integers (``">=1,<2"``;
    ``"*"`` accepts every version). ``requires`` lists backends loaded before this one.
    ``distribution`` is the pip distribution shipping it (defaults to the entry point's).
    ``overrides`` lists the entries this backend replaces on purpose: ``"<registry>:<key>"``
    (``"target kind:cuda"``, ``"target tag:nvidia/nvidia-h100"``, ``"script namespace:ptx"``,
    ``"tir pipeline:default"``, ``"op:tirx.cuda.foo"``) or a bare ``"<key>"`` for any registry.
    """

    name: str
    version: str = ""
    api_range: str = "*"
    requires: tuple[str, ...] = ()
    distribution: str = ""
    overrides: tuple[str, ...] = ()
    description: str = ""

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ValueError(
                f"backend name {self.name!r} is invalid: use lower-case letters, digits and '_', "
                "starting with a letter"
            )
        # Accept lists for convenience; store tuples so the info stays hashable.
        object.__setattr__(self, "requires", tuple(self.requires))
        object.__setattr__(self, "overrides", tuple(self.overrides))
        _parse_range(self.api_range)  # fail early on a malformed range


@dataclass(frozen=True)
class DemoResult:
    """The outcome of one demo case: correctness against the reference and the time it took."""

    ok: bool
    time_ms: float
    max_abs_error: float = 0.0
    note: str = ""
    #: the generated source (C, CUDA C++, MSL, ...): ``python -m tvm demo --show-source`` prints it
    source: str = ""


@dataclass(frozen=True)
class DemoCase:
    """One row of the main-job table (returned by ``tvm_demo_cases``).

    ``name`` names the kernel ("vector add"), ``target`` the target string it compiles for,
    ``backend`` the backend providing it. ``run()`` compiles, runs and checks the kernel against
    numpy and returns a :class:`DemoResult`; it may raise, which the table shows as a failure.
    """

    name: str
    target: str
    run: Callable[[], DemoResult]
    backend: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


_CLAUSE = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(\d+)\s*$")


def _parse_range(spec: str) -> list[tuple[str, int]]:
    if spec.strip() in ("", "*"):
        return []
    clauses = []
    for part in spec.split(","):
        m = _CLAUSE.match(part)
        if m is None:
            raise ValueError(
                f"plugin API range {spec!r} is malformed: use clauses like '>=1,<2' "
                "(operators >=, >, <=, <, ==, != with integer versions) or '*'"
            )
        clauses.append((m.group(1), int(m.group(2))))
    return clauses


def api_range_allows(spec: str, version: int = PLUGIN_API_VERSION) -> bool:
    """Whether the plugin-API range ``spec`` (``">=1,<2"``) includes ``version``."""
    checks: dict[str, Callable[[int, int], bool]] = {
        ">=": lambda v, b: v >= b,
        ">": lambda v, b: v > b,
        "<=": lambda v, b: v <= b,
        "<": lambda v, b: v < b,
        "==": lambda v, b: v == b,
        "!=": lambda v, b: v != b,
    }
    return all(checks[op](version, bound) for op, bound in _parse_range(spec))
