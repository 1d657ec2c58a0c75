"""The guards every SChunk method runs under: ``reads`` holds what a read needs and
``writes`` what a change needs (see :meth:`Frame.reading` and :meth:`Frame.writing`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

__all__ = ["reads", "writes"]

F = TypeVar("F", bound=Callable[..., Any])


def reads(method: F) -> F:
    """Run ``method`` holding what a read needs (see :meth:`Frame.reading`)."""

    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._frame.reading():
            return method(self, *args, **kwargs)

    return cast(F, run)


def writes(method: F) -> F:
    """Run ``method`` holding what a change needs (see :meth:`Frame.writing`)."""

    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        self._check_writable()
        with self._frame.writing():
            return method(self, *args, **kwargs)

    return cast(F, run)
