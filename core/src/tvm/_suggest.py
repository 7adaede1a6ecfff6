"""Did-you-mean suggestions for a mistyped name: one helper for backends, targets, tags and tile
ops (and the command line). :mod:`difflib` is imported only when a name is unknown."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["did_you_mean"]


def did_you_mean(name: str, candidates: Iterable[str], *, n: int = 3) -> str:
    """``"did you mean 'cuda'?"`` (up to ``n`` close candidates, closest first), or ``""`` when
    nothing is close. Matching ignores case."""
    import difflib  # noqa: PLC0415 - difflib (with heapq) is not part of import tvm; imported when a name is unknown

    by_lower: dict[str, str] = {}
    for c in sorted(set(candidates)):
        by_lower.setdefault(c.lower(), c)
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=n, cutoff=0.6)
    if not close:
        return ""
    return "did you mean " + " or ".join(repr(by_lower[c]) for c in close) + "?"
