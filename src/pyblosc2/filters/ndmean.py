"""NDMEAN (id 33): a b2nd block cell by cell, every item replaced by its cell's mean (spec §9.7,
C: ``plugins/filters/ndmean/ndmean.c``). Lossy.

``meta`` (int8, 1-127) is the cell side, clamped to the block along each axis. Compressing lays
the cells out as NDCELL does (:func:`~.ndgeometry.cell_order`) and writes, for each cell, its
mean as many times as the cell has items. The items are float32 (typesize 4) or float64
(typesize 8) whatever the array's dtype (C reinterprets the bytes); the mean is C's: the items
added one by one to a zero of that width, in the cell's order, then divided by the item count
in that width. Decompressing puts the cells back in place (the means stay).

C computes each cell's origin with the first axis' cell side for every axis: when the block
is narrower than ``meta`` along the first axis but wider along another, its cells overlap and
C cannot decode what it wrote. pyblosc2 refuses to write such blocks and reports C's error
when reading them.
"""

from __future__ import annotations

import math

import numpy as np

from ..constants import Filter
from ..context import ChunkContext
from ..errors import FormatError, ParamError
from .base import BaseFilter, FilterContext
from .ndgeometry import block_shape, cell_order, check_block

__all__ = ["NDMean"]

_FLOATS: dict[int, np.dtype] = {4: np.dtype("<f4"), 8: np.dtype("<f8")}


def cell_means(values: np.ndarray, order: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The mean of each cell as C computes it: ``0 + v0 + v1 + ...`` in the cell's order, in
    the items' float width, divided by the count in that width.

    >>> v = np.array([1, 2, 3, 4, 5, 6], np.float32)
    >>> cell_means(v, np.array([0, 1, 3, 4, 2, 5]), np.array([4, 2])).tolist()
    [3.0, 4.5]
    """
    ordered = values[order]
    starts = np.cumsum(lengths) - lengths
    means = np.empty(len(lengths), values.dtype)
    for n in np.unique(lengths):  # at most 2**ndim distinct cell sizes
        sel = np.flatnonzero(lengths == n)
        rows = np.zeros((len(sel), int(n) + 1), values.dtype)
        rows[:, 1:] = ordered[starts[sel, None] + np.arange(n)]
        # accumulate is sequential (no pairwise summation): C's loop, rounding for rounding
        sums = np.add.accumulate(rows, axis=1, dtype=values.dtype)[:, -1]
        means[sel] = sums / values.dtype.type(n)
    return means


class NDMean(BaseFilter):
    """The NDMEAN filter, bound to the super-chunk whose ``b2nd`` metalayer it reads."""

    id = Filter.NDMEAN
    name = "ndmean"
    drops_data = True

    def __init__(self, ctx: ChunkContext | None = None) -> None:
        self._ctx = ctx

    def bound(self, ctx: ChunkContext | None) -> NDMean:
        return NDMean(ctx)

    def check(self, typesize: int, meta: int) -> None:
        try:
            self._geometry(typesize, meta)
        except FormatError as exc:
            raise ParamError(f"NDMEAN cannot filter this array: {exc}") from None

    def _geometry(self, typesize: int, meta: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(block shape, cell shape), checked as C checks them."""
        where = "NDMEAN filter"
        blocks = block_shape(self._ctx, "NDMEAN")  # C's order of checks
        if typesize not in _FLOATS:
            raise FormatError(where, "typesize", None, "4 or 8 (float32/float64)", typesize)
        side = meta - 256 if meta >= 128 else meta
        if side <= 0:
            raise FormatError(where, "filters_meta", None, "a cell side of 1..127", side)
        cells = tuple(min(side, b) for b in blocks)
        overlapping = [
            i for i, (b, c) in enumerate(zip(blocks, cells, strict=True)) if b > c != cells[0]
        ]
        if overlapping:
            raise FormatError(
                where,
                "cell shape",
                None,
                f"cells C can decode (the block's first axis, {blocks[0]}, is narrower than "
                f"the cell side {side} while axis {overlapping[0]} is wider)",
                cells,
            )
        return blocks, cells

    def _plan(self, ctx: FilterContext, src: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        blocks, cells = self._geometry(ctx.typesize, ctx.meta)
        check_block(blocks, ctx.typesize, len(src), math.prod(cells), "NDMEAN filter")
        order, lengths = cell_order(blocks, cells)
        return order, lengths, ctx.typesize

    def forward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        order, lengths, ts = self._plan(ctx, src)
        means = cell_means(src.view(_FLOATS[ts]), order, lengths)
        dst.view(_FLOATS[ts])[:] = np.repeat(means, lengths)

    def backward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        order, _, ts = self._plan(ctx, src)
        dst.reshape(-1, ts)[order] = src.reshape(-1, ts)
