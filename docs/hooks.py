"""mkdocs hooks of the user guide (mkdocs.yml ``hooks:``).

The generated parts of the guide (the tile-op reference, the environment-variable table, the
compile options) are files in the checkout, written by ``python docs/generated.py``; these
hooks regenerate the same text while the site is built, so that the site never shows a stale
copy. See ``docs/generated.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generated  # noqa: E402 - docs/ is not a package; mkdocs loads this file by path


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri == generated.TILE_OPS:
        return generated.tile_ops()
    if generated.ENV_MARKER in markdown:
        markdown = generated.fill(markdown, generated.ENV_MARKER, generated.env_table())
    if generated.OPTIONS_MARKER in markdown:
        markdown = generated.fill(markdown, generated.OPTIONS_MARKER, generated.compile_options())
    return markdown
