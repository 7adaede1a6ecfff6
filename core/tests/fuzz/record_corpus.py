"""Record the seed corpus of the mutation fuzzer: the printed text of every PrimFunc the core
tests build (written as scripts, built in Python, or produced by passes).

    python core/tests/fuzz/record_corpus.py      # runs core/tests, rewrites corpus.txt

It runs pytest over ``core/tests`` with this file as a plugin: every ``PrimFunc`` constructed
during the run is printed; those that parse back and are at most 6 KB are kept, one per shape
(kernels that differ only in names and numbers count once), in a stable order. Re-run it when
tests add new kinds of kernels.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus.txt"
SEPARATOR = "# ---- kernel ----\n"
_SEEN: dict[str, None] = {}


def pytest_configure(config: Any) -> None:
    from tvm.ir.function import PrimFunc

    original = PrimFunc.__init__

    def recording_init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        try:
            text = self.script()
        except Exception:  # noqa: BLE001 - a function that does not print is not a seed
            return
        if len(text) <= 6000:
            _SEEN[text] = None

    PrimFunc.__init__ = recording_init  # type: ignore[method-assign]


def pytest_unconfigure(config: Any) -> None:
    from tvm.script import from_source

    texts: dict[str, str] = {}  # one kernel per shape (names and numbers aside)
    for text in sorted(_SEEN):
        try:
            from_source(text)
        except Exception:  # noqa: BLE001 - only kernels that parse back seed the fuzzer
            continue
        texts.setdefault(_shape_of(text), text)
    CORPUS.write_text("".join(SEPARATOR + t for t in texts.values()))
    print(f"record_corpus: {len(texts)} kernels -> {CORPUS}", file=sys.stderr)


def _shape_of(text: str) -> str:
    """``text`` with numbers, strings and names (other than T and I) made alike."""
    text = re.sub(r"\d+(\.\d*)?(e[-+]?\d+)?", "0", text)
    text = re.sub(r'"[^"]*"', '"s"', text)
    return re.sub(r"(?<![.\w])(?!T\b|I\b)[A-Za-z_]\w*", "x", text)


def read_corpus() -> list[str]:
    """The recorded kernels (empty if the file is missing)."""
    if not CORPUS.exists():
        return []
    return [t for t in CORPUS.read_text().split(SEPARATOR) if t.strip()]


if __name__ == "__main__":
    import pytest

    sys.path.insert(0, str(HERE))
    tests = HERE.parent
    sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "-p", "record_corpus", "-x",
                          "--ignore", str(HERE), str(tests)]))
