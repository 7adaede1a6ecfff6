"""Seed-compatible location of the script builder (``tvm.tirx.script.builder.ir``); the
registered script namespaces resolve as attributes here too (``builder.cuda``)."""

from __future__ import annotations

from typing import Any

from .ir import namespace_attribute


def __getattr__(name: str) -> Any:
    return namespace_attribute(__name__, name)
