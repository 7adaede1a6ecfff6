"""mkdocs hooks of the user guide (mkdocs.yml ``hooks:``).

Pages generated from tvm's own registries, so the guide cannot drift from the code:

- ``reference/tile-ops.md``: :func:`tvm.tirx.operator.tile_primitive.ops.reference_markdown`,
  the same text as ``help(Tx.<op>)``;
- the marker ``<!-- generated: environment-variables -->`` becomes the table of
  :data:`tvm._doctor.ENV_VARS` (what ``tvm doctor`` reports).
"""

from __future__ import annotations

from typing import Any

from mkdocs.structure.files import File, Files

ENV_MARKER = "<!-- generated: environment-variables -->"


def on_files(files: Files, config: Any) -> Files:
    from tvm.tirx.operator.tile_primitive.ops import reference_markdown

    files.append(File.generated(config, "reference/tile-ops.md", content=reference_markdown()))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    if ENV_MARKER in markdown:
        markdown = markdown.replace(ENV_MARKER, env_table())
    return markdown


def env_table() -> str:
    from tvm._doctor import ENV_VARS

    rows = ["| variable | what it does |", "|---|---|"]
    rows += [f"| `{name}` | {text} |" for name, text in ENV_VARS.items()]
    return "\n".join(rows)
