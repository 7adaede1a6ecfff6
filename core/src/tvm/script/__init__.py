"""TVMScript: kernels written as Python functions, and the text form of the IR.

``from tvm.script import tirx as T`` gives the ``T`` facade (``@T.prim_func``);
``from tvm.script import ir as I`` gives ``@I.ir_module``; ``tvm.script.from_source(text)``
parses printed text back to IR; ``node.script()`` prints it.
"""

from __future__ import annotations

from . import ir, tirx
from .namespace import register_script_namespace
from .parser import from_source
from .printer import to_script

__all__ = ["from_source", "ir", "register_script_namespace", "tirx", "to_script"]
