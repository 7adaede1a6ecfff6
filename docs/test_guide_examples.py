"""Every Python example of the user guide runs (nox -s docs).

The ```python blocks of a page run in order, in one namespace, as the reader would type them.
Each block is compiled with the page as its file name and its own line numbers, so a kernel's
source is found by ``inspect`` and an error points at the page's line. A block right after the
line ``<!-- no-run: why -->`` is shown only (it needs hardware or a backend the docs session
does not install). A ```text block right after ``<!-- output of the block above -->`` must be
exactly what the preceding Python block printed (the page's path written as its file name).
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

import tvm.tirx.operator.tile_primitive  # noqa: F401 - core's registrations, before any snapshot
from tvm._registry import snapshot_all
from tvm.driver import ensure_builtin_backends
from tvm.ir import Op

ensure_builtin_backends()  # the host backend and what it registers, before any snapshot
import tvm.tirx.compilation_pipeline  # noqa: E402,F401 - registers pipelines on import
import tvm.tirx.pipeline  # noqa: E402,F401
import tvm.tirx.transform  # noqa: E402,F401

GUIDE = Path(__file__).resolve().parent / "guide"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
NO_RUN = "<!-- no-run:"
OUTPUT = "<!-- output of the block above -->"


@dataclass
class Block:
    lang: str
    line: int  # 1-based line of the block's first code line
    code: str
    marker: str  # the non-blank line before the opening fence


def blocks(page: Path) -> list[Block]:
    text = page.read_text("utf-8")
    out = []
    for m in FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").splitlines()
        out.append(Block(m.group(1), text.count("\n", 0, m.start()) + 2, m.group(2),
                         before[-1].strip() if before else ""))
    return out


PAGES = sorted(p for p in GUIDE.rglob("*.md") if any(b.lang == "python" for b in blocks(p)))


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """A working folder, a private compile cache, and registries restored afterwards (what
    core registers lazily is registered first, so that it survives the restore)."""
    Op.exists("tirx.device_entry")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TVM_CACHE_DIR", str(tmp_path / "cache"))
    restore = snapshot_all()
    try:
        yield
    finally:
        restore()


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(GUIDE)) for p in PAGES])
def test_page_examples_run(page: Path, sandbox, monkeypatch) -> None:
    # The page runs as a module of its own (dataclasses and pickling look modules up by name).
    module = types.ModuleType(f"guide_{page.stem.replace('-', '_')}")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    printed = ""
    ran = 0
    for block in blocks(page):
        if block.lang == "text" and block.marker == OUTPUT:
            shown = printed.replace(str(page), page.name)
            assert shown.rstrip("\n") == block.code.rstrip("\n"), (
                f"{page.name}:{block.line}: the output shown differs from what the example prints")
            continue
        if block.lang != "python" or block.marker.startswith(NO_RUN):
            continue
        source = "\n" * (block.line - 1) + block.code
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(source, str(page), "exec"), namespace)  # noqa: S102 - the guide's own code
        printed = out.getvalue()
        ran += 1
    assert ran > 0


def test_every_page_is_in_the_nav() -> None:
    config = (GUIDE.parents[1] / "mkdocs.yml").read_text("utf-8")
    for page in GUIDE.rglob("*.md"):
        assert str(page.relative_to(GUIDE)) in config, f"{page} is not in mkdocs.yml's nav"
