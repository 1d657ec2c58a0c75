"""Which chunks, and which blocks inside them, a key of an N-d proxy touches.

Chunks are numbered in C order of the chunk grid and blocks in C order of the block grid of
one chunk (frame-format.md §8.4; a chunk is padded to whole blocks, so every chunk has
``prod(ceil(chunks / blocks))`` of them). A key is placed one dimension at a time: a slice
of step 1 as the run it covers, anything else (a step, integer or boolean arrays) as the
coordinates it selects. Several advanced indices are crossed rather than paired, a superset
of what they select, so nothing a read needs is ever left out.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

__all__ = ["Dim", "key_dims", "wanted_cells"]

#: one dimension of a placed key: ``(lo, hi)``, a run of coordinates, or their sorted array
Dim = tuple[int, int] | np.ndarray


def _array_dims(k: Any, shape: tuple[int, ...], d: int) -> list[Dim] | None:
    arr = np.asarray(k)
    if arr.dtype == np.bool_:
        if arr.ndim == 0 or d + arr.ndim > len(shape):
            return None
        return [np.unique(c) for c in np.nonzero(arr)]
    if not np.issubdtype(arr.dtype, np.integer):
        return None
    n = shape[d]
    flat = arr.reshape(-1).astype(np.int64)
    flat = flat[(flat >= -n) & (flat < n)]
    return [np.unique(np.where(flat < 0, flat + n, flat))]


def key_dims(key: Any, shape: tuple[int, ...]) -> list[Dim] | None:
    """Per dimension of ``shape``, what ``key`` selects; None for a key this cannot place
    (the caller then takes every chunk).

    >>> key_dims((slice(2, 8), [5, 1, 5]), (10, 10))
    [(2, 8), array([1, 5])]
    >>> key_dims((slice(None, None, 4), 3), (10, 10))
    [array([0, 4, 8]), (3, 4)]
    """
    if isinstance(key, tuple) and len(key) == 0:
        return [(0, n) for n in shape]
    parts = list(key) if isinstance(key, tuple) else [key]
    parts = [p for p in parts if p is not None]
    if sum(p is Ellipsis for p in parts) > 1:
        return None
    i = next((j for j, p in enumerate(parts) if p is Ellipsis), None)
    if i is not None:
        consumed = sum(np.asarray(p).ndim if _is_mask(p) else 1 for p in parts if p is not Ellipsis)
        parts[i : i + 1] = [slice(None)] * max(len(shape) - consumed, 0)
    dims: list[Dim] = []
    for k in parts:
        d = len(dims)
        if d >= len(shape):
            return None
        n = shape[d]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            if step == 1:
                dims.append((start, max(start, stop)))
            else:
                dims.append(np.unique(np.arange(start, stop, step, dtype=np.int64)))
        elif isinstance(k, int | np.integer) and not isinstance(k, bool | np.bool_):
            i = int(k) + n if int(k) < 0 else int(k)
            dims.append((i, i + 1) if 0 <= i < n else (0, 0))
        elif isinstance(k, list | np.ndarray):
            got = _array_dims(k, shape, d)
            if got is None:
                return None
            dims.extend(got)
        else:
            return None
    if len(dims) > len(shape):
        return None
    dims.extend((0, n) for n in shape[len(dims) :])
    return dims


def _is_mask(k: Any) -> bool:
    return isinstance(k, list | np.ndarray) and np.asarray(k).dtype == np.bool_


def _per_chunk(dim: Dim, c: int, b: int) -> dict[int, np.ndarray]:
    """Chunk index along one dimension -> the block indexes inside it that ``dim`` touches."""
    if isinstance(dim, tuple):
        lo, hi = dim
        if hi <= lo:
            return {}
        out = {}
        for ci in range(lo // c, (hi - 1) // c + 1):
            first = max(lo - ci * c, 0) // b
            last = (min(hi - ci * c, c) - 1) // b
            out[ci] = np.arange(first, last + 1, dtype=np.int64)
        return out
    if dim.size == 0:
        return {}
    cidx = dim // c
    cells = np.unique(cidx * (-(-c // b)) + (dim % c) // b)
    per = -(-c // b)
    return {int(ci): cells[cells // per == ci] % per for ci in np.unique(cells // per)}


def wanted_cells(
    dims: list[Dim], shape: tuple[int, ...], chunks: tuple[int, ...], blocks: tuple[int, ...]
) -> dict[int, list[int] | None]:
    """``{nchunk: blocks}`` the placed key ``dims`` touches (None: every block of it).

    >>> wanted_cells([(0, 3), (0, 10)], (10, 10), (5, 10), (2, 5))
    {0: [0, 1, 2, 3]}
    >>> wanted_cells([(0, 10), (0, 10)], (10, 10), (5, 10), (2, 5))
    {0: None, 1: None}
    """
    if any(n == 0 for n in shape):
        return {}
    grid = [math.ceil(s / c) for s, c in zip(shape, chunks, strict=True)]
    inner = [math.ceil(c / b) for c, b in zip(chunks, blocks, strict=True)]
    per_dim = [_per_chunk(d, c, b) for d, c, b in zip(dims, chunks, blocks, strict=True)]
    out: dict[int, list[int] | None] = {}
    for coords in itertools.product(*(sorted(p) for p in per_dim)):
        nchunk = int(np.ravel_multi_index(coords, grid))
        rows = [p[ci] for p, ci in zip(per_dim, coords, strict=True)]
        if all(len(r) == n for r, n in zip(rows, inner, strict=True)):
            out[nchunk] = None
            continue
        ids = np.ravel_multi_index(np.ix_(*rows), inner)
        out[nchunk] = np.sort(ids.reshape(-1)).tolist()
    return out
