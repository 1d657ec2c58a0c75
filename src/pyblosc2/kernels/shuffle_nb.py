"""Byte shuffle and bit shuffle of one block in numba's Python subset: the JIT twins of
:mod:`.shuffle_np` (same contracts, same bytes; the format rules, spec §9.1-9.2, are held by
:mod:`pyblosc2.filters.shuffle`).

Only :mod:`.numba_set` imports this module (``import pyblosc2`` never imports numba). The
byte kernels are compiled once per group size met, the group size a constant of the
compiled code (a closure variable) so that LLVM unrolls and vectorises the loop over one
item's bytes; group sizes above :data:`MAX_SPECIAL` share one kernel taking it as an
argument. Every kernel is ``nogil`` (pyblosc2's own threads run them in parallel) and cached
on disk (:mod:`.numba_set` picks a writable cache directory). The item loops index with
unsigned integers (:data:`_U`): 8-byte items then run at 15-30 GB/s on one thread, faster
than the 8x8 byte-matrix transposes in registers this module used for them before (13-14).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numba
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

#: group sizes compiled as constants (one specialisation each, on first use)
MAX_SPECIAL = 16
#: up to this group size the loop runs item by item (LLVM unrolls the group: 15-35 GB/s for
#: 4 and 8 bytes); wider groups run plane by plane (item by item, 16-byte groups fell to
#: 0.2 GB/s, plane by plane they run at ~3 GB/s)
ITEM_MAJOR_MAX = 8

_jit = numba.njit(nogil=True, cache=True)
#: the item loops index with unsigned integers: a signed index keeps numba's negative-index
#: wraparound in the loop, which stopped LLVM vectorising the 8-byte group (8-byte unshuffle
#: 10 -> 4 us per 128 KiB block, 2-d blocks 10 -> 3.4; 2- to 7-byte groups unchanged)
_U = numba.uint64
_lock = threading.Lock()


def _make_shuffle(g: int) -> Callable[..., None]:
    @_jit
    def items(src: Any, dst: Any) -> None:
        n = src.size
        q = _U(n // g)
        for i in range(q):  # one item's g bytes to g planes
            base = i * _U(g)
            for j in range(g):
                dst[_U(j) * q + i] = src[base + _U(j)]
        for k in range(q * g, n):
            dst[k] = src[k]

    @_jit
    def planes(src: Any, dst: Any) -> None:
        n = src.size
        q = n // g
        for j in range(g):  # one plane at a time
            for i in range(q):
                dst[j * q + i] = src[i * g + j]
        for k in range(q * g, n):
            dst[k] = src[k]

    return items if g <= ITEM_MAJOR_MAX else planes


def _make_unshuffle(g: int) -> Callable[..., None]:
    @_jit
    def items(src: Any, dst: Any) -> None:
        n = src.size
        q = _U(n // g)
        for i in range(q):  # g planes to one item's g bytes
            base = i * _U(g)
            for j in range(g):
                dst[base + _U(j)] = src[_U(j) * q + i]
        for k in range(q * g, n):
            dst[k] = src[k]

    @_jit
    def planes(src: Any, dst: Any) -> None:
        n = src.size
        q = n // g
        for j in range(g):  # one plane at a time
            for i in range(q):
                dst[i * g + j] = src[j * q + i]
        for k in range(q * g, n):
            dst[k] = src[k]

    return items if g <= ITEM_MAJOR_MAX else planes


def _make_unshuffle_blocks(g: int) -> Callable[..., None]:
    @_jit
    def items(src: Any, dst: Any) -> None:
        nb, bs = src.shape
        q = _U(bs // g)
        for b in range(nb):
            s = src[b]
            d = dst[b]
            for i in range(q):
                base = i * _U(g)
                for j in range(g):
                    d[base + _U(j)] = s[_U(j) * q + i]

    @_jit
    def planes(src: Any, dst: Any) -> None:
        nb, bs = src.shape
        q = bs // g
        for b in range(nb):
            s = src[b]
            d = dst[b]
            for j in range(g):
                for i in range(q):
                    d[i * g + j] = s[j * q + i]

    return items if g <= ITEM_MAJOR_MAX else planes


def _make_unshuffle_runs(g: int) -> Callable[..., int]:
    @_jit
    def runs(src: Any, q: int, dst: Any, table: Any) -> int:
        uq = _U(q)
        ns = _U(src.size)
        nd = _U(dst.size)
        for r in range(table.shape[0]):
            s0, d0, m = table[r, 0], table[r, 1], table[r, 2]
            if s0 < 0 or d0 < 0 or m < 0:
                return r
            us, ud, um = _U(s0), _U(d0), _U(m)
            if us + _U(g - 1) * uq + um > ns or ud + um * _U(g) > nd:
                return r
            for i in range(um):
                base = ud + i * _U(g)
                for j in range(g):
                    dst[base + _U(j)] = src[us + _U(j) * uq + i]
        return -1

    return runs


@_jit
def _unshuffle_runs_any(src: Any, q: int, dst: Any, table: Any, g: int) -> int:
    ns, nd = src.size, dst.size
    for r in range(table.shape[0]):
        s0, d0, m = table[r, 0], table[r, 1], table[r, 2]
        if s0 < 0 or d0 < 0 or m < 0 or s0 + (g - 1) * q + m > ns or d0 + m * g > nd:
            return r
        for j in range(g):
            for i in range(m):
                dst[d0 + i * g + j] = src[s0 + j * q + i]
    return -1


@_jit
def _shuffle_any(src: Any, dst: Any, g: int) -> None:
    n = src.size
    q = n // g
    for i in range(q):
        base = i * g
        for j in range(g):
            dst[j * q + i] = src[base + j]
    for k in range(q * g, n):
        dst[k] = src[k]


@_jit
def _unshuffle_any(src: Any, dst: Any, g: int) -> None:
    n = src.size
    q = n // g
    for i in range(q):
        base = i * g
        for j in range(g):
            dst[base + j] = src[j * q + i]
    for k in range(q * g, n):
        dst[k] = src[k]


@_jit
def _unshuffle_blocks_any(src: Any, dst: Any, g: int) -> None:
    nb, bs = src.shape
    q = bs // g
    for b in range(nb):
        for i in range(q):
            for j in range(g):
                dst[b, i * g + j] = src[b, j * q + i]


_made: dict[tuple[str, int], Callable[..., Any]] = {}
_FACTORIES = {
    "shuffle": _make_shuffle,
    "unshuffle": _make_unshuffle,
    "blocks": _make_unshuffle_blocks,
    "runs": _make_unshuffle_runs,
}


def _kernel(kind: str, g: int) -> Callable[..., Any]:
    k = _made.get((kind, g))
    if k is None:
        with _lock:
            k = _made.get((kind, g))
            if k is None:
                k = _made[(kind, g)] = _FACTORIES[kind](g)
    return k


def shuffle(src: np.ndarray, dst: np.ndarray, typesize: int) -> None:
    """Byte-shuffle ``src`` into ``dst`` with group size ``typesize``."""
    if typesize <= 1:
        dst[:] = src
    elif typesize <= MAX_SPECIAL:
        _kernel("shuffle", typesize)(src, dst)
    else:
        _shuffle_any(src, dst, typesize)


def unshuffle(src: np.ndarray, dst: np.ndarray, typesize: int) -> None:
    """Undo :func:`shuffle`."""
    if typesize <= 1:
        dst[:] = src
    elif typesize <= MAX_SPECIAL:
        _kernel("unshuffle", typesize)(src, dst)
    else:
        _unshuffle_any(src, dst, typesize)


def shuffle_blocks(src: np.ndarray, dst: np.ndarray, typesize: int) -> None:
    """:func:`shuffle` of every row of the 2-d ``src`` into ``dst``: one kernel call per
    row (a block of 128 KiB or more: the call costs ~1 us; the same loop compiled over the
    2-d arrays ran at 1.4-2.0 GB/s against 4.2-4.6 GB/s for 4 MiB of 8-byte items)."""
    for b in range(src.shape[0]):
        shuffle(src[b], dst[b], typesize)


def unshuffle_blocks(src: np.ndarray, dst: np.ndarray, typesize: int) -> None:
    """:func:`unshuffle` of every row of the 2-d ``src`` into ``dst``."""
    if typesize <= 1:
        dst[...] = src
    elif typesize <= MAX_SPECIAL:
        _kernel("blocks", typesize)(src, dst)
    else:
        _unshuffle_blocks_any(src, dst, typesize)


def unshuffle_runs(
    src: np.ndarray, q: int, dst: np.ndarray, table: np.ndarray, typesize: int
) -> int:
    """Items out of byte planes into runs of ``dst`` (the contract in :mod:`.base`)."""
    g = typesize
    if g <= ITEM_MAJOR_MAX:
        return int(_kernel("runs", g)(src, q, dst, table))
    return int(_unshuffle_runs_any(src, q, dst, table, g))


# -- bit shuffle ----------------------------------------------------------------------------


@_jit
def _transpose8(x: np.uint64) -> np.uint64:
    """The 8x8 bit matrix held in a 64-bit word, transposed (bit 8i+j <-> bit 8j+i)."""
    t = (x ^ (x >> np.uint64(7))) & np.uint64(0x00AA00AA00AA00AA)
    x = x ^ t ^ (t << np.uint64(7))
    t = (x ^ (x >> np.uint64(14))) & np.uint64(0x0000CCCC0000CCCC)
    x = x ^ t ^ (t << np.uint64(14))
    t = (x ^ (x >> np.uint64(28))) & np.uint64(0x00000000F0F0F0F0)
    return x ^ t ^ (t << np.uint64(28))


@_jit
def _planes_to_bits(planes: Any, dst: Any, g: int, w8: int) -> None:
    """Byte planes (``g`` planes of ``8 * w8`` bytes, as ``uint64`` words) to bit rows: row
    ``8k + b`` of ``dst`` holds bit ``b`` of every byte of plane ``k``."""
    for k in range(g):
        for w in range(w8):
            x = _transpose8(planes[k * w8 + w])
            for b in range(8):
                dst[(8 * k + b) * w8 + w] = np.uint8((x >> np.uint64(8 * b)) & np.uint64(255))


@_jit
def _bits_to_planes(src: Any, planes: Any, g: int, w8: int) -> None:
    """Undo :func:`_planes_to_bits` byte by byte (the 8x8 bit transpose is an involution):
    rows whose length is not a multiple of 8 bytes (:func:`_words_to_planes` serves the
    others)."""
    for k in range(g):
        for w in range(w8):
            x = np.uint64(0)
            for b in range(8):
                x |= np.uint64(src[(8 * k + b) * w8 + w]) << np.uint64(8 * b)
            planes[k * w8 + w] = _transpose8(x)


@_jit
def _swap(a: Any, b: Any, s: Any, m: Any) -> tuple[Any, Any]:
    """One delta swap between two words: the bits ``m`` selects of ``b`` trade places with
    the bits ``m << s`` selects of ``a``."""
    t = ((a >> s) ^ b) & m
    return a ^ (t << s), b ^ t


@_jit
def _words_to_planes(rows: Any, planes: Any, g: int, w64: int) -> None:
    """:func:`_bits_to_planes` on 64-bit words (rows of ``8 * w64`` bytes): the words at
    column ``W`` of a plane's 8 bit rows hold 8x8 bit matrices side by side (byte ``c`` of
    row ``b``); three delta-swap rounds between the 8 words transpose them all (row ``b``,
    bit ``i`` -> row ``i``, bit ``b``), three more between bytes (word ``i``, byte ``c`` ->
    word ``c``, byte ``i``) put the 64 bytes in plane order: 8.7 GB/s on a 128 KiB block of
    8-byte items against 6.4 for the byte gather of :func:`_bits_to_planes` (one store
    stream; the 8 loads come from 8 rows)."""
    one, two, four = np.uint64(1), np.uint64(2), np.uint64(4)
    m1, m2 = np.uint64(0x5555555555555555), np.uint64(0x3333333333333333)
    m4 = np.uint64(0x0F0F0F0F0F0F0F0F)
    s8, s16, s32 = np.uint64(8), np.uint64(16), np.uint64(32)
    m8, m16 = np.uint64(0x00FF00FF00FF00FF), np.uint64(0x0000FFFF0000FFFF)
    m32 = np.uint64(0x00000000FFFFFFFF)
    for k in range(g):
        r = 8 * k * w64
        o = 8 * k * w64
        for w in range(w64):
            x0, x1, x2, x3 = (
                rows[r + w],
                rows[r + w64 + w],
                rows[r + 2 * w64 + w],
                rows[r + 3 * w64 + w],
            )
            x4, x5, x6, x7 = (
                rows[r + 4 * w64 + w],
                rows[r + 5 * w64 + w],
                rows[r + 6 * w64 + w],
                rows[r + 7 * w64 + w],
            )
            x0, x4 = _swap(x0, x4, four, m4)
            x1, x5 = _swap(x1, x5, four, m4)
            x2, x6 = _swap(x2, x6, four, m4)
            x3, x7 = _swap(x3, x7, four, m4)
            x0, x2 = _swap(x0, x2, two, m2)
            x1, x3 = _swap(x1, x3, two, m2)
            x4, x6 = _swap(x4, x6, two, m2)
            x5, x7 = _swap(x5, x7, two, m2)
            x0, x1 = _swap(x0, x1, one, m1)
            x2, x3 = _swap(x2, x3, one, m1)
            x4, x5 = _swap(x4, x5, one, m1)
            x6, x7 = _swap(x6, x7, one, m1)
            x0, x4 = _swap(x0, x4, s32, m32)
            x1, x5 = _swap(x1, x5, s32, m32)
            x2, x6 = _swap(x2, x6, s32, m32)
            x3, x7 = _swap(x3, x7, s32, m32)
            x0, x2 = _swap(x0, x2, s16, m16)
            x1, x3 = _swap(x1, x3, s16, m16)
            x4, x6 = _swap(x4, x6, s16, m16)
            x5, x7 = _swap(x5, x7, s16, m16)
            x0, x1 = _swap(x0, x1, s8, m8)
            x2, x3 = _swap(x2, x3, s8, m8)
            x4, x5 = _swap(x4, x5, s8, m8)
            x6, x7 = _swap(x6, x7, s8, m8)
            p = o + 8 * w
            planes[p], planes[p + 1], planes[p + 2], planes[p + 3] = x0, x1, x2, x3
            planes[p + 4], planes[p + 5], planes[p + 6], planes[p + 7] = x4, x5, x6, x7


@_jit
def _words_to_planes_blocks(rows: Any, planes: Any, g: int, w64: int) -> None:
    """:func:`_words_to_planes` of every row of the 2-d ``rows`` into the rows of ``planes``."""
    for b in range(rows.shape[0]):
        _words_to_planes(rows[b], planes[b], g, w64)


def _bit_elements(nbytes: int, typesize: int, blosc1: bool) -> int:
    m = nbytes // typesize
    if blosc1:
        return m if m % 8 == 0 else 0
    return m - m % 8


def bitshuffle(src: np.ndarray, dst: np.ndarray, typesize: int, blosc1: bool = False) -> None:
    """Bit-shuffle ``src`` into ``dst`` (``blosc1``: C-Blosc 1.x's whole-block rule)."""
    m = _bit_elements(len(src), typesize, blosc1)
    n = m * typesize
    if n:
        planes = scratch(n, "planes")
        shuffle(src[:n], planes, typesize)
        _planes_to_bits(planes.view(np.uint64), dst, typesize, m // 8)
    dst[n:] = src[n:]


def bitunshuffle(src: np.ndarray, dst: np.ndarray, typesize: int, blosc1: bool = False) -> None:
    """Undo :func:`bitshuffle` (with the same ``blosc1`` rule)."""
    m = _bit_elements(len(src), typesize, blosc1)
    n = m * typesize
    if n:
        planes = scratch(n, "planes")
        if m % 64:
            _bits_to_planes(src, planes.view(np.uint64), typesize, m // 8)
        else:
            _words_to_planes(src[:n].view(np.uint64), planes.view(np.uint64), typesize, m // 64)
        unshuffle(planes, dst[:n], typesize)
    dst[n:] = src[n:]


def bitunshuffle_blocks(
    src: np.ndarray, dst: np.ndarray, typesize: int, blosc1: bool = False
) -> None:
    """:func:`bitunshuffle` of every row of the 2-d ``src`` into ``dst`` (the whole blocks
    of a chunk): one nogil call for all of them when each row is transposed whole in 64-bit
    words (``64 * typesize`` divides the block size), else one call per row."""
    nb, bs = src.shape
    g = typesize
    if bs % (64 * g) or not bs or not (src.flags.c_contiguous and dst.flags.c_contiguous):
        for b in range(nb):
            bitunshuffle(src[b], dst[b], g, blosc1)
        return
    # (both rules transpose every element of such a block: bs // g is a multiple of 8)
    rows = src.reshape(-1).view(np.uint64).reshape(nb, bs // 8)
    if g == 1:  # the planes are the items
        _words_to_planes_blocks(rows, dst.reshape(-1).view(np.uint64).reshape(nb, -1), 1, bs // 64)
        return
    planes = scratch(nb * bs, "planes").reshape(nb, bs)
    _words_to_planes_blocks(
        rows, planes.reshape(-1).view(np.uint64).reshape(nb, -1), g, bs // (64 * g)
    )
    unshuffle_blocks(planes, dst, g)
