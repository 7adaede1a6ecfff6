"""``python -m tvm new-backend NAME``: a renamed copy of the template backend
(``plugins/tvm-backend-example``), ready to install and to pass its own tests.

The template is the one in the tvm checkout this tvm is imported from (or ``--template``): it
is not shipped inside tvm-core, so that it exists once. Every spelling of the template's name is
replaced (``tvm-backend-example``, ``tvm_backend_example``, ``Example``, ``EXAMPLE``,
``example``) in file contents and in file and folder names; caches and build output are left
behind.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from . import _hints

__all__ = ["TEMPLATE", "TEMPLATE_NAME", "new_backend", "renamings", "template_dir"]

TEMPLATE_NAME = "example"
#: the template's folder, relative to a checkout's root
TEMPLATE = Path("plugins") / "tvm-backend-example"
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist",
                               ".pytest_cache", ".mypy_cache", ".ruff_cache")


def renamings(name: str) -> list[tuple[str, str]]:
    """The replacements that turn the template into backend ``name``, most specific first."""
    camel = "".join(part.capitalize() for part in name.split("_"))
    dashed = name.replace("_", "-")
    old = TEMPLATE_NAME
    return [(f"tvm-backend-{old}", f"tvm-backend-{dashed}"),
            (f"tvm_backend_{old}", f"tvm_backend_{name}"),
            (old.capitalize(), camel), (old.upper(), name.upper()), (old, name)]


def template_dir(template: str | Path | None = None) -> Path:
    """The template to copy: ``template`` if given, else the checkout's; an error that says how
    to name one when there is no checkout."""
    if template is not None:
        path = Path(template)
    else:
        root = _hints._checkout()
        if root is None:
            raise FileNotFoundError(
                "the template backend lives in a tvm checkout (plugins/tvm-backend-example) and "
                "this tvm is not imported from one; pass --template <checkout>/" f"{TEMPLATE}")
        path = root / TEMPLATE
    if not (path / "pyproject.toml").is_file() or not (path / "src" / f"tvm_backend_{TEMPLATE_NAME}").is_dir():
        raise FileNotFoundError(f"{path} is not the template backend (no pyproject.toml and "
                                f"src/tvm_backend_{TEMPLATE_NAME}/ in it)")
    return path


def new_backend(name: str, dest: str | Path | None = None,
                template: str | Path | None = None) -> Path:
    """Copy the template to ``dest`` (default ``./tvm-backend-<name>``) as backend ``name``;
    returns the new folder. ``name`` is a lower-case identifier (the backend, target kind,
    script namespace and entry-point name)."""
    if not _NAME.match(name) or name == TEMPLATE_NAME:
        raise ValueError(f"backend name {name!r}: use a lower-case identifier (letters, digits, "
                         f"'_'; a letter first), not {TEMPLATE_NAME!r}, e.g. 'mychip'")
    source = template_dir(template)
    target = Path(dest) if dest is not None else Path(f"tvm-backend-{name.replace('_', '-')}")
    if target.exists():
        raise FileExistsError(f"{target} exists already; choose another folder (--dest)")
    shutil.copytree(source, target, ignore=_SKIP)
    pairs = renamings(name)
    for path in sorted(target.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if path.is_file():
            _rewrite(path, pairs)
        renamed = _apply(path.name, pairs)
        if renamed != path.name:
            path.rename(path.with_name(renamed))
    return target


def _rewrite(path: Path, pairs: list[tuple[str, str]]) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return  # not text: copied as it is
    new = _apply(text, pairs)
    if new != text:
        path.write_text(new, encoding="utf-8")


def _apply(text: str, pairs: list[tuple[str, str]]) -> str:
    """Every replacement at once, the first that matches at a position winning (so a new name
    that contains the old one is not replaced again)."""
    table = dict(pairs)
    pattern = re.compile("|".join(re.escape(old) for old, _ in pairs))
    return pattern.sub(lambda m: table[m.group(0)], text)
