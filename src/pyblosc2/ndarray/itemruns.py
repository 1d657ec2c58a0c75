"""Where the selected items of a chunk's byte-shuffled blocks go: runs of items contiguous
both in a block's byte planes and in the result, for
:meth:`~pyblosc2.kernels.base.KernelSet.unshuffle_runs` (one kernel call per chunk writes
them straight into the result: no unshuffle of the whole blocks, no copy after it).

The blocks are decoded into one buffer in block order, each block's ``g`` byte planes one
after the other (b2nd layout, frame-format.md §8.4; SHUFFLE, chunk-format.md §9.1). A run is
the items of the innermost axis' selection within one block, lengthened over the outer axes
while the items stay contiguous in both places (a slab of whole block rows is one run per
block).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

__all__ = ["item_runs"]

#: (first block, block count, items within each block, first result index, result count)
Piece = tuple[int, int, slice, int, int]

#: runs of one combination of pieces built with Python lists up to this count, numpy beyond
_LIST_RUNS = 64


def item_runs(
    pieces: list[list[Piece]],
    blocks: tuple[int, ...],
    bgrid: tuple[int, ...],
    strides: Sequence[int],
    itemsize: int,
) -> np.ndarray | None:
    """The ``(runs, 3)`` table ``(plane position, result byte, items)`` of every combination
    of ``pieces`` (per axis, as the reader cuts a chunk's selection), for blocks of shape
    ``blocks`` laid out on the grid ``bgrid`` in one buffer and a result of byte
    ``strides``; None when the innermost axis is read with a step (its items are not runs).

    >>> p = [[(1, 1, slice(1, 2, 1), 0, 1)], [(0, 2, slice(0, 4, 1), 0, 8)]]
    >>> item_runs(p, (2, 4), (2, 2), (32, 4), 4).tolist()  # row 1 of blocks 2 and 3
    [[68, 0, 4], [100, 16, 4]]
    """
    nd = len(blocks)
    t = itemsize
    bs = math.prod(blocks) * t  # a block's bytes: its planes, one after the other
    gstr = [math.prod(bgrid[d + 1 :]) * bs for d in range(nd)]
    istr = [math.prod(blocks[d + 1 :]) for d in range(nd)]
    if strides[-1] != t:
        return None
    tables = []
    for combo in itertools.product(*pieces):
        g0, cnt, sel, k, n = combo[-1]
        if sel.step != 1 and n > 1:
            return None
        m = n if cnt == 1 else blocks[-1]
        src = [(g0 + i) * gstr[-1] + sel.start for i in range(cnt)]
        dst = [(k + i * m) * t for i in range(cnt)]
        full = m == blocks[-1]
        d = nd - 2
        while d >= 0:  # fold outer axes into the runs while they stay contiguous
            g0, cnt, sel, k, n = combo[d]
            if len(src) > 1 or not full or strides[d] != m * t or (sel.step != 1 and n > 1):
                break
            per = n if cnt == 1 else blocks[d]
            s0 = src[0] + sel.start * istr[d]
            d0 = dst[0] + k * strides[d]
            src = [s0 + (g0 + i) * gstr[d] for i in range(cnt)]
            dst = [d0 + i * per * strides[d] for i in range(cnt)]
            m *= per
            full = per == blocks[d]
            d -= 1
        s_arr, d_arr = _expand(combo[: d + 1], src, dst, gstr, istr, strides)
        table = np.empty((len(s_arr), 3), np.int64)
        table[:, 0] = s_arr
        table[:, 1] = d_arr
        table[:, 2] = m
        tables.append(table)
    return tables[0] if len(tables) == 1 else np.concatenate(tables)


def _expand(
    outer: Sequence[Piece],
    src: list[int],
    dst: list[int],
    gstr: list[int],
    istr: list[int],
    strides: Sequence[int],
) -> tuple[list[int] | np.ndarray, list[int] | np.ndarray]:
    """The runs ``src``/``dst`` repeated for every selected index of the ``outer`` axes (the
    axes not folded into them)."""
    count = len(src) * math.prod(p[4] for p in outer)
    lists = count <= _LIST_RUNS
    s: list[int] | np.ndarray = src if lists else np.array(src, np.int64)
    t: list[int] | np.ndarray = dst if lists else np.array(dst, np.int64)
    for d, (g0, cnt, sel, k, n) in enumerate(outer):
        # (a piece of several blocks selects each whole: ``sel`` is then the whole block)
        idx = range(sel.start, sel.stop, sel.step)
        es = [(g0 + i) * gstr[d] + j * istr[d] for i in range(cnt) for j in idx]
        ed = [(k + r) * strides[d] for r in range(n)]
        if lists:
            s = [a + x for x in es for a in s]
            t = [a + y for y in ed for a in t]
        else:
            s = np.add.outer(np.array(es, np.int64), s).ravel()
            t = np.add.outer(np.array(ed, np.int64), t).ravel()
    return s, t
