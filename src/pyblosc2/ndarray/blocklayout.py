"""The in-chunk layout of b2nd (frame-format.md §8.4): a chunk's decompressed buffer is its
blocks in C order over the block grid, each block a C-contiguous ``blocks``-shaped array; the
chunk is padded to whole blocks (``ext``, the extended chunk shape)."""

from __future__ import annotations

import numpy as np

__all__ = ["block_grid", "buffer_to_chunk", "chunk_to_buffer"]


def block_grid(ext: tuple[int, ...], blocks: tuple[int, ...]) -> tuple[int, ...]:
    """Blocks per dimension of an extended chunk."""
    return tuple(e // b for e, b in zip(ext, blocks, strict=True))


def buffer_to_chunk(raw: np.ndarray, ext: tuple[int, ...], blocks: tuple[int, ...]) -> np.ndarray:
    """A decompressed chunk buffer (1-d, of the array's dtype) as an ``ext``-shaped array.

    >>> buffer_to_chunk(np.arange(8), (2, 4), (2, 2)).tolist()
    [[0, 1, 4, 5], [2, 3, 6, 7]]
    """
    nd = len(ext)
    if not nd:
        return raw.reshape(())
    arr = raw.reshape(block_grid(ext, blocks) + blocks)
    order = [x for i in range(nd) for x in (i, nd + i)]
    return arr.transpose(order).reshape(ext)


def chunk_to_buffer(arr: np.ndarray, blocks: tuple[int, ...]) -> np.ndarray:
    """Inverse of :func:`buffer_to_chunk`: an ``ext``-shaped chunk as its 1-d buffer.

    >>> chunk_to_buffer(np.array([[0, 1, 4, 5], [2, 3, 6, 7]]), (2, 2)).tolist()
    [0, 1, 2, 3, 4, 5, 6, 7]
    """
    nd = arr.ndim
    if not nd:
        return np.ascontiguousarray(arr).reshape(-1)
    nb = block_grid(arr.shape, blocks)
    split = arr.reshape([x for pair in zip(nb, blocks, strict=True) for x in pair])
    order = [2 * i for i in range(nd)] + [2 * i + 1 for i in range(nd)]
    return np.ascontiguousarray(split.transpose(order)).reshape(-1)
