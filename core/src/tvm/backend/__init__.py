"""Backends: discovery, selection, loading, status and aliases.

Backends are pip distributions that declare an entry point in the group ``tvm.backends``
(``cuda = "tvm_backend_cuda.plugin"``) and implement hooks of :mod:`tvm.plugin.hookspec`.

* ``import tvm`` loads the installed backends that ``TVM_BACKENDS`` selects: unset = all,
  ``cuda,trn`` = only those, ``-metal`` = all but those, ``0`` or ``none`` = none. Backends built
  into tvm-core (the host backend ``c``) always load. A backend that fails is skipped with one
  warning; ``TVM_BACKENDS_STRICT=1`` turns that into an error.
* :func:`load` loads one by hand (idempotent, thread-safe, requirements first), :func:`load_all`
  every installed one, :func:`is_loaded` answers, :func:`list_backends` reports.
* After a load, ``tvm.backend.<name>`` and ``tvm.tirx.<name>`` are the backend's package and
  ``import tvm.tirx.<name>.<sub>`` imports its submodules.
"""

from __future__ import annotations

from typing import Any

from .._hints import CATALOGUE, CatalogueEntry

# the seed's private record of backends loaded through its contract (a ``tvm.backend.<name>``
# package in sys.modules with a ``register_backend()``): name -> package; its tests pop a name
# to load a stand-in package again
from ._loader import _SEED_PACKAGES as _LOADED_BACKENDS  # noqa: F401
from ._loader import _autoload as _autoload  # called at the end of tvm/__init__.py
from ._loader import (
    ensure_builtin_backends,
    install_hint_for_backend,
    is_loaded,
    load,
    load_all,
    load_or_register,
    missing_message,
    register_plugin,
)
from ._selection import Selection, parse_selection
from ._status import BackendRecord, format_table, list_backends

__all__ = [
    "CATALOGUE",
    "BackendRecord",
    "CatalogueEntry",
    "Selection",
    "ensure_builtin_backends",
    "format_table",
    "install_hint_for_backend",
    "is_loaded",
    "list_backends",
    "load",
    "load_all",
    "missing_message",
    "parse_selection",
    "load_or_register",
    "register_plugin",
]


def __getattr__(name: str) -> Any:
    # Loaded backends are set as real attributes; this only runs for names that are not.
    if not name.startswith("_"):
        hint = install_hint_for_backend(name)
        if hint is not None:
            raise AttributeError(f"module 'tvm.backend' has no attribute {name!r}: {hint}")
    raise AttributeError(f"module 'tvm.backend' has no attribute {name!r}")
