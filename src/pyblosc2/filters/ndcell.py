"""NDCELL (id 32): a b2nd block laid out cell by cell (spec §9.7, C:
``plugins/filters/ndcell/ndcell.c``). Lossless.

``meta`` (unsigned, 1-255) is the cell side: cells of ``meta`` items along every axis of the
block (the last cell along an axis keeps what is left), written one after the other in C order
of the cells, each cell's items in C order (:func:`~.ndgeometry.cell_order`). The block shape
comes from the super-chunk's ``b2nd`` metalayer; the block must hold exactly that many items
and at least one whole cell (``meta ** ndim`` items), and the array at most 8 dimensions, or C
refuses the block, as pyblosc2 does. Decoding puts the items back.
"""

from __future__ import annotations

import math

import numpy as np

from ..constants import Filter
from ..context import ChunkContext
from ..errors import FormatError, ParamError
from .base import BaseFilter, FilterContext
from .ndgeometry import block_shape, cell_order, check_block

__all__ = ["NDCell"]


class NDCell(BaseFilter):
    """The NDCELL filter, bound to the super-chunk whose ``b2nd`` metalayer it reads."""

    id = Filter.NDCELL
    name = "ndcell"

    def __init__(self, ctx: ChunkContext | None = None) -> None:
        self._ctx = ctx

    def bound(self, ctx: ChunkContext | None) -> NDCell:
        return NDCell(ctx)

    def check(self, typesize: int, meta: int) -> None:
        if meta == 0:
            raise ParamError("NDCELL cell side (filters_meta) must be in 1..255, got 0")
        try:
            self._geometry(typesize, meta)
        except FormatError as exc:
            raise ParamError(f"NDCELL cannot filter this array: {exc}") from None

    def _geometry(self, typesize: int, meta: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(block shape, cell shape), checked as C checks them."""
        blocks = block_shape(self._ctx, "NDCELL")
        if meta == 0:
            raise FormatError("NDCELL filter", "filters_meta", None, "a cell side of 1..255", 0)
        cells = (meta,) * len(blocks)
        limit = math.prod(blocks)
        if meta ** len(blocks) > limit:
            raise FormatError(
                "NDCELL filter",
                "cell size",
                None,
                f"at most {limit} items (the block)",
                meta ** len(blocks),
            )
        return blocks, cells

    def _items(self, ctx: FilterContext, src: np.ndarray) -> tuple[np.ndarray, int]:
        typesize = ctx.typesize
        blocks, cells = self._geometry(typesize, ctx.meta)
        check_block(blocks, typesize, len(src), math.prod(cells), "NDCELL filter")
        return cell_order(blocks, cells)[0], typesize

    def forward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        order, ts = self._items(ctx, src)
        np.take(src.reshape(-1, ts), order, axis=0, out=dst.reshape(-1, ts))

    def backward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        order, ts = self._items(ctx, src)
        dst.reshape(-1, ts)[order] = src.reshape(-1, ts)
