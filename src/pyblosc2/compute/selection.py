"""A selection of an expression's items (what ``expr[key]`` and ``compute(item=key)`` take):
per-axis index ranges over the expression's shape, the axes an integer removes and the new
axes ``None`` inserts; and the pieces a selection is computed in.

Only numpy's basic indexing is a :class:`Selection` (ints, slices with any step, Ellipsis,
None). Array keys (fancy indexing, boolean masks) are read as the basic bounding box of what
they pick plus a key applied to that box (:func:`split_fancy`), so the engine still computes
only the chunks they touch.

>>> s = Selection.of((1, slice(None, None, 2), None), (3, 5))
>>> s.ranges, s.squeeze, s.result_shape
((range(1, 2), range(0, 5, 2)), (0,), (3, 1))
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import BoundsError, ParamError
from ..ndarray.indexing import check_key, is_int_key, normalize_key

__all__ = ["Box", "Selection", "piece_boxes", "split_fancy"]

#: A piece of a result, in result coordinates (unit steps): one slice per axis.
Box = tuple[slice, ...]


def _is_basic(k: Any) -> bool:
    return k is None or k is Ellipsis or isinstance(k, slice) or is_int_key(k)


@dataclass(frozen=True, slots=True)
class Selection:
    """Per-axis ranges of a basic key over an expression of ``len(ranges)`` axes; ``squeeze``
    the axes an int index removes, ``newaxes`` where ``None`` puts length-1 axes in the
    result (positions in the result after squeezing)."""

    ranges: tuple[range, ...]
    squeeze: tuple[int, ...] = ()
    newaxes: tuple[int, ...] = ()
    #: whether a 0-d result is a scalar (numpy: no Ellipsis in the key)
    scalar: bool = True

    @classmethod
    def of(cls, key: Any, shape: tuple[int, ...]) -> Selection:
        """The selection of the basic key ``key`` (see :func:`is_basic`) over ``shape``."""
        items = key if isinstance(key, tuple) else (key,)
        if isinstance(key, tuple) and not key:
            items = ()
        check_key(tuple(k for k in items if k is not None))
        # None entries: where they land in the result (ints before them drop their axis)
        newaxes, pos = [], 0
        for k in items:
            if k is None:
                newaxes.append(pos)
                pos += 1
            elif k is Ellipsis:
                pos += len(shape) - sum(1 for j in items if j is not None and j is not Ellipsis)
            elif not is_int_key(k):
                pos += 1
        plain = tuple(k for k in items if k is not None)
        ranges, squeeze = normalize_key(plain, shape)
        return cls(
            tuple(ranges), tuple(squeeze), tuple(newaxes), not any(k is Ellipsis for k in items)
        )

    @classmethod
    def everything(cls, shape: tuple[int, ...]) -> Selection:
        """All of an expression of ``shape``."""
        return cls(tuple(range(n) for n in shape))

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the selected box (squeezed axes kept, as length 1)."""
        return tuple(len(r) for r in self.ranges)

    @property
    def result_shape(self) -> tuple[int, ...]:
        """The shape of ``expr[key]``: int axes dropped, ``None`` axes added."""
        out = [len(r) for d, r in enumerate(self.ranges) if d not in self.squeeze]
        for p in self.newaxes:
            out.insert(p, 1)
        return tuple(out)

    @property
    def is_everything(self) -> bool:
        return (
            not self.squeeze
            and not self.newaxes
            and all(r.start == 0 and r.step == 1 for r in self.ranges)
        )

    def finish(self, box: np.ndarray) -> np.ndarray:
        """The computed box (``self.shape``) as ``expr[key]`` gives it (a numpy scalar for
        a 0-d result of a key without Ellipsis, as numpy)."""
        out = box.reshape(self.result_shape)
        return out[()] if self.scalar and not self.result_shape else out

    def source_key(self, box: Box) -> tuple[slice, ...]:
        """The key over the expression's items that the result piece ``box`` (in this
        selection's coordinates) covers (steps kept, negative ones included)."""
        out = []
        for r, b in zip(self.ranges, box, strict=True):
            sub = r[b]
            if not sub:  # empty: a reversed range's empty part may start at -1 (the end)
                out.append(slice(0, 0))
                continue
            stop = sub.stop if sub.stop >= 0 else None
            out.append(slice(sub.start, stop, sub.step))
        return tuple(out)

    def compose(self, key: tuple[Any, ...]) -> tuple[Any, ...]:
        """The key over the base that ``key`` (ints and slices, one per axis of
        :attr:`result_shape`) picks out of this selection."""
        keyed = [k for p, k in enumerate(key) if p not in self.newaxes]
        out: list[Any] = []
        j = 0
        for d, r in enumerate(self.ranges):
            if d in self.squeeze:
                out.append(r.start)
                continue
            k = keyed[j] if j < len(keyed) else slice(None)
            j += 1
            sub = r[k]
            if isinstance(sub, int):
                out.append(sub)
                continue
            if not sub:  # empty: a reversed range's empty part may start at -1 (the end)
                out.append(slice(0, 0))
                continue
            stop = sub.stop if sub.stop >= 0 else None
            out.append(slice(sub.start, stop, sub.step))
        return tuple(out)


def split_fancy(key: Any, shape: tuple[int, ...]) -> tuple[Selection, Any]:
    """An array key (integer or boolean arrays, lists, mixed with basic entries) as the basic
    selection of its bounding box and the key that picks its items out of that box.

    >>> sel, local = split_fancy(np.array([3, 1, 3]), (10,))
    >>> sel.ranges, local[0].tolist()
    ((range(1, 4),), [2, 0, 2])
    """
    items = key if isinstance(key, tuple) else (key,)
    if any(k is Ellipsis for k in items):
        i = next(j for j, k in enumerate(items) if k is Ellipsis)
        used = sum(
            (np.asarray(k).ndim if _array_like(k) and np.asarray(k).dtype == bool else 1)
            for k in items
            if k is not None and k is not Ellipsis
        )
        items = items[:i] + (slice(None),) * (len(shape) - used) + items[i + 1 :]
    if any(k is None for k in items):
        raise NotImplementedError("indexing an expression with arrays and None together")
    ranges: list[range] = []
    local: list[Any] = []
    axis = 0
    for k in items:
        if _array_like(k):
            arr = np.asarray(k)
            if arr.dtype == bool:
                n = arr.ndim
                if arr.shape != shape[axis : axis + n]:
                    raise BoundsError(
                        f"boolean index of shape {arr.shape} does not match the shape "
                        f"{shape[axis : axis + n]} it indexes"
                    )
                nz = np.nonzero(arr)
                for d in range(n):
                    lo = int(nz[d].min()) if nz[d].size else 0
                    hi = int(nz[d].max()) + 1 if nz[d].size else 0
                    ranges.append(range(lo, hi))
                box_mask = arr[tuple(slice(r.start, r.stop) for r in ranges[axis : axis + n])]
                local.append(box_mask)
                axis += n
                continue
            if arr.dtype.kind not in "iu":
                raise BoundsError(
                    f"arrays used as indices must be of integer or boolean type, got {arr.dtype}"
                )
            n = shape[axis]
            if arr.size and (arr.min() < -n or arr.max() >= n):
                raise BoundsError(f"index out of bounds for axis {axis} with size {n}")
            arr = arr % n if n else arr
            lo = int(arr.min()) if arr.size else 0
            hi = int(arr.max()) + 1 if arr.size else 0
            ranges.append(range(lo, hi))
            local.append(arr - lo)
            axis += 1
            continue
        if axis >= len(shape):
            raise BoundsError(f"too many indices: array is {len(shape)}-dimensional")
        if is_int_key(k):
            n = shape[axis]
            i = int(k)
            if not -n <= i < n:
                raise BoundsError(f"index {i} is out of bounds for axis {axis} with size {n}")
            ranges.append(range(i % n, i % n + 1))
            local.append(0)
        elif isinstance(k, slice):
            r = range(*k.indices(shape[axis]))
            lo = min(r[0], r[-1]) if len(r) else 0
            hi = max(r[0], r[-1]) + 1 if len(r) else 0
            ranges.append(range(lo, hi))
            stop = r[-1] - lo + (1 if r.step > 0 else -1) if len(r) else 0
            local.append(slice(r[0] - lo if len(r) else 0, None if stop < 0 else stop, r.step))
        else:
            raise ParamError(f"cannot index an expression with {type(k).__name__}")
        axis += 1
    while axis < len(shape):
        ranges.append(range(shape[axis]))
        local.append(slice(None))
        axis += 1
    return Selection(tuple(ranges)), tuple(local)


def _array_like(k: Any) -> bool:
    return isinstance(k, np.ndarray | list) or (
        hasattr(k, "shape")
        and hasattr(k, "dtype")
        and not np.isscalar(k)
        and getattr(k, "ndim", 0) > 0
    )


def piece_boxes(sel: Selection, chunks: Sequence[int] | None, piece_items: int) -> Iterator[Box]:
    """The pieces a selection is computed in, in result coordinates and C order over their
    grid, generated one at a time (never a list: a huge array is never planned whole).

    With ``chunks`` (the partition the first array operand has over the expression's shape)
    the pieces of unit-step axes follow its chunk boundaries, so each piece decodes one chunk
    of it; strided axes take about a chunk's span of items per piece. Without, pieces are
    slabs of whole trailing axes of about ``piece_items`` items.

    >>> list(piece_boxes(Selection((range(1, 7),)), (4,), 100))
    [(slice(0, 3, None),), (slice(3, 6, None),)]
    """
    shape = sel.shape
    if not shape:
        yield ()
        return
    if 0 in shape:
        return
    if chunks is None or len(chunks) != len(shape) or not all(chunks):
        chunks = _slabs(shape, piece_items)
        bounds = [[*range(0, n, c), n] for n, c in zip(shape, chunks, strict=True)]
    else:
        bounds = [_axis_bounds(r, c) for r, c in zip(sel.ranges, chunks, strict=True)]
    spans = [list(itertools.pairwise(b)) for b in bounds]
    for combo in itertools.product(*spans):
        yield tuple(slice(a, b) for a, b in combo)


def _slabs(shape: tuple[int, ...], piece_items: int) -> tuple[int, ...]:
    """Piece shape: whole trailing axes while they fit in ``piece_items``, then a run of the
    axis before them.

    >>> _slabs((10, 20, 30), 1000), _slabs((10, 20, 30), 5)
    ((1, 20, 30), (1, 1, 5))
    """
    for d in range(len(shape)):
        inner = math.prod(shape[d + 1 :])
        if inner <= piece_items:
            k = max(1, min(shape[d], piece_items // max(inner, 1)))
            return (1,) * d + (k,) + tuple(shape[d + 1 :])
    return tuple(shape)


def _axis_bounds(r: range, chunk: int) -> list[int]:
    """Result-index boundaries of a range along an axis with ``chunk``-sized source chunks."""
    n = len(r)
    if n == 0:
        return [0]
    step = abs(r.step)
    if step == 1 and r.step > 0:
        first = r.start
        cuts = range((first // chunk + 1) * chunk, first + n, chunk)
        return [0, *(c - first for c in cuts), n]
    per = max(1, chunk // step)
    return [*range(0, n, per), n]
