"""``help(Tx.<op>)`` shows the op's real signature and semantics, and the user guide's tile-op
reference is the same text, generated from the op registry."""

from __future__ import annotations

import inspect
import pydoc
import re
import textwrap

import pytest

from tvm.ir import Op
from tvm.script.tirx import tile as Tx
from tvm.tirx.operator.tile_primitive.ops import TILE_OPS, reference_markdown


def _help(fn) -> str:
    return pydoc.render_doc(fn, renderer=pydoc.plaintext)


def _squeeze(text: str) -> str:
    """Without whitespace: Python 3.13's pydoc writes a long signature over several lines."""
    return re.sub(r"\s+", "", text)


def test_help_of_sum_shows_the_real_signature():
    # It used to show `sum(*args, dispatch=None, workspace=None, config=None, **kwargs)`.
    text = _help(Tx.sum)
    assert _squeeze("sum(dst, src, axes=-1, accum=False, thread_reduce=False, *, dispatch=None, "
                    "workspace=None, "
                    "config=None)") in _squeeze(text)
    assert "*args" not in text
    assert "dst = sum of src over axes (dst keeps the other axes); accum adds to dst" in text
    assert str(inspect.signature(Tx.cta.gemm)) == (
        "(D, A, B, C=None, transpose_A=False, transpose_B=False, alpha=1.0, beta=0.0, *, "
        "dispatch=None, workspace=None, config=None)")


def test_scoped_callers_say_where_they_live():
    assert Tx.cta.gemm.__qualname__ == "Tx.cta.gemm"
    assert Tx.wg.copy.scope == "warpgroup"
    assert Tx.exp.__tir_tile_op__ == "tirx.tile.exp"
    assert Tx.copy(*[_buf()] * 2).scope == "thread"


def _buf():
    from tvm.ir import Buffer

    return Buffer("A", [4], "float32")


@pytest.mark.parametrize("name", sorted(n for n, spec in TILE_OPS.items() if spec.params))
def test_reference_entry_is_the_help_text(name):
    fn = getattr(Tx, name)
    page = reference_markdown()
    entry = f"```text\n{name}{inspect.signature(fn)}\n\n{fn.__doc__}\n```"
    assert f"## `Tx.{name}`\n\n{entry}\n" in page
    # pydoc prints the same signature, then the docstring indented by 4
    text = _help(fn).split("\n", 2)[2]
    assert _squeeze(text).startswith(_squeeze(f"{name}{inspect.signature(fn)}"))
    doc = text[text.index(")\n") + 2:]
    assert textwrap.dedent(doc).strip() == fn.__doc__


def test_reference_lists_every_registered_tile_primitive():
    page = reference_markdown()
    listed = [line[7:-1] for line in page.splitlines() if line.startswith("## `Tx.")]
    registered = {op.name.removeprefix("tirx.tile.") for op in Op.list("tirx.tile.")
                  if op.get_attr("tile_spec") is not None}
    assert listed == sorted(registered)  # from the registry, in name order
    assert set(TILE_OPS) <= set(listed)


def test_compose_op_is_documented_as_a_with_statement():
    page = reference_markdown()
    entry = page[page.index("## `Tx.compose_op`"):]
    assert "`with Tx.compose_op(...):` block, as one op" in entry.split("## `Tx.copy`")[0]
