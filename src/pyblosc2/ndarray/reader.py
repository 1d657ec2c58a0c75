"""The NDArray read path: a box of the array decoded chunk by chunk, or block by block when
the box touches few blocks of a chunk (b2nd layout, frame-format.md §8.3)."""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .ndarray import NDArray

__all__ = ["read_blocks", "read_box"]


def read_box(arr: NDArray, lo: tuple[int, ...], hi: tuple[int, ...]) -> np.ndarray:
    out = np.empty(tuple(b - a for a, b in zip(lo, hi, strict=True)), arr.dtype)
    if out.size == 0:
        return out
    if not arr.ndim:
        out[()] = arr._chunk_array(0)[()]
        return out
    parts = []
    for coords, n in arr._chunks_in(lo, hi):
        origin = [c * s for c, s in zip(coords, arr.chunks, strict=True)]
        src, dst = [], []
        for a, b, o, c in zip(lo, hi, origin, arr.chunks, strict=True):
            s0, s1 = max(a, o), min(b, o + c)
            src.append(slice(s0 - o, s1 - o))
            dst.append(slice(s0 - a, s1 - a))
        parts.append((n, src, dst))
    # chunks read whole are fetched together first (concurrently from a remote store)
    arr.schunk._prefetch([n for n, src, _ in parts if _block_ranges(arr, src) is None])
    for n, src, dst in parts:
        if not read_blocks(arr, n, src, out, dst):
            out[tuple(dst)] = arr._chunk_array(n)[tuple(src)]
    return out


def read_blocks(arr: NDArray, n: int, src: list[slice], out: np.ndarray, dst: list[slice]) -> bool:
    """Copy the in-chunk region ``src`` of chunk ``n`` block by block, decoding (and on
    files reading) only the blocks it intersects; False when that would touch more than
    half of the chunk's blocks (one whole-chunk decode is then cheaper)."""
    ranges = _block_ranges(arr, src)
    if ranges is None:
        return False
    grid = arr._block_grid()
    t = arr.dtype.itemsize
    bbytes = math.prod(arr.blocks) * t
    for bc in itertools.product(*ranges):
        nb = int(np.ravel_multi_index(bc, grid))
        raw = arr.schunk.read_chunk_range(n, nb * bbytes, (nb + 1) * bbytes)
        block = np.frombuffer(raw, arr.dtype).reshape(arr.blocks)
        b_src, b_dst = [], []
        for s, d, c, b in zip(src, dst, bc, arr.blocks, strict=True):
            o = c * b
            s0, s1 = max(s.start, o), min(s.stop, o + b)
            b_src.append(slice(s0 - o, s1 - o))
            b_dst.append(slice(d.start + s0 - s.start, d.start + s1 - s.start))
        out[tuple(b_dst)] = block[tuple(b_src)]
    return True


def _block_ranges(arr: NDArray, src: list[slice]) -> list[range] | None:
    """The block coordinates ``src`` touches, per axis; None when that is more than half of
    the chunk's blocks (the chunk is then decoded whole)."""
    ranges = [
        range(s.start // b, (s.stop - 1) // b + 1) for s, b in zip(src, arr.blocks, strict=True)
    ]
    if math.prod(len(r) for r in ranges) * 2 > math.prod(arr._block_grid()):
        return None
    return ranges
