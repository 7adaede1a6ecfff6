"""``TVM_LOG_LEVEL``: tvm's log records on stderr, through the :mod:`logging` module.

tvm logs to the logger ``"tvm"`` and its children (``tvm.backend``, ``tvm.transform``,
``tvm.host.compiler``, ``tvm.runtime.cache``): backend loads at INFO, each pass with its time
and each cache hit or miss at DEBUG, each external compiler command at INFO. An application
configures those loggers as it likes; ``TVM_LOG_LEVEL=DEBUG`` (or ``INFO``, ``WARNING``, a
number) does it for you: :func:`configure` runs at ``import tvm`` and adds a stderr handler.

:mod:`logging` costs milliseconds to import, so modules on the ``import tvm`` path log through
:func:`log`, which does nothing until logging is in use; the others use ``logging.getLogger``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["configure", "log"]

_FORMAT = "tvm %(levelname)s [%(name)s] %(message)s"


def configure() -> None:
    """Apply ``TVM_LOG_LEVEL`` to the ``tvm`` logger (once; a no-op when it is unset)."""
    text = os.environ.get("TVM_LOG_LEVEL", "").strip()
    if not text:
        return
    import logging  # noqa: PLC0415 - logging costs milliseconds; imported only when TVM_LOG_LEVEL is set

    level: Any = int(text) if text.isdigit() else logging.getLevelName(text.upper())
    if not isinstance(level, int):
        print(f"tvm: TVM_LOG_LEVEL={text!r} is not a log level (use DEBUG, INFO, WARNING, "
              "ERROR or a number); ignored", file=sys.stderr)
        return
    logger = logging.getLogger("tvm")
    logger.setLevel(level)
    if not any(getattr(h, "_tvm_handler", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(_FORMAT))
        handler._tvm_handler = True  # type: ignore[attr-defined]
        logger.addHandler(handler)


def log(name: str, level: int, message: str, *args: Any) -> None:
    """``logging.getLogger(name).log(level, message, *args)`` once the application (or
    ``TVM_LOG_LEVEL``) uses logging; nothing, and no import, before that."""
    logging = sys.modules.get("logging")
    if logging is not None:
        logging.getLogger(name).log(level, message, *args)
