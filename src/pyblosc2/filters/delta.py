"""DELTA (id 3): XOR delta against block 0 (spec §9.3).

Element width ``t`` = typesize if it is 1, 2, 4 or 8; else 8 if typesize is a multiple of 8;
else 1. Block 0 is coded against itself (``y[0] = x[0]``, ``y[i] = x[i] ^ x[i-1]``, undone by a
prefix XOR); every other block XORs the first elements of a reference — block 0 of the raw
chunk input when compressing, of the decoded output when decompressing (``ctx.ref``). The
trailing ``bsize % t`` bytes are copied (C leaves them undefined, §9.0).

XOR works bytewise, so the element views need no byte-order care.
"""

from __future__ import annotations

import numpy as np

from ..constants import Filter
from ..kernels import active
from .base import BaseFilter, FilterContext

__all__ = ["Delta", "prefix_xor"]

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _width(typesize: int) -> int:
    if typesize in _UINT:
        return typesize
    return 8 if typesize % 8 == 0 else 1


def prefix_xor(y: np.ndarray, x: np.ndarray) -> None:
    """``x[i] = y[0] ^ … ^ y[i]`` for 1-D unsigned arrays of equal length (the active kernel).

    >>> y = np.array([1, 2, 4, 8, 16, 32, 64, 128, 1, 3], np.uint8); x = np.empty_like(y)
    >>> prefix_xor(y, x); x.tolist()
    [1, 3, 7, 15, 31, 63, 127, 255, 254, 253]
    """
    active().prefix_xor(y, x)


def _views(
    src: np.ndarray, dst: np.ndarray, ref: np.ndarray | None, typesize: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, int]:
    t = _width(typesize)
    n = len(src) // t * t
    dt = _UINT[t]
    r = None if ref is None else ref[:n].view(dt)
    return src[:n].view(dt), dst[:n].view(dt), r, n


class Delta(BaseFilter):
    """XOR delta (meta ignored).

    >>> x = np.array([10, 11, 13, 16], np.uint32).view(np.uint8); y = np.empty_like(x)
    >>> Delta().forward(x, y, FilterContext(4)); y.view(np.uint32).tolist()
    [10, 1, 6, 29]
    """

    id = Filter.DELTA
    name = "delta"

    def forward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        x, y, r, n = _views(src, dst, ctx.ref, ctx.typesize)
        if r is not None:
            np.bitwise_xor(x, r, out=y)
        elif len(x):
            y[0] = x[0]
            np.bitwise_xor(x[1:], x[:-1], out=y[1:])
        dst[n:] = src[n:]

    def backward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        y, x, r, n = _views(src, dst, ctx.ref, ctx.typesize)
        if r is not None:
            np.bitwise_xor(y, r, out=x)
        else:
            prefix_xor(y, x)
        dst[n:] = src[n:]
