"""Filters: the items of an array where a boolean expression is true (``cond.where(x)``,
``x[cond]``, ``sa["a > 3"]``), in numpy's (C) order, piece by piece.

Each piece reads the condition's part (decoding only the chunks it covers) and, where any of
it is true, the array's part, keeping the selected items (and, when asked, their positions).
How many items a filter keeps is known only as it runs: the gathered items are counted
against the memory bound as they come, and the filter stops with
:class:`~pyblosc2.errors.MemoryBudgetError` as soon as they would pass it.

>>> import numpy as np
>>> from pyblosc2 import asarray
>>> from .blockwise import Source
>>> from .selection import Selection
>>> from .tree import Call, Const, Name
>>> a = asarray(np.arange(10), chunks=(4,), blocks=(2,))
>>> cond = Source(Call("greater", (Name("a"), Const(6))), {"a": a}, (10,), np.dtype(bool))
>>> x = Source(Name("a"), {"a": a}, (10,), a.dtype)
>>> select(cond, x, Selection.everything((10,)), 1 << 26)[0].tolist()
[7, 8, 9]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import MemoryBudgetError, ParamError
from .blockwise import PIECE_ITEMS, PieceBuffers, Source, run_pieces
from .plan import Plan
from .selection import Box, Selection, piece_boxes

__all__ = ["select"]


def _c_ordered(sel: Selection, chunks: Any) -> bool:
    """Whether pieces in grid order are also in C order of the items (every piece spans
    the whole of all but the first axis)."""
    shape = sel.shape
    if len(shape) <= 1:
        return True
    return chunks is None or all(c >= n for c, n in zip(chunks[1:], shape[1:], strict=True))


def select(
    cond: Source, x: Source, sel: Selection, bound: int, indices: bool = False
) -> tuple[np.ndarray, np.ndarray | None]:
    """The items of ``x[sel]`` where ``cond[sel]`` is true, in C order, and (``indices``)
    their flat positions in ``sel``'s result."""
    if np.dtype(cond.dtype) != np.bool_:
        raise ParamError(f"a filter needs a boolean condition, got dtype {cond.dtype}")
    if tuple(cond.shape) != tuple(x.shape):
        raise ParamError(f"the condition has shape {cond.shape}, the filtered array {x.shape}")
    rshape = [n for d, n in enumerate(sel.shape) if d not in sel.squeeze]
    chunks = cond.chunks or x.chunks
    items = max(1, min(math.prod(chunks) if chunks else PIECE_ITEMS, math.prod(sel.shape) or 1))
    per = cond.piece_bytes(items) + x.piece_bytes(items)
    plan = Plan.make("a filter", per, 0, max(cond.nthreads, x.nthreads), bound)
    ordered = _c_ordered(sel, chunks)
    want_pos = indices or not ordered

    bufs = PieceBuffers()

    def piece(box: Box) -> tuple[np.ndarray, np.ndarray | None]:
        key = sel.source_key(box)
        parts = bufs.cache()  # an operand of both is read once
        c = np.asarray(cond.read(key, parts), bool)
        if not c.any():
            return np.empty(0, x.dtype), np.empty(0, np.int64) if want_pos else None
        vals = np.asarray(x.read(key, parts))[c]
        pos = None
        if want_pos:
            nz = np.nonzero(c)
            coords = [
                z + b.start
                for z, b, d in zip(nz, box, range(len(box)), strict=True)
                if d not in sel.squeeze
            ]
            pos = np.ravel_multi_index(coords, rshape) if rshape else np.zeros(len(vals), np.int64)
        return vals, pos

    got: list[np.ndarray] = []
    where: list[np.ndarray] = []
    held = 0
    for vals, pos in run_pieces(piece, piece_boxes(sel, chunks, items), plan.nthreads):
        held += vals.nbytes + (0 if pos is None else pos.nbytes)
        if 2 * held + plan.peak > bound:
            raise MemoryBudgetError("the filter's selected items", 2 * held + plan.peak, bound)
        if len(vals):
            got.append(vals)
            if pos is not None:
                where.append(pos)
    values = np.concatenate(got) if got else np.empty(0, x.dtype)
    positions = np.concatenate(where) if where else (np.empty(0, np.int64) if want_pos else None)
    if not ordered and positions is not None and len(positions):
        order = np.argsort(positions, kind="stable")
        values, positions = values[order], positions[order]
    return values, positions
