"""The generated parts of the user guide, written into the checkout so that they read (and link)
the same in a checkout as on the built site.

    python docs/generated.py           rewrite them from tvm's registries
    python docs/generated.py --check   exit 1 and name the stale files

- ``guide/reference/tile-ops.md``: :func:`tvm.tirx.operator.tile_primitive.ops.reference_markdown`,
  the same text as ``help(Tx.<op>)`` (whole file);
- in ``guide/environment.md``, between :data:`ENV_MARKER` and :data:`END`: the table of
  :data:`tvm._doctor.ENV_VARS` (what ``tvm doctor`` reports);
- in ``guide/compile-options.md``, between :data:`OPTIONS_MARKER` and :data:`END`: one section
  per target kind with a builder, from its options type
  (:meth:`tvm.backend.contract.Options.describe`), for every backend installed here (run it
  with all of them installed, as the docs session does).

``docs/hooks.py`` regenerates the same text when mkdocs builds the site; a test compares the
checkout's copy with what the code gives now (``core/tests/cli/test_generated_guide.py``).
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

GUIDE = Path(__file__).resolve().parent / "guide"
TILE_OPS = "reference/tile-ops.md"
ENV_MARKER = "<!-- generated: environment-variables -->"
OPTIONS_MARKER = "<!-- generated: compile-options -->"
END = "<!-- end of generated text -->"


def tile_ops() -> str:
    from tvm.tirx.operator.tile_primitive.ops import reference_markdown

    return reference_markdown()


def env_table() -> str:
    from tvm._doctor import ENV_VARS

    rows = ["| variable | what it does |", "|---|---|"]
    rows += [f"| `{name}` | {text} |" for name, text in ENV_VARS.items()]
    return "\n".join(rows)


def option_kinds() -> list[str]:
    """The target kinds with a builder, every installed backend loaded; ``c`` first."""
    import tvm.backend
    from tvm.backend.contract import BUILDERS
    from tvm.driver import ensure_builtin_backends

    tvm.backend.load_all()
    ensure_builtin_backends()
    return sorted(BUILDERS, key=lambda k: (k != "c", k))


def options_section(kind: str) -> str:
    """The compile options of target kind ``kind``: a heading and a table."""
    import tvm.backend
    from tvm.backend.contract import BUILDERS, get_builder

    options = get_builder(kind).options_type
    records = {r.name: r for r in tvm.backend.list_backends()}
    owner = records.get(BUILDERS.owner_of(kind) or "")
    out = [f"## `{kind}` ({owner.distribution if owner else BUILDERS.owner_of(kind)})", "",
           f"`{options.__module__}.{options.__qualname__}`: "
           f"{(options.__doc__ or '').strip().splitlines()[0]}", "",
           "| option | type | default | meaning |", "|---|---|---|---|"]
    for name, type_name, default, doc in options.describe():
        shown = "-" if default is dataclasses.MISSING else f"`{default!r}`"
        out.append(f"| `{name}` | `{type_name.replace(' | ', ' or ')}` | {shown} | {doc} |")
    return "\n".join(out)


def compile_options() -> str:
    return "\n\n".join(options_section(kind) for kind in option_kinds())


def fill(text: str, marker: str, content: str) -> str:
    """``text`` with what lies between ``marker`` and the next :data:`END` replaced by
    ``content`` (both markers are added after a lone ``marker``)."""
    head, found, rest = text.partition(marker)
    if not found:
        raise ValueError(f"the marker {marker} is missing")
    _, ended, tail = rest.partition(END)
    if not ended:
        tail = rest
    return f"{head}{marker}\n{content}\n{END}{tail}"


def between(text: str, marker: str) -> str:
    """What the checkout holds between ``marker`` and :data:`END`."""
    return text.partition(marker)[2].partition(END)[0].strip("\n")


def pages() -> dict[Path, str]:
    """Each generated file and its content now."""
    env = GUIDE / "environment.md"
    options = GUIDE / "compile-options.md"
    return {
        GUIDE / TILE_OPS: tile_ops(),
        env: fill(env.read_text(), ENV_MARKER, env_table()),
        options: fill(options.read_text(), OPTIONS_MARKER, compile_options()),
    }


def main(argv: list[str]) -> int:
    stale = []
    for path, content in pages().items():
        if path.is_file() and path.read_text() == content:
            continue
        stale.append(path)
        if "--check" not in argv:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)
    if stale and "--check" in argv:
        names = ", ".join(str(p.relative_to(GUIDE.parent.parent)) for p in stale)
        print(f"stale generated pages: {names}; run: python docs/generated.py")
        return 1
    for path in stale:
        print(f"wrote {path.relative_to(GUIDE.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
