"""Numpy-style selections over a chunked array, split into the chunks they touch.

A key (ints, slices with any step, ``...``, and at most one 1-d integer or boolean array) is
normalised per axis into an :class:`AxisSel`: a range with a positive step, or a sorted array
of unique indices, plus how to turn the read values into what numpy returns (reverse the axis
for a negative step, take with the array's inverse for unsorted or repeated indices, drop the
axis of an integer). Each axis then lists the chunks it touches, with the part of the chunk
selected and where it goes in the result; the chunks a selection touches are the product of
those lists, so a strided selection skips the chunks between its items.

:func:`one_chunk_key` is the shortcut of the commonest reads (``ds[i]``, ``ds[i, a:b]``): a
key of ints and slices of step 1 that stays inside one chunk, as that chunk's index and the
key inside it, in a few attribute lookups per axis.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import BoundsError, ParamError, ParamTypeError

__all__ = ["AxisSel", "ChunkPart", "Selection", "one_chunk_key"]

LocalKey = slice | np.ndarray


@dataclass(frozen=True, slots=True)
class AxisSel:
    """The indices one axis selects: ``range(start, stop, step)`` (step > 0) or ``points``
    (sorted, unique), and how the values read become numpy's result."""

    start: int
    stop: int
    step: int
    points: np.ndarray | None = None
    #: reverse the axis (the key had a negative step)
    flip: bool = False
    #: take these positions of the read values (unsorted or repeated array indices)
    inverse: np.ndarray | None = None
    #: an integer index: the axis is dropped from the result
    drop: bool = False

    @property
    def size(self) -> int:
        """How many items are read along this axis."""
        if self.points is not None:
            return len(self.points)
        return len(range(self.start, self.stop, self.step))

    def chunks(self, chunk: int) -> list[tuple[int, LocalKey, slice]]:
        """``(chunk index, key inside the chunk, slice of the read values)`` for each chunk
        of length ``chunk`` this axis touches, in order."""
        if self.size == 0:
            return []
        if self.points is not None:
            pids = self.points // chunk
            cuts = np.flatnonzero(np.diff(pids)) + 1
            bounds = [0, *cuts.tolist(), len(pids)]
            return [
                (int(pids[a]), self.points[a:b] - int(pids[a]) * chunk, slice(a, b))
                for a, b in itertools.pairwise(bounds)
            ]
        a, s, n = self.start, self.step, self.size
        last = a + s * (n - 1)
        ids: Sequence[int]
        if s <= chunk:  # consecutive items cannot skip a chunk
            ids = range(a // chunk, last // chunk + 1)
        else:
            ids = sorted({(a + s * i) // chunk for i in range(n)})
        out: list[tuple[int, LocalKey, slice]] = []
        for k in ids:
            i0 = max(0, -(-(k * chunk - a) // s))
            i1 = min(n, -(-((k + 1) * chunk - a) // s))
            lo = a + s * i0 - k * chunk
            out.append((k, slice(lo, lo + s * (i1 - i0 - 1) + 1, s), slice(i0, i1)))
        return out


@dataclass(frozen=True, slots=True)
class ChunkPart:
    """One chunk a selection touches: its grid index, the key inside it and the region of
    the read values it fills."""

    index: tuple[int, ...]
    local: tuple[LocalKey, ...]
    out: tuple[slice, ...]


@dataclass(frozen=True, slots=True)
class Selection:
    """A normalised key over an array of ``shape``.

    >>> s = Selection.from_key((10, 7), (slice(None, None, -3), 2))
    >>> s.read_shape, s.result_shape
    ((4, 1), (4,))
    >>> [p.index for p in s.parts((4, 4))]
    [(0, 0), (1, 0), (2, 0)]
    """

    shape: tuple[int, ...]
    axes: tuple[AxisSel, ...]

    @classmethod
    def from_key(cls, shape: Sequence[int], key: Any) -> Selection:
        shape = tuple(int(n) for n in shape)
        items = list(key) if isinstance(key, tuple) else [key]
        if sum(k is Ellipsis for k in items) > 1:
            raise ParamError("an index can only have a single ellipsis ('...')")
        if any(k is None for k in items):
            raise NotImplementedError("np.newaxis (None) in an HDF5/xarray selection key")
        arrays = sum(_is_array(k) for k in items)
        if arrays > 1:
            raise NotImplementedError(
                "more than one array index in a key (numpy's vectorised indexing)"
            )
        given = sum(k is not Ellipsis for k in items)
        if given > len(shape):
            raise BoundsError(f"too many indices: {given} for an array of {len(shape)} dims")
        if Ellipsis in [k for k in items if not _is_array(k)]:
            at = next(i for i, k in enumerate(items) if k is Ellipsis)
            items[at : at + 1] = [slice(None)] * (len(shape) - given)
        items += [slice(None)] * (len(shape) - len(items))
        axes = (_axis(k, n, d) for d, (k, n) in enumerate(zip(items, shape, strict=True)))
        return cls(shape, tuple(axes))

    @classmethod
    def of_local(cls, shape: Sequence[int], local: Sequence[LocalKey]) -> Selection:
        """The selection a chunk-local key (:attr:`ChunkPart.local`: slices with positive
        steps and exact stops, sorted unique index arrays) makes in a chunk of ``shape``.

        >>> s = Selection.of_local((8, 8), (slice(1, 6, 2), np.array([0, 7])))
        >>> for p in s.parts((4, 4)):
        ...     print(p.index, p.local[0], p.local[1].tolist(), p.out)
        (0, 0) slice(1, 4, 2) [0] (slice(0, 2, None), slice(0, 1, None))
        (0, 1) slice(1, 4, 2) [3] (slice(0, 2, None), slice(1, 2, None))
        (1, 0) slice(1, 2, 2) [0] (slice(2, 3, None), slice(0, 1, None))
        (1, 1) slice(1, 2, 2) [3] (slice(2, 3, None), slice(1, 2, None))
        """
        axes = tuple(
            AxisSel(k.start, k.stop, k.step)
            if isinstance(k, slice)
            else AxisSel(0, 0, 1, points=np.asarray(k, np.int64))
            for k in local
        )
        return cls(tuple(int(n) for n in shape), axes)

    @property
    def read_shape(self) -> tuple[int, ...]:
        """The shape of the values read (before flips, inverses and dropped axes)."""
        return tuple(a.size for a in self.axes)

    @property
    def result_shape(self) -> tuple[int, ...]:
        return tuple(
            a.size if a.inverse is None else len(a.inverse) for a in self.axes if not a.drop
        )

    def parts(self, chunks: Sequence[int]) -> Iterator[ChunkPart]:
        """The chunks of a grid of ``chunks`` this selection touches (C order)."""
        per_axis = [a.chunks(c) for a, c in zip(self.axes, chunks, strict=True)]
        for combo in itertools.product(*per_axis):
            yield ChunkPart(
                tuple(k for k, _, _ in combo),
                tuple(local for _, local, _ in combo),
                tuple(o for _, _, o in combo),
            )

    def count_chunks(self, chunks: Sequence[int]) -> int:
        return math.prod(len(a.chunks(c)) for a, c in zip(self.axes, chunks, strict=True))

    def finish(self, read: np.ndarray) -> np.ndarray:
        """The values read (``read_shape``) as numpy's result for the key."""
        out = read
        for d, a in enumerate(self.axes):
            if a.flip:
                out = np.flip(out, axis=d)
            if a.inverse is not None:
                out = np.take(out, a.inverse, axis=d)
        drop = tuple(d for d, a in enumerate(self.axes) if a.drop)
        if drop:
            out = out.reshape(tuple(n for d, n in enumerate(out.shape) if d not in drop))
        return out


def one_chunk_key(
    key: Any, shape: Sequence[int], chunks: Sequence[int]
) -> tuple[tuple[int, ...], tuple[int | slice, ...]] | None:
    """``(chunk index, key inside it)`` when ``key`` (ints, slices of step 1, as a tuple or
    alone) selects items of one chunk of a grid of ``chunks`` over ``shape`` and at least one
    item; ints stay ints (numpy drops their axes). None for any other key (empty, ``...``,
    steps, arrays, out of bounds: :meth:`Selection.from_key` says what is wrong).

    >>> one_chunk_key((7, slice(2, 5)), (100, 10), (50, 10))
    ((0, 0), (7, slice(2, 5, 1)))
    >>> one_chunk_key(-1, (100, 10), (50, 10))
    ((1, 0), (49, slice(0, 10, 1)))
    >>> one_chunk_key((slice(40, 60),), (100, 10), (50, 10)) is None  # two chunks
    True
    """
    items = key if type(key) is tuple else (key,)
    if len(items) > len(shape):
        return None
    index: list[int] = []
    local: list[int | slice] = []
    d = 0
    for k in items:
        n = shape[d]
        c = chunks[d]
        d += 1
        if type(k) is slice:
            if k.step is not None and k.step != 1:
                return None
            try:
                a, b, _ = k.indices(n)
            except (TypeError, ValueError):
                return None
            q = a // c
            if b <= a or (b - 1) // c != q:
                return None
            index.append(q)
            local.append(slice(a - q * c, b - q * c, 1))
            continue
        if type(k) is not int:
            if not isinstance(k, np.integer):
                return None
            k = int(k)
        if k < 0:
            k += n
        if not 0 <= k < n:
            return None
        q = k // c
        index.append(q)
        local.append(k - q * c)
    while d < len(shape):  # axes not in the key: whole, inside one chunk
        if not 0 < shape[d] <= chunks[d]:
            return None
        index.append(0)
        local.append(slice(0, shape[d], 1))
        d += 1
    return tuple(index), tuple(local)


def _is_array(k: Any) -> bool:
    return isinstance(k, list | np.ndarray) and not isinstance(k, str)


def _axis(k: Any, n: int, d: int) -> AxisSel:
    if isinstance(k, slice):
        start, stop, step = k.indices(n)
        count = len(range(start, stop, step))
        if step > 0:
            return AxisSel(start, start + step * count if count else start, step)
        if count == 0:
            return AxisSel(0, 0, 1)
        first = start + step * (count - 1)  # the smallest index
        return AxisSel(first, first + (-step) * (count - 1) + 1, -step, flip=True)
    if _is_array(k):
        arr = np.asarray(k)
        if arr.ndim != 1:
            raise NotImplementedError(f"a {arr.ndim}-d array index on axis {d}")
        if arr.dtype == bool:
            if len(arr) != n:
                raise BoundsError(f"boolean index on axis {d} has {len(arr)} items, axis {n}")
            arr = np.flatnonzero(arr)
        elif arr.size and arr.dtype.kind not in "iu":
            raise ParamTypeError(f"array index on axis {d} must hold integers, got {arr.dtype}")
        arr = arr.astype(np.int64)
        if arr.size and (arr.min() < -n or arr.max() >= n):
            raise BoundsError(f"index out of range for axis {d} of size {n}")
        arr = np.where(arr < 0, arr + n, arr)
        uniq, inv = np.unique(arr, return_inverse=True)
        plain = len(uniq) == len(arr) and bool(np.all(uniq == arr))
        return AxisSel(0, 0, 1, points=uniq, inverse=None if plain else inv.ravel())
    try:
        i = operator.index(k)
    except TypeError:
        raise ParamTypeError(
            f"index on axis {d} must be an int, a slice, ... or a 1-d array, got {type(k)}"
        ) from None
    if not -n <= i < n:
        raise BoundsError(f"index {i} is out of bounds for axis {d} with size {n}")
    i %= n
    return AxisSel(i, i + 1, 1, drop=True)
