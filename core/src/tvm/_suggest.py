"""Did-you-mean suggestions for a mistyped name: one helper for backends, targets, tags and tile
ops (and the command line). :mod:`difflib` is imported only when a name is unknown.

A candidate may carry other spellings that also name it (a GPU tag ``nvidia/nvidia-h200`` is
also ``h200``), so that suggestions rank by what a name means as well as by how it is spelt;
``synonyms`` maps words of other vocabularies (``matmul``) to the candidate they mean
(``gemm``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["did_you_mean", "suggestions"]

_CUTOFF = 0.6


def suggestions(name: str, candidates: Iterable[str], *, n: int = 3,
                synonyms: Mapping[str, str] | None = None,
                spellings: Mapping[str, Iterable[str]] | None = None) -> list[str]:
    """Up to ``n`` candidates close to ``name``, best first. Matching ignores case; a candidate
    scores by the closest of its spellings (itself and its ``spellings``, other names it
    goes by); a synonym of ``name`` comes first."""
    import difflib  # noqa: PLC0415 - difflib (with heapq) is not part of import tvm; imported when a name is unknown

    names_of = _spellings(candidates, spellings or {})
    lowered = name.lower()
    first = [c for w, c in (synonyms or {}).items() if w.lower() == lowered and c in names_of]
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(lowered)
    scored: list[tuple[float, str]] = []
    for candidate, names in names_of.items():
        best = 0.0
        for spelling in names:
            matcher.set_seq1(spelling.lower())
            if matcher.real_quick_ratio() >= _CUTOFF and matcher.quick_ratio() >= _CUTOFF:
                best = max(best, matcher.ratio())
        if best >= _CUTOFF:
            scored.append((best, candidate))
    ranked = [c for _, c in sorted(scored, reverse=True)]  # equal scores: as difflib orders them
    return list(dict.fromkeys([*first, *ranked]))[:n]


def did_you_mean(name: str, candidates: Iterable[str], *, n: int = 3,
                 synonyms: Mapping[str, str] | None = None,
                 spellings: Mapping[str, Iterable[str]] | None = None) -> str:
    """``"did you mean 'cuda'?"`` (up to ``n`` close candidates, closest first), or ``""`` when
    nothing is close. See :func:`suggestions`."""
    close = suggestions(name, candidates, n=n, synonyms=synonyms, spellings=spellings)
    if not close:
        return ""
    return "did you mean " + " or ".join(repr(c) for c in close) + "?"


def _spellings(candidates: Iterable[str],
               others: Mapping[str, Iterable[str]]) -> dict[str, list[str]]:
    """candidate -> its spellings; a candidate differing from another only in case is kept
    once."""
    pairs = [(c, [c, *others.get(c, ())]) for c in candidates]
    out: dict[str, list[str]] = {}
    seen: set[str] = set()
    for candidate, names in sorted(pairs):
        if candidate.lower() in seen:
            continue
        seen.add(candidate.lower())
        out[candidate] = names
    return out
