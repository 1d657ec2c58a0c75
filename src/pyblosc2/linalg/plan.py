"""How a product is cut into work that fits in memory.

A product (``matmul``, ``tensordot``, ``vecdot``) is computed one *work region* of the result
at a time: consecutive chunks of the result in storage order whose bounding box is exact and
at most :data:`WORK_BYTES` (:func:`work_regions`). The operands' parts a work region needs are
read in *steps* over the contracted axes, each step's parts at most :data:`STEP_BYTES`
(:func:`steps`), and their numpy products summed. An operand's whole part for the region (its
*panel*) is read once and kept when it is at most :data:`PANEL_BYTES` (:class:`Panel`):
reading it step by step would decode the same blocks once per step when its blocks span the
contracted axes, as row-blocked arrays do. Neighbouring result chunks share their parts in a
work region, so an operand is decoded about once per work region it feeds, not per chunk.

A product thus holds the work region, a sum buffer of at most a step's size, two panels and
one step's parts, whatever the size of the operands; the reads (block decoding), numpy's
products (its BLAS) and the compression of each result chunk use their own threads.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence

import numpy as np

from .operands import Operand

__all__ = ["PANEL_BYTES", "STEP_BYTES", "WORK_BYTES", "Panel", "steps", "work_regions"]

#: bytes of operand parts one step of a product reads
STEP_BYTES = 1 << 24
#: an operand's part for one work region is read once and kept up to this many bytes
PANEL_BYTES = 1 << 25
#: bytes of the result computed at once
WORK_BYTES = 1 << 25


def work_regions(
    shape: tuple[int, ...], chunks: tuple[int, ...], itemsize: int
) -> Iterator[tuple[slice, ...]]:
    """Boxes of the result, in storage order, each covering whole consecutive chunks: a
    range of chunk indices along one axis with every later axis whole and every earlier one
    fixed, the largest such that fits :data:`WORK_BYTES` (one chunk when none does).

    >>> [b[0] for b in work_regions((10, 4), (3, 4), WORK_BYTES)]
    [slice(0, 3, None), slice(3, 6, None), slice(6, 9, None), slice(9, 10, None)]
    >>> list(work_regions((10, 4), (3, 2), 1))
    [(slice(0, 10, None), slice(0, 4, None))]
    >>> list(work_regions((), (), 8))
    [()]
    """
    if not shape:
        yield ()
        return
    grid = [-(-s // c) for s, c in zip(shape, chunks, strict=True)]
    chunk_bytes = math.prod(chunks) * itemsize
    slab = 1  # chunks in one index of axis d with all later axes whole
    d = len(shape) - 1
    while d > 0 and slab * grid[d] * chunk_bytes <= WORK_BYTES:
        slab *= grid[d]
        d -= 1
    take = max(1, min(grid[d], WORK_BYTES // max(1, slab * chunk_bytes)))
    lead = [range(g) for g in grid[:d]]
    for coords in itertools.product(*lead):
        for i in range(0, grid[d], take):
            box = [
                slice(c * k, min((c + 1) * k, s))
                for c, k, s in zip(coords, chunks, shape, strict=False)
            ]
            box.append(slice(i * chunks[d], min((i + take) * chunks[d], shape[d])))
            box += [slice(0, s) for s in shape[d + 1 :]]
            yield tuple(box)


def steps(
    lengths: Sequence[int], grains: Sequence[int], items_per_unit: int, itemsize: int
) -> tuple[tuple[int, ...], Iterator[tuple[slice, ...]]]:
    """Boxes over contracted axes of ``lengths`` whose parts, ``items_per_unit`` items per
    contracted position, take at most :data:`STEP_BYTES` (unless one position alone takes
    more): the step along each axis is halved, largest first, and kept a multiple of that
    axis's ``grain`` (an operand's chunk length) while it is at least that. Returns the step
    shape and the boxes in C order.

    >>> shape, boxes = steps([10], [3], 1, 8)
    >>> shape, [b[0] for b in boxes]
    ((10,), [slice(0, 10, None)])
    >>> steps([1000, 1000], [100, 1000], 4, 8)[0]
    (500, 1000)
    """
    step = [max(1, n) for n in lengths]
    limit = max(1, STEP_BYTES // max(1, itemsize * items_per_unit))
    while math.prod(step) > limit and max(step) > 1:
        d = int(np.argmax(step))
        half = max(1, step[d] // 2)
        grain = grains[d]
        step[d] = half - half % grain if half >= grain > 0 else half
    ranges = [range(0, max(n, 1), s) for n, s in zip(lengths, step, strict=True)]
    boxes = (
        tuple(slice(o, min(o + s, n)) for o, s, n in zip(origin, step, lengths, strict=True))
        for origin in itertools.product(*ranges)
    )
    return tuple(step), boxes


class Panel:
    """One operand's part for a result chunk: ``fixed`` slices on its kept axes, the
    contracted axes ``axes`` read one step at a time, or whole once and sliced when the whole
    is at most :data:`PANEL_BYTES`.

    >>> op = Operand(np.arange(12).reshape(3, 4), (3, 4), np.dtype(int), (3, 4))
    >>> p = Panel(op, {0: slice(1, 3)}, (1,))
    >>> p.part((slice(2, 4),)).tolist()
    [[6, 7], [10, 11]]
    """

    def __init__(self, op: Operand, fixed: dict[int, slice], axes: Sequence[int]) -> None:
        self.op, self.fixed, self.axes = op, fixed, tuple(axes)
        items = math.prod(
            fixed[d].stop - fixed[d].start if d in fixed else op.shape[d] for d in range(op.ndim)
        )
        self.whole: np.ndarray | None = None
        if items * op.dtype.itemsize <= PANEL_BYTES:
            self.whole = op.read(self._box({}))

    def _box(self, contracted: dict[int, slice]) -> tuple[slice, ...]:
        return tuple(
            self.fixed.get(d) or contracted.get(d) or slice(0, n)
            for d, n in enumerate(self.op.shape)
        )

    def part(self, box: tuple[slice, ...]) -> np.ndarray:
        """The items of the step ``box`` (one slice per contracted axis, in ``axes`` order)."""
        contracted = dict(zip(self.axes, box, strict=True))
        if self.whole is None:
            return self.op.read(self._box(contracted))
        return self.whole[tuple(contracted.get(d, slice(None)) for d in range(self.op.ndim))]
