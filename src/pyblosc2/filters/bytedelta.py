"""BYTEDELTA (id 35) and the legacy BYTEDELTA_BUGGY (id 34), spec §9.5.

The block is ``g`` byte channels of ``L = bsize // g`` bytes, ``g`` = meta (the planes a
preceding SHUFFLE with the same group size writes). Each channel is delta-coded mod 256 (its
first byte kept) and decoded by a per-channel prefix sum; the trailing ``bsize % g`` bytes are
copied. Meta 0 means "the super-chunk's typesize" in C (an error for a stand-alone chunk);
python-blosc2 always stores the typesize, and here 0 is read as the chunk typesize.

Id 34 is what SIMD builds of C-Blosc2 wrote before the fix: the last ``L % 16`` bytes of each
channel restart from a previous byte of 0 (and C leaves the trailing bytes unwritten; they are
copied here). It is only read — the chunk writer refuses it; its forward exists for tests.
"""

from __future__ import annotations

import numpy as np

from ..constants import Filter
from ..kernels import active
from .base import BaseFilter, FilterContext

__all__ = ["ByteDelta", "ByteDeltaBuggy", "channel_cumsum"]


def _channels(a: np.ndarray, ctx: FilterContext) -> tuple[np.ndarray, int]:
    g = ctx.meta or ctx.typesize
    length = len(a) // g
    return a[: g * length].reshape(g, length), g * length


def _encode(x: np.ndarray, y: np.ndarray) -> None:
    if x.shape[1]:
        y[:, 0] = x[:, 0]
        np.subtract(x[:, 1:], x[:, :-1], out=y[:, 1:])


def channel_cumsum(y: np.ndarray, x: np.ndarray) -> None:
    """``x = np.cumsum(y, axis=1, dtype=np.uint8)`` for 2-D uint8 arrays (the active kernel).

    >>> y = np.array([[250, 3, 3], [1, 255, 1]], np.uint8); x = np.empty_like(y)
    >>> channel_cumsum(y, x); x.tolist()
    [[250, 253, 0], [1, 0, 1]]
    """
    active().channel_cumsum(y, x)


class ByteDelta(BaseFilter):
    """Byte-channel delta; ``meta`` is the channel count (0 = typesize).

    >>> s = np.array([0xE8, 0xE9, 0xEB, 0xEE], np.uint8); d = np.empty_like(s)
    >>> ByteDelta().forward(s, d, FilterContext(1, 1)); d.tolist()
    [232, 1, 2, 3]
    """

    id = Filter.BYTEDELTA
    name = "bytedelta"

    def forward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        x, n = _channels(src, ctx)
        y, _ = _channels(dst, ctx)
        _encode(x, y)
        dst[n:] = src[n:]

    def backward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        y, n = _channels(src, ctx)
        x, _ = _channels(dst, ctx)
        channel_cumsum(y, x)
        dst[n:] = src[n:]


class ByteDeltaBuggy(BaseFilter):
    """BYTEDELTA as SIMD builds wrote it before C-Blosc2's fix (read-only id 34)."""

    id = Filter.BYTEDELTA_BUGGY
    name = "bytedelta_buggy"

    def forward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        x, n = _channels(src, ctx)
        y, _ = _channels(dst, ctx)
        cut = x.shape[1] // 16 * 16
        _encode(x[:, :cut], y[:, :cut])
        _encode(x[:, cut:], y[:, cut:])
        dst[n:] = src[n:]

    def backward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        y, n = _channels(src, ctx)
        x, _ = _channels(dst, ctx)
        cut = y.shape[1] // 16 * 16
        channel_cumsum(y[:, :cut], x[:, :cut])
        channel_cumsum(y[:, cut:], x[:, cut:])
        dst[n:] = src[n:]
