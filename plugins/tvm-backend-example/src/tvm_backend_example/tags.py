"""Target tags of the example backend: data, one line per tag."""

from __future__ import annotations

from typing import Any

TAGS: dict[str, dict[str, Any]] = {
    "example/demo-board": {"kind": "example", "vector_width": 8, "mcpu": "demo-board"},
    "example/tiny": {"kind": "example", "vector_width": 1, "mcpu": "tiny"},
}
