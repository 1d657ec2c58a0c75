"""SHUFFLE (id 1) and BITSHUFFLE (id 2): byte and bit transposition of one block (spec §9.1, §9.2).

SHUFFLE with group size ``g`` (``filters_meta``, 0 meaning the typesize) moves byte ``j`` of
each of the ``q = n // g`` groups into plane ``j``: ``out[j*q + i] = in[i*g + j]``; the
``n % g`` trailing bytes are copied.

BITSHUFFLE (typesize ``g``) turns ``m`` elements into ``8·g`` bit rows of ``m/8`` bytes: row
``8k + b`` holds bit ``b`` of byte ``k`` of every element, element ``e`` at bit ``e % 8`` of
byte ``e // 8``. C-Blosc2 transposes the first ``floor(n/g/8)·8`` elements and copies the rest;
C-Blosc 1.x (chunk version 2) transposes all ``n // g`` elements when that count is a multiple
of 8 (copying the ``n % g`` tail) and otherwise stores the block unchanged.

The transpositions themselves are kernels of the active kernel set (:mod:`pyblosc2.kernels`;
the numpy reference is :mod:`pyblosc2.kernels.shuffle_np`).
"""

from __future__ import annotations

import numpy as np

from ..constants import Filter
from ..kernels import active
from .base import BaseFilter, FilterContext

__all__ = [
    "BitShuffle",
    "Shuffle",
    "bitshuffle",
    "bitunshuffle",
    "shuffle",
    "unshuffle",
]


def shuffle(src: np.ndarray, dst: np.ndarray, typesize: int) -> None:
    """Byte-shuffle ``src`` into ``dst`` with group size ``typesize`` (the active kernel).

    >>> src = np.arange(8, dtype=np.uint8); dst = np.empty_like(src)
    >>> shuffle(src, dst, 4); dst.tolist()
    [0, 4, 1, 5, 2, 6, 3, 7]
    """
    active().shuffle(src, dst, typesize)


def unshuffle(src: np.ndarray, dst: np.ndarray, typesize: int) -> None:
    """Undo :func:`shuffle` (the active kernel).

    >>> src = np.array([0, 4, 1, 5, 2, 6, 3, 7], np.uint8); dst = np.empty_like(src)
    >>> unshuffle(src, dst, 4); dst.tolist()
    [0, 1, 2, 3, 4, 5, 6, 7]
    """
    active().unshuffle(src, dst, typesize)


def bitshuffle(src: np.ndarray, dst: np.ndarray, typesize: int, blosc1: bool = False) -> None:
    """Bit-shuffle ``src`` into ``dst`` for items of ``typesize`` bytes (``blosc1``: C-Blosc
    1.x's rule for chunk version 2), with the active kernel."""
    active().bitshuffle(src, dst, typesize, blosc1)


def bitunshuffle(src: np.ndarray, dst: np.ndarray, typesize: int, blosc1: bool = False) -> None:
    """Undo :func:`bitshuffle` (the active kernel).

    >>> src = np.arange(64, dtype=np.uint8); mid = np.empty_like(src); back = np.empty_like(src)
    >>> bitshuffle(src, mid, 8); bitunshuffle(mid, back, 8); bool((back == src).all())
    True
    """
    active().bitunshuffle(src, dst, typesize, blosc1)


class Shuffle(BaseFilter):
    """Byte shuffle; ``meta`` is the group size (0 = typesize)."""

    id = Filter.SHUFFLE
    name = "shuffle"

    def forward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        shuffle(src, dst, ctx.meta or ctx.typesize)

    def backward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        unshuffle(src, dst, ctx.meta or ctx.typesize)


class BitShuffle(BaseFilter):
    """Bit shuffle (meta ignored); chunk version 2 uses C-Blosc 1.x's rule."""

    id = Filter.BITSHUFFLE
    name = "bitshuffle"

    def forward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        bitshuffle(src, dst, ctx.typesize, blosc1=ctx.version == 2)

    def backward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        bitunshuffle(src, dst, ctx.typesize, blosc1=ctx.version == 2)
