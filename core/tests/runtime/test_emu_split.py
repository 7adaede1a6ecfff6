"""tvm.runtime.emu.split_top_level: the one splitter of the emulators' declaration readers."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("text, expected", [
    ("int a, GPtr<float, 2> b, f(x, y)", [(0, "int a"), (6, " GPtr<float, 2> b"), (24, " f(x, y)")]),
    ("", [(0, "")]),
    ("a,", [(0, "a"), (2, "")]),
    ("[[x, y]]", [(0, "[[x, y]]")]),
])
def test_split_top_level_keeps_bracketed_separators(text, expected):
    from tvm.runtime.emu import split_top_level

    assert split_top_level(text) == expected
    assert split_top_level("a<b, c>d", ",", "(", ")") == [(0, "a<b"), (4, " c>d")]
