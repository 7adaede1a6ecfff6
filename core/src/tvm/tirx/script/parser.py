"""Seed-compatible path ``tvm.tirx.script.parser``: the registered script namespaces
(``parser.cuda``) resolve as module attributes, looked up live as in ``builder.ir``."""

from __future__ import annotations

from typing import Any

from .builder.ir import namespace_attribute


def __getattr__(name: str) -> Any:
    return namespace_attribute(__name__, name)
