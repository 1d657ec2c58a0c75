"""Byte shuffle of 8-byte items as byte-matrix transposes in registers: the numba kernels
:mod:`.shuffle_nb` uses for typesize 8 where a block's item count is a multiple of 8.

Eight 8-byte items, loaded as eight ``uint64`` words, form an 8x8 byte matrix; three rounds
of delta swaps (32-, 16-, then 8-bit lanes) transpose it, and word ``j`` then holds byte
``j`` of the eight items, i.e. the next 8 bytes of plane ``j``. The transpose is its own
inverse, so the same tile serves shuffle and unshuffle. On one thread, 128-512 KiB blocks:
shuffle 11.5-12.4 GB/s where the item loop of :mod:`.shuffle_nb` runs at 3.7-4.2, unshuffle
13.5-14.5 against 10.1-10.4. (Four 4-byte items in ``uint32`` words ran at 6-8 GB/s, below
the item loop's 12-25: typesize 4 keeps the item loop.)

Contract (checked by the caller, :mod:`.shuffle_nb`): ``src`` and ``dst`` are C-contiguous
``uint8`` of one length ``n``, and ``n // 8`` is a multiple of :data:`TILE_ITEMS`; the
``n % 8`` trailing bytes are copied as they are.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

__all__ = ["TILE_ITEMS", "shuffle8", "unshuffle8", "unshuffle8_blocks"]

#: items per tile: a block is taken when its item count is a multiple of it
TILE_ITEMS = 8

_jit = numba.njit(nogil=True, cache=True)

_S32, _S16, _S8 = np.uint64(32), np.uint64(16), np.uint64(8)
_M32 = np.uint64(0x00000000FFFFFFFF)
_M16 = np.uint64(0x0000FFFF0000FFFF)
_M8 = np.uint64(0x00FF00FF00FF00FF)


@_jit
def _t8(
    a0: Any, a1: Any, a2: Any, a3: Any, a4: Any, a5: Any, a6: Any, a7: Any
) -> tuple[Any, Any, Any, Any, Any, Any, Any, Any]:
    """The 8x8 byte matrix whose rows are the words ``a0..a7`` (byte ``j`` of row ``k``
    is ``(ak >> 8j) & 255``), transposed."""
    x = ((a0 >> _S32) ^ a4) & _M32
    a0, a4 = a0 ^ (x << _S32), a4 ^ x
    x = ((a1 >> _S32) ^ a5) & _M32
    a1, a5 = a1 ^ (x << _S32), a5 ^ x
    x = ((a2 >> _S32) ^ a6) & _M32
    a2, a6 = a2 ^ (x << _S32), a6 ^ x
    x = ((a3 >> _S32) ^ a7) & _M32
    a3, a7 = a3 ^ (x << _S32), a7 ^ x
    x = ((a0 >> _S16) ^ a2) & _M16
    a0, a2 = a0 ^ (x << _S16), a2 ^ x
    x = ((a1 >> _S16) ^ a3) & _M16
    a1, a3 = a1 ^ (x << _S16), a3 ^ x
    x = ((a4 >> _S16) ^ a6) & _M16
    a4, a6 = a4 ^ (x << _S16), a6 ^ x
    x = ((a5 >> _S16) ^ a7) & _M16
    a5, a7 = a5 ^ (x << _S16), a7 ^ x
    x = ((a0 >> _S8) ^ a1) & _M8
    a0, a1 = a0 ^ (x << _S8), a1 ^ x
    x = ((a2 >> _S8) ^ a3) & _M8
    a2, a3 = a2 ^ (x << _S8), a3 ^ x
    x = ((a4 >> _S8) ^ a5) & _M8
    a4, a5 = a4 ^ (x << _S8), a5 ^ x
    x = ((a6 >> _S8) ^ a7) & _M8
    a6, a7 = a6 ^ (x << _S8), a7 ^ x
    return a0, a1, a2, a3, a4, a5, a6, a7


@_jit
def shuffle8(src: Any, dst: Any) -> None:
    n = src.size
    q = n // 8
    w = q // 8  # words per plane
    s = src[: 8 * q].view(np.uint64)
    d = dst[: 8 * q].view(np.uint64)
    for t in range(w):
        i = 8 * t
        b = _t8(s[i], s[i + 1], s[i + 2], s[i + 3], s[i + 4], s[i + 5], s[i + 6], s[i + 7])
        for j in range(8):
            d[j * w + t] = b[j]
    for k in range(8 * q, n):
        dst[k] = src[k]


@_jit
def unshuffle8(src: Any, dst: Any) -> None:
    n = src.size
    q = n // 8
    w = q // 8
    s = src[: 8 * q].view(np.uint64)
    d = dst[: 8 * q].view(np.uint64)
    for t in range(w):
        b = _t8(s[t], s[w + t], s[2 * w + t], s[3 * w + t], s[4 * w + t], s[5 * w + t],
                s[6 * w + t], s[7 * w + t])  # fmt: skip
        i = 8 * t
        for j in range(8):
            d[i + j] = b[j]
    for k in range(8 * q, n):
        dst[k] = src[k]


@_jit
def unshuffle8_blocks(src: Any, dst: Any) -> None:
    """:func:`unshuffle8` of every row of the 2-d C-contiguous ``src`` into ``dst``."""
    for b in range(src.shape[0]):
        unshuffle8(src[b], dst[b])
