"""User filters written in Python (python-blosc2's ``register_filter``; spec §9.0 user ids).

``forward`` and ``backward`` are callables ``f(input, output, meta, schunk)`` applied to each
block, as C-Blosc2 applies a registered filter (``blosc2.c:pipeline_forward``,
``pipeline_backward``): ``input`` and ``output`` are ``uint8`` arrays of the block's size,
``meta`` the slot's ``filters_meta`` byte (0-255) and ``schunk`` the
:class:`~pyblosc2.context.ChunkContext` of the super-chunk. A filter registered by name only
names a C plugin, which pyblosc2 cannot load: using it raises :class:`NotImplementedError`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..context import ChunkContext
from .base import BaseFilter, FilterContext

__all__ = ["DynamicFilter", "FilterFunction", "PythonFilter"]

#: ``f(input, output, meta, schunk) -> None``
FilterFunction = Callable[[np.ndarray, np.ndarray, int, Any], Any]


class PythonFilter(BaseFilter):
    """A filter made of two Python callables, registered under a user id (160-255)."""

    id: int  # type: ignore[misc]
    name: str  # type: ignore[misc]

    def __init__(
        self,
        fid: int,
        forward: FilterFunction,
        backward: FilterFunction,
        name: str,
        ctx: ChunkContext | None = None,
    ) -> None:
        self.id, self.name = fid, name
        self.forward_fn, self.backward_fn = forward, backward
        self._ctx = ctx

    def bound(self, ctx: ChunkContext | None) -> PythonFilter:
        return PythonFilter(self.id, self.forward_fn, self.backward_fn, self.name, ctx)

    def _schunk(self, ctx: FilterContext) -> ChunkContext:
        return self._ctx if self._ctx is not None else ChunkContext(ctx.typesize)

    def forward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        self.forward_fn(src, dst, ctx.meta, self._schunk(ctx))

    def backward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        self.backward_fn(src, dst, ctx.meta, self._schunk(ctx))


class DynamicFilter(BaseFilter):
    """A filter registered by name only (a C plugin python-blosc2 loads dynamically)."""

    id: int  # type: ignore[misc]
    name: str  # type: ignore[misc]

    def __init__(self, fid: int, name: str) -> None:
        self.id, self.name = fid, name

    def _refuse(self) -> NotImplementedError:
        return NotImplementedError(
            f"filter {self.id} ({self.name!r}) is a dynamically loaded C plugin: pyblosc2 "
            "cannot load C plugins (register Python forward and backward functions instead)"
        )

    def check(self, typesize: int, meta: int) -> None:
        raise self._refuse()

    def forward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        raise self._refuse()

    def backward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        raise self._refuse()
