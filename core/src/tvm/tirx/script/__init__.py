"""Seed-compatible location of the script builder (``tvm.tirx.script.builder``)."""

from . import builder

__all__ = ["builder"]
