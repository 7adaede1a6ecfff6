"""The guide's generated pages are files in the checkout (issue 27: their links were broken
outside the built site), and they are current: what ``python docs/generated.py`` writes now."""

from __future__ import annotations

import importlib.util
import pydoc
import re
from pathlib import Path

import pytest

from tvm.ir import Op
from tvm.script.tirx import tile as Tx

DOCS = Path(__file__).resolve().parents[3] / "docs"


@pytest.fixture(scope="module")
def generated():
    path = DOCS / "generated.py"
    if not path.is_file():
        pytest.skip("not run from a checkout (docs/generated.py is not here)")
    spec = importlib.util.spec_from_file_location("tvm_docs_generated", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tile_op_reference_is_current(generated):
    page = generated.GUIDE / generated.TILE_OPS
    assert page.read_text() == generated.tile_ops(), "run: python docs/generated.py"


def test_environment_table_is_current(generated):
    text = (generated.GUIDE / "environment.md").read_text()
    assert generated.between(text, generated.ENV_MARKER) == generated.env_table(), \
        "run: python docs/generated.py"


def test_compile_options_are_current_for_the_installed_backends(generated):
    """Every kind with a builder here has its section, as generated now (the checkout's page is
    written with every backend installed; a backend not installed here is not compared)."""
    text = generated.between((generated.GUIDE / "compile-options.md").read_text(),
                             generated.OPTIONS_MARKER)
    sections = {m.group(1): m.group(0).strip("\n")
                for m in re.finditer(r"^## `([^`]+)`.*?(?=^## `|\Z)", text, re.S | re.M)}
    for kind in generated.option_kinds():
        assert sections.get(kind) == generated.options_section(kind), \
            f"{kind}: run python docs/generated.py"


def test_guide_links_to_generated_pages_resolve(generated):
    for page in generated.GUIDE.rglob("*.md"):
        for link in re.findall(r"\]\(([^)#:]+\.md)", page.read_text()):
            assert (page.parent / link).is_file(), f"{page.name}: broken link {link}"


def test_help_of_tx_lists_every_op_with_its_summary():
    text = pydoc.render_doc(Tx, renderer=pydoc.plaintext)
    specs = [op.get_attr("tile_spec") for op in Op.list("tirx.tile.")]
    for spec in specs:
        if spec is not None:
            first = spec.doc.split()[0]
            assert re.search(rf"^\s+{spec.name}\s+{re.escape(first)}", text, re.M), spec.name
    assert re.search(r"^\s+gemm\s+D = alpha \* op\(A\) @ op\(B\) \+ beta \* C$", text, re.M)
    # the internals are not listed
    for internal in ("OP_REGISTRY", "dataclass", "simplify_regions", "ComposeOpBuilder"):
        assert internal not in text


def test_dir_of_tx_is_ops_and_scopes():
    names = dir(Tx)
    assert {"gemm", "copy", "cta", "warp", "wg", "compose_op"} <= set(names)
    assert not [n for n in names if n.startswith("_") or n[0].isupper()]
    assert "annotations" not in names and "OP_REGISTRY" not in names
    assert Tx.OP_REGISTRY is not None  # still reachable by name
