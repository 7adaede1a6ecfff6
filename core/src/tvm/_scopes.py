"""Stacks of ``with`` scopes (``with target:``, ``with PassContext():``).

Each stack is a context variable holding a tuple, innermost last, so threads and asyncio tasks
each see their own scopes.
"""

from __future__ import annotations

import contextvars
from typing import TypeVar

__all__ = ["pop_scope", "push_scope"]

T = TypeVar("T")


def push_scope(stack: contextvars.ContextVar[tuple[T, ...]], item: T) -> None:
    """Open ``item``'s scope: it becomes the innermost of ``stack``."""
    stack.set((*stack.get(), item))


def pop_scope(stack: contextvars.ContextVar[tuple[T, ...]], item: T, what: str) -> None:
    """Close ``item``'s scope, which must be the innermost (``what`` names the kind of scope in
    the error when it is not)."""
    items = stack.get()
    if not items or items[-1] is not item:
        raise RuntimeError(f"{what} scopes exited out of order")
    stack.set(items[:-1])
