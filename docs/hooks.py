"""mkdocs hooks of the user guide (mkdocs.yml ``hooks:``).

Pages generated from tvm's own registries, so the guide cannot drift from the code:

- ``reference/tile-ops.md``: :func:`tvm.tirx.operator.tile_primitive.ops.reference_markdown`,
  the same text as ``help(Tx.<op>)``;
- the marker ``<!-- generated: environment-variables -->`` becomes the table of
  :data:`tvm._doctor.ENV_VARS` (what ``tvm doctor`` reports);
- the marker ``<!-- generated: compile-options -->`` becomes one table per target kind with a
  builder, from its options type (:meth:`tvm.backend.contract.Options.describe`): the options
  of every backend installed where the guide is built (the docs session installs them all).
"""

from __future__ import annotations

from typing import Any

from mkdocs.structure.files import File, Files

ENV_MARKER = "<!-- generated: environment-variables -->"
OPTIONS_MARKER = "<!-- generated: compile-options -->"


def on_files(files: Files, config: Any) -> Files:
    from tvm.tirx.operator.tile_primitive.ops import reference_markdown

    files.append(File.generated(config, "reference/tile-ops.md", content=reference_markdown()))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    if ENV_MARKER in markdown:
        markdown = markdown.replace(ENV_MARKER, env_table())
    if OPTIONS_MARKER in markdown:
        markdown = markdown.replace(OPTIONS_MARKER, compile_options())
    return markdown


def env_table() -> str:
    from tvm._doctor import ENV_VARS

    rows = ["| variable | what it does |", "|---|---|"]
    rows += [f"| `{name}` | {text} |" for name, text in ENV_VARS.items()]
    return "\n".join(rows)


def compile_options() -> str:
    import dataclasses

    import tvm.backend
    from tvm.backend.contract import BUILDERS, get_builder
    from tvm.driver import ensure_builtin_backends

    tvm.backend.load_all()
    ensure_builtin_backends()
    out = []
    for kind in sorted(BUILDERS, key=lambda k: (k != "c", k)):
        options = get_builder(kind).options_type
        records = {r.name: r for r in tvm.backend.list_backends()}
        owner = records.get(BUILDERS.owner_of(kind) or "")
        out += [f"## `{kind}` ({owner.distribution if owner else BUILDERS.owner_of(kind)})", "",
                f"`{options.__module__}.{options.__qualname__}`: "
                f"{(options.__doc__ or '').strip().splitlines()[0]}", "",
                "| option | type | default | meaning |", "|---|---|---|---|"]
        for name, type_name, default, doc in options.describe():
            shown = "-" if default is dataclasses.MISSING else f"`{default!r}`"
            out.append(f"| `{name}` | `{type_name.replace(' | ', ' or ')}` | {shown} | {doc} |")
        out.append("")
    return "\n".join(out)
