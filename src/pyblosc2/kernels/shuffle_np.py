"""Byte shuffle and bit shuffle of one block in numpy: the reference kernels behind
:mod:`pyblosc2.kernels` (the format rule, spec §9.1-9.2, is held by
:mod:`pyblosc2.filters.shuffle`).

numpy has no byte-transpose primitive; each kernel uses the formulation measured fastest:

* shuffle, ``g`` = 2 or 4: plane ``j`` is ``uint8(word >> 8j)`` of the little-endian words;
  other even ``g``: transpose 2-byte units, then split each into its two bytes; odd ``g``:
  numpy's transposed copy.
* unshuffle, ``g`` = 2: OR the shifted planes into words; ``g`` = 4: a word tree (planes
  0|1 and 2|3 into 16-bit words, those into 32-bit words: 6-12% faster than four shifted
  planes on 128 KiB blocks; the same tree up to 64-bit words lost 20-30% for ``g`` = 8 and 16
  on the 2-core machine, so those keep the strided writes); otherwise one strided write per
  plane (of 2-byte units for even ``g``) — numpy's transposed copy is 2-10× slower this way.
* bitshuffle: byte-shuffle, regroup every plane so that row ``8k + i`` holds byte ``k`` of
  elements ``8w + i`` at position ``w``, then transpose all 8×8 bit matrices at once with three
  delta-swap rounds between whole rows (viewed as 64-bit words). Bitunshuffle runs it backwards
  (the bit transpose is an involution).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._threads import scratch

__all__ = [
    "bitshuffle",
    "bitunshuffle",
    "bitunshuffle_blocks",
    "shuffle",
    "shuffle_blocks",
    "unshuffle",
    "unshuffle_blocks",
    "unshuffle_runs",
]

_LE: dict[int, np.dtype[Any]] = {2: np.dtype("<u2"), 4: np.dtype("<u4"), 8: np.dtype("<u8")}


def shuffle(src: np.ndarray, dst: np.ndarray, typesize: int) -> None:
    """Byte-shuffle ``src`` into ``dst`` with group size ``typesize``.

    >>> a = np.arange(1, 14, dtype=np.uint8); out = np.empty_like(a); shuffle(a, out, 4)
    >>> out.tolist()
    [1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12, 13]
    """
    g = typesize
    q = len(src) // g
    n = q * g if g > 1 else 0
    if n:
        planes = dst[:n].reshape(g, q)
        if g in (2, 4):
            words = src[:n].view(_LE[g])
            for j in range(g):
                np.copyto(planes[j], words >> (8 * j) if j else words, casting="unsafe")
        elif g % 2 == 0:
            pairs = scratch(n, "work", np.uint16).reshape(g // 2, q)
            pairs[...] = src[:n].view(_LE[2]).reshape(q, g // 2).T
            split = planes.reshape(g // 2, 2, q)
            np.copyto(split[:, 0], pairs, casting="unsafe")
            pairs >>= 8
            np.copyto(split[:, 1], pairs, casting="unsafe")
        else:
            planes[...] = src[:n].reshape(q, g).T
    dst[n:] = src[n:]


def unshuffle(src: np.ndarray, dst: np.ndarray, typesize: int) -> None:
    """Undo :func:`shuffle`.

    >>> s = np.array([1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12, 13], np.uint8)
    >>> out = np.empty_like(s); unshuffle(s, out, 4); out.tolist()
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]
    """
    g = typesize
    q = len(src) // g
    n = q * g if g > 1 else 0
    if n:
        planes = src[:n].reshape(g, q)
        if g == 4:  # a word tree: byte planes -> 2 x u16 -> u32
            pairs = scratch(n, "work", np.uint16).reshape(2, q)
            np.copyto(pairs, planes[1::2], casting="unsafe")
            pairs <<= 8
            pairs |= planes[0::2]
            words = dst[:n].view(_LE[4])
            np.copyto(words, pairs[1], casting="unsafe")
            words <<= 16
            words |= pairs[0]
        elif g == 2:
            words = dst[:n].view(_LE[g])
            np.copyto(words, planes[0], casting="unsafe")
            wide = scratch(n, "work", words.dtype)
            for j in range(1, g):
                np.copyto(wide, planes[j], casting="unsafe")
                wide <<= 8 * j
                words |= wide
        elif g % 2 == 0:
            split = planes.reshape(g // 2, 2, q)
            pairs = scratch(n, "work", np.uint16).reshape(g // 2, q)
            np.copyto(pairs, split[:, 1])
            pairs <<= 8
            pairs |= split[:, 0]
            units = dst[:n].view(_LE[2]).reshape(q, g // 2)
            for i in range(g // 2):
                units[:, i] = pairs[i]
        else:
            out = dst[:n].reshape(q, g)
            for j in range(g):
                out[:, j] = planes[j]
    dst[n:] = src[n:]


def shuffle_blocks(src: np.ndarray, dst: np.ndarray, typesize: int) -> None:
    """:func:`shuffle` of every row of ``src`` (``blocks x bsize`` bytes, ``bsize`` a multiple
    of ``typesize``) into ``dst``: one transposed copy in the target's order.

    >>> src = np.array([[0, 1, 2, 3], [4, 5, 6, 7]], np.uint8); dst = np.empty_like(src)
    >>> shuffle_blocks(src, dst, 2); dst.tolist()
    [[0, 2, 1, 3], [4, 6, 5, 7]]
    """
    n, bs = src.shape
    g = typesize
    np.copyto(dst.reshape(n, g, bs // g), src.reshape(n, bs // g, g).transpose(0, 2, 1))


def unshuffle_blocks(src: np.ndarray, dst: np.ndarray, typesize: int) -> None:
    """:func:`unshuffle` of every row of ``src`` (``blocks x bsize`` bytes, ``bsize`` a
    multiple of ``typesize``) into ``dst``: byte ``k`` of every item of every block is written
    by one strided copy, a long call whatever the block size.

    >>> src = np.array([[0, 2, 1, 3], [4, 6, 5, 7]], np.uint8); dst = np.empty_like(src)
    >>> unshuffle_blocks(src, dst, 2); dst.tolist()
    [[0, 1, 2, 3], [4, 5, 6, 7]]
    """
    n, bs = src.shape
    g = typesize
    planes = src.reshape(n, g, bs // g)
    items = dst.reshape(n, bs // g, g)
    for k in range(g):
        items[:, :, k] = planes[:, k]


def _bit_elements(nbytes: int, typesize: int, blosc1: bool) -> int:
    """How many elements BITSHUFFLE transposes (§9.2)."""
    m = nbytes // typesize
    if blosc1:
        return m if m % 8 == 0 else 0
    return m - m % 8


_SWAPS = ((1, 0x55), (2, 0x33), (4, 0x0F))  # (row distance d, bits j with j & d == 0)


def _transpose_bits(x: np.ndarray, out: np.ndarray) -> None:
    """For every plane ``k`` and column ``w`` of the ``(g, 8, L)`` arrays, transpose the 8×8
    bit matrix whose row ``i`` is byte ``x[k, i, w]`` (bit ``j`` of row ``i`` goes to bit ``i``
    of row ``j``). ``out`` may be ``x``.

    Round ``d`` swaps bit ``j + d`` of row ``i`` with bit ``j`` of row ``i + d`` (``i & d ==
    j & d == 0``) on whole rows; the rows are processed as words of up to 8 bytes since the
    masked shifts never move a bit across a byte boundary.
    """
    g, _, length = x.shape
    width = math.gcd(length, 8)
    word = np.dtype(f"<u{width}")
    src = x.reshape(-1).view(word)
    dst = out.reshape(-1).view(word)
    tmp = scratch(len(src) // 2 * width, "bits", word)
    for d, low in _SWAPS:
        shape = (g, 4 // d, 2, d * length // width)
        a, b = src.reshape(shape)[:, :, 0], src.reshape(shape)[:, :, 1]
        oa, ob = dst.reshape(shape)[:, :, 0], dst.reshape(shape)[:, :, 1]
        t = tmp.reshape(a.shape)
        shift = word.type(d)
        np.right_shift(a, shift, out=t)
        t ^= b
        t &= word.type(int.from_bytes(bytes([low]) * width, "little"))
        np.bitwise_xor(b, t, out=ob)
        t <<= shift
        np.bitwise_xor(a, t, out=oa)
        src = dst


_M8 = (np.uint64(0x00AA00AA00AA00AA), np.uint64(0x0000CCCC0000CCCC), np.uint64(0x00000000F0F0F0F0))
_S8 = (np.uint64(7), np.uint64(14), np.uint64(28))
# Below this many bytes, transposing the 8x8 bit matrix held in each 64-bit word (3 rounds on
# one array) beats the row-wise transpose, whose per-call overhead then dominates (measured
# on 128 KiB-1 MiB blocks).
ROW_METHOD_MIN = 1 << 20


def _transpose8_words(words: np.ndarray) -> None:
    """In place: transpose the 8x8 bit matrix in each uint64 (bit 8i+j <-> bit 8j+i)."""
    t = scratch(words.nbytes, "bits8", np.uint64)
    for s, m in zip(_S8, _M8, strict=True):
        np.right_shift(words, s, out=t)
        t ^= words
        t &= m
        words ^= t
        t <<= s
        words ^= t


def bitshuffle(src: np.ndarray, dst: np.ndarray, typesize: int, blosc1: bool = False) -> None:
    """Bit-shuffle ``src`` into ``dst`` (``blosc1`` selects C-Blosc 1.x's whole-block rule).

    >>> a = np.arange(1, 9, dtype=np.uint16).view(np.uint8); out = np.empty_like(a)
    >>> bitshuffle(a, out, 2); out[:4].tobytes().hex()
    '55667880'
    """
    g = typesize
    m = _bit_elements(len(src), g, blosc1)
    n = m * g
    if n and n < ROW_METHOD_MIN:
        planes = scratch(n, "planes")
        shuffle(src[:n], planes, g)
        _transpose8_words(planes.view(np.uint64))
        dst[:n].reshape(g, 8, m // 8)[...] = planes.reshape(g, m // 8, 8).transpose(0, 2, 1)
    elif n:
        planes = src[:n]
        if g > 1:
            planes = scratch(n, "planes")
            shuffle(src[:n], planes, g)
        rows = dst[:n].reshape(g, 8, m // 8)
        rows[...] = planes.reshape(g, m // 8, 8).transpose(0, 2, 1)
        _transpose_bits(rows, rows)
    dst[n:] = src[n:]


def bitunshuffle(src: np.ndarray, dst: np.ndarray, typesize: int, blosc1: bool = False) -> None:
    """Undo :func:`bitshuffle` (with the same ``blosc1`` rule).

    >>> a = np.arange(100, dtype=np.uint8); s = np.empty_like(a); bitshuffle(a, s, 4)
    >>> b = np.empty_like(a); bitunshuffle(s, b, 4); bool((a == b).all())
    True
    """
    g = typesize
    m = _bit_elements(len(src), g, blosc1)
    n = m * g
    if n and n < ROW_METHOD_MIN:
        planes = scratch(n, "planes")
        rows3, planes3 = src[:n].reshape(g, 8, m // 8), planes.reshape(g, m // 8, 8)
        for i in range(8):  # strided writes: 2x faster than the transposed copy this way
            planes3[:, :, i] = rows3[:, i]
        _transpose8_words(planes.view(np.uint64))
        unshuffle(planes, dst[:n], g)
    elif n:
        tmp = scratch(n, "planes")
        # g == 1 has no unshuffle step, so the regrouping must land in dst.
        rows, planes = (tmp, dst[:n]) if g == 1 else (dst[:n], tmp)
        _transpose_bits(src[:n].reshape(g, 8, m // 8), rows.reshape(g, 8, m // 8))
        rows3, planes3 = rows.reshape(g, 8, m // 8), planes.reshape(g, m // 8, 8)
        for i in range(8):  # strided writes: 2x faster than the transposed copy this way
            planes3[:, :, i] = rows3[:, i]
        if g > 1:
            unshuffle(planes, dst[:n], g)
    dst[n:] = src[n:]


def bitunshuffle_blocks(
    src: np.ndarray, dst: np.ndarray, typesize: int, blosc1: bool = False
) -> None:
    """:func:`bitunshuffle` of every row of the 2-d ``src`` into ``dst``.

    >>> a = np.arange(128, dtype=np.uint8).reshape(2, 64); s = np.empty_like(a)
    >>> for r, o in zip(a, s): bitshuffle(r, o, 4)
    >>> b = np.empty_like(a); bitunshuffle_blocks(s, b, 4); bool((a == b).all())
    True
    """
    for row, out in zip(src, dst, strict=True):
        bitunshuffle(row, out, typesize, blosc1)


def unshuffle_runs(
    src: np.ndarray, q: int, dst: np.ndarray, table: np.ndarray, typesize: int
) -> int:
    """Items out of byte planes into runs of ``dst`` (the contract in :mod:`.base`): one
    strided copy per byte plane and run.

    >>> planes = np.array([0, 1, 2, 3, 10, 11, 12, 13], np.uint8)  # 4 items of 2 bytes
    >>> dst = np.zeros(6, np.uint8)
    >>> unshuffle_runs(planes, 4, dst, np.array([[1, 0, 3]]), 2), dst.tolist()
    (-1, [1, 11, 2, 12, 3, 13])
    """
    g = typesize
    ns, nd = src.size, dst.size
    for r, (s0, d0, m) in enumerate(table.tolist()):
        if min(s0, d0, m) < 0 or s0 + (g - 1) * q + m > ns or d0 + m * g > nd:
            return r
        out = dst[d0 : d0 + m * g]
        for j in range(g):
            out[j::g] = src[s0 + j * q : s0 + j * q + m]
    return -1
