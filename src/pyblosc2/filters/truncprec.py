"""TRUNC_PREC (id 4): zero low mantissa bits of float32/float64 (spec §9.4). Lossy.

``p = int8(meta)``: ``p >= 0`` keeps ``p`` mantissa bits (zeroes ``M - p``), ``p < 0`` zeroes
``-p`` bits, with ``M`` = 23 (typesize 4) or 52 (typesize 8); other typesizes are refused.
``|p| > M`` or nothing left to keep (``zeroed >= M``, which includes ``p == 0``) is an error.
The mask applies to the little-endian unsigned view, so sign and exponent are untouched; the
``bsize % typesize`` trailing bytes are copied (C leaves them undefined, §9.0). Decompression
leaves the data as is.
"""

from __future__ import annotations

import numpy as np

from ..constants import Filter
from ..errors import ParamError
from .base import BaseFilter, FilterContext

__all__ = ["TruncPrec", "mask_low_bits", "signed_meta"]

_MANTISSA = {4: 23, 8: 52}


def signed_meta(meta: int) -> int:
    """The int8 value of a ``filters_meta`` byte.

    >>> signed_meta(0xEC), signed_meta(20)
    (-20, 20)
    """
    return meta - 256 if meta >= 128 else meta


def mask_low_bits(src: np.ndarray, dst: np.ndarray, typesize: int, zeroed: int) -> None:
    """``dst = src`` with the ``zeroed`` low bits of every little-endian ``typesize``-byte
    unsigned element cleared (typesize 1, 2, 4 or 8); trailing bytes are copied."""
    word = np.dtype(f"<u{typesize}")
    n = len(src) // typesize * typesize
    mask = word.type(((1 << (8 * typesize)) - 1) ^ ((1 << zeroed) - 1))
    np.bitwise_and(src[:n].view(word), mask, out=dst[:n].view(word))
    dst[n:] = src[n:]


def _zeroed_bits(typesize: int, meta: int) -> int:
    if typesize not in _MANTISSA:
        raise ParamError(f"TRUNC_PREC needs typesize 4 or 8, got {typesize}")
    bits = _MANTISSA[typesize]
    p = signed_meta(meta)
    zeroed = bits - p if p >= 0 else -p
    if abs(p) > bits or zeroed >= bits:
        raise ParamError(
            f"TRUNC_PREC precision must be in -{bits - 1}..-1 or 1..{bits} for typesize "
            f"{typesize}, got {p}"
        )
    return zeroed


class LowBitsFilter(BaseFilter):
    """A lossy filter that zeroes the low bits of each element (how many: ``zeroed_bits``);
    decoding is a copy."""

    lossy = True

    @staticmethod
    def zeroed_bits(typesize: int, meta: int) -> int:
        raise NotImplementedError

    def check(self, typesize: int, meta: int) -> None:
        self.zeroed_bits(typesize, meta)

    def forward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        mask_low_bits(src, dst, ctx.typesize, self.zeroed_bits(ctx.typesize, ctx.meta))

    def backward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        dst[:] = src


class TruncPrec(LowBitsFilter):
    """Mantissa truncation.

    >>> x = np.array([1 / 3], np.float32).view(np.uint8); y = np.empty_like(x)
    >>> TruncPrec().forward(x, y, FilterContext(4, 4)); hex(y.view(np.uint32)[0])
    '0x3ea80000'
    """

    id = Filter.TRUNC_PREC
    name = "trunc_prec"
    lossy = True

    @staticmethod
    def zeroed_bits(typesize: int, meta: int) -> int:
        return _zeroed_bits(typesize, meta)
