"""AWS Trainium backend for tvm-core.

Importing this package is cheap: the instruction form (``isa``), the NKI renderers
(``nki_render``) and the numpy simulator (``simulator``) are submodules imported on use.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
