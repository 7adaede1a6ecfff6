"""The seed's module path ``tvm.ir.base``: the node base class and structural comparison."""

from __future__ import annotations

from .node import Node
from .structural import assert_structural_equal, structural_equal, structural_hash

__all__ = ["Node", "assert_structural_equal", "structural_equal", "structural_hash"]
