"""BYTEDELTA (id 35) and the legacy BYTEDELTA_BUGGY (id 34), spec §9.5.

The block is ``g`` byte channels of ``L = bsize // g`` bytes (``g`` = meta, 0 meaning the
typesize); each channel is delta-coded mod 256 (first byte kept), decoded by a per-channel
prefix sum; trailing ``bsize % g`` bytes are copied. Id 34 is what SIMD builds of C-Blosc2
before the fix wrote: the last ``L % 16`` bytes of each channel restart from 0. It is only
read (the writer refuses it); its forward exists for tests.
"""

from __future__ import annotations

import numpy as np

from ..constants import Filter
from .base import BaseFilter, FilterContext

__all__ = ["ByteDelta", "ByteDeltaBuggy"]


def _channels(a: np.ndarray, ctx: FilterContext) -> tuple[np.ndarray, int]:
    g = ctx.meta or ctx.typesize
    length = len(a) // g
    return a[: g * length].reshape(g, length), g * length


def _encode(x: np.ndarray, y: np.ndarray) -> None:
    if x.shape[1]:
        y[:, 0] = x[:, 0]
        np.subtract(x[:, 1:], x[:, :-1], out=y[:, 1:])


class ByteDelta(BaseFilter):
    """Byte-channel delta.

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
        np.cumsum(y, axis=1, dtype=np.uint8, out=x)
        dst[n:] = src[n:]


class ByteDeltaBuggy(BaseFilter):
    """BYTEDELTA as SIMD builds wrote it before C-Blosc2's fix (read-only id 34)."""

    id = 34
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
        np.cumsum(y[:, :cut], axis=1, dtype=np.uint8, out=x[:, :cut])
        np.cumsum(y[:, cut:], axis=1, dtype=np.uint8, out=x[:, cut:])
        dst[n:] = src[n:]
