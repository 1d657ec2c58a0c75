"""Index keys over an N-d array in python-blosc2's normalized form: per-axis ``slice``
objects with ``None`` for new axes, the flat chunk indices a chunk-aligned selection covers,
and the limit of the strided-gather read (frame-format.md §8.3: chunks in C order over the
chunk grid).

These are the helpers python-blosc2 exposes from ``blosc2.ndarray`` and ``blosc2.utils``;
pyblosc2 implements them itself with the same meaning.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .indexing import is_int_key

__all__ = [
    "_SUBSAMPLE_GATHER_MAX_COORDS",
    "detect_aligned_chunks",
    "get_chunks_idx",
    "get_ndarray_start_stop",
    "process_key",
]

#: The most items a strided read gathers point by point (decoding only the blocks holding a
#: selected item); larger selections read their bounding box chunk by chunk.
_SUBSAMPLE_GATHER_MAX_COORDS = 1_000_000


def process_key(key: Any, shape: Sequence[int]) -> tuple[tuple[Any, ...], tuple[bool, ...]]:
    """``key`` (ints, slices, Ellipsis, None) as one entry per axis plus ``None`` entries:
    ints become one-item slices (``mask`` marks them), slices get explicit bounds clipped to
    the shape (an empty selection becomes ``slice(0, 0, step)``).

    >>> process_key((1, slice(None, None, 2)), (3, 5))
    ((slice(1, 2, None), slice(0, 5, 2)), (True, False))
    >>> process_key((None, Ellipsis, -1), (3, 5))
    ((None, slice(0, 3, 1), slice(4, 5, None)), (False, False, True))
    """
    items = key if isinstance(key, tuple) else (key,)
    if sum(k is Ellipsis for k in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for k in items if k is not None and k is not Ellipsis)
    if used > len(shape):
        raise IndexError(
            f"too many indices for array: array is {len(shape)}-dimensional, "
            f"but {used} were indexed"
        )
    fill = (slice(None),) * (len(shape) - used)
    if any(k is Ellipsis for k in items):
        i = next(j for j, k in enumerate(items) if k is Ellipsis)
        items = items[:i] + fill + items[i + 1 :]
    else:
        items = items + fill
    out: list[Any] = []
    mask: list[bool] = []
    axis = 0
    for k in items:
        if k is None:
            out.append(None)
            mask.append(False)
            continue
        n = shape[axis]
        if is_int_key(k):
            i = int(k)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            i %= n
            out.append(slice(i, i + 1, None))
            mask.append(True)
        elif isinstance(k, slice):
            start, stop, step = k.indices(n)
            r = range(start, stop, step)
            if not r:
                out.append(slice(0, 0, step))
            elif step > 0:
                out.append(slice(r[0], r[-1] + 1, step))
            else:
                out.append(slice(r[0], None if r[-1] == 0 else r[-1] - 1, step))
            mask.append(False)
        else:
            out.append(k)
            mask.append(False)
        axis += 1
    return tuple(out), tuple(mask)


def get_ndarray_start_stop(
    ndim: int, key: Sequence[slice | None], shape: Sequence[int]
) -> tuple[list[int], list[int], tuple[int, ...], list[bool]]:
    """Per-axis start, stop and step of a key of slices and ``None`` (as :func:`process_key`
    returns), with missing bounds filled from ``shape`` and negative or too large bounds
    clipped to it; and which key entries are ``None``.

    >>> get_ndarray_start_stop(2, (None, slice(1, None), slice(-3, 10, 2)), (4, 5))
    ([1, 2], [4, 5], (1, 2), [True, False, False])
    """
    none_mask = [k is None for k in key]
    sl = [k for k in key if k is not None]
    start, stop, step = [], [], []
    for d in range(ndim):
        s, n = sl[d], shape[d]
        a = 0 if s.start is None else s.start
        b = n if s.stop is None else s.stop
        a = a + n if a < 0 else a
        b = b + n if b < 0 else b
        start.append(min(a, n))
        stop.append(min(b, n))
        step.append(1 if s.step is None else s.step)
    return start, stop, tuple(step), none_mask


def detect_aligned_chunks(
    key: Sequence[slice], shape: Sequence[int], chunks: Sequence[int], consecutive: bool = False
) -> list[int]:
    """The flat (C-order) indices of the chunks a selection of whole chunks covers, sorted;
    ``[]`` when a slice bound is not a multiple of its chunk length, or (``consecutive``)
    when the chunks are not consecutive.

    >>> detect_aligned_chunks((slice(5, 10), slice(0, 10)), (10, 20), (5, 10))
    [2]
    >>> detect_aligned_chunks((slice(0, 2), slice(0, 4)), (2, 10), (1, 4), consecutive=True)
    []
    """
    if len(key) != len(shape):
        return []
    ranges = []
    for s, n, c in zip(key, shape, chunks, strict=True):
        a = 0 if s.start is None else s.start
        b = n if s.stop is None else s.stop
        if (s.start is not None and a % c) or (s.stop is not None and b % c):
            return []
        ranges.append(range(a // c, b // c))
    grid = tuple(math.ceil(n / c) for n, c in zip(shape, chunks, strict=True))
    flat = sorted(int(np.ravel_multi_index(co, grid)) for co in itertools.product(*ranges))
    if consecutive and flat and flat[-1] - flat[0] + 1 != len(flat):
        return []
    return flat


def get_chunks_idx(shape: tuple[int, ...], chunks: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
    """The chunk grid of ``shape`` cut into ``chunks``, and the number of chunks
    (python-blosc2's ``blosc2.ndarray.get_chunks_idx``, also in ``blosc2.utils``).

    >>> get_chunks_idx((10, 7), (4, 7))
    ((3, 1), 3)
    """
    grid = tuple(-(-s // c) for s, c in zip(shape, chunks, strict=True))
    return grid, math.prod(grid)
