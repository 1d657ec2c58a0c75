"""TRUNC_PREC (id 4): zero low mantissa bits of float32/float64 (spec §9.4). Lossy.

``p = int8(meta)``: ``p >= 0`` keeps ``p`` mantissa bits, ``p < 0`` zeroes ``-p`` bits. Only
typesize 4 (23-bit mantissa) and 8 (52-bit) are allowed; ``|p|`` above the mantissa width or
nothing left to keep (``p == 0``) is an error. Decompression leaves the data as is.
"""

from __future__ import annotations

import numpy as np

from ..constants import Filter
from ..errors import ParamError
from .base import BaseFilter, FilterContext

__all__ = ["TruncPrec", "mask_low_bits", "signed_meta"]

_MANTISSA = {4: (23, np.uint32), 8: (52, np.uint64)}


def signed_meta(meta: int) -> int:
    """The int8 value of a filters_meta byte."""
    return meta - 256 if meta >= 128 else meta


def mask_low_bits(src: np.ndarray, dst: np.ndarray, typesize: int, zeroed: int, dt: type) -> None:
    """``dst = src`` with the ``zeroed`` low bits of every ``typesize``-byte element cleared
    (element view ``dt``); trailing bytes that form no element are copied."""
    n = len(src) // typesize * typesize
    mask = dt(~((1 << zeroed) - 1) & ((1 << (8 * typesize)) - 1))
    np.bitwise_and(src[:n].view(dt), mask, out=dst[:n].view(dt))
    dst[n:] = src[n:]


def _zeroed_bits(typesize: int, meta: int) -> int:
    if typesize not in _MANTISSA:
        raise ParamError(f"TRUNC_PREC needs typesize 4 or 8, got {typesize}")
    bits = _MANTISSA[typesize][0]
    p = signed_meta(meta)
    zeroed = bits - p if p >= 0 else -p
    if abs(p) > bits or zeroed >= bits:
        raise ParamError(
            f"TRUNC_PREC precision must keep 1..{bits} bits (meta in -{bits - 1}..{bits}, "
            f"not 0) for typesize {typesize}, got {p}"
        )
    return zeroed


class TruncPrec(BaseFilter):
    """Mantissa truncation.

    >>> x = np.array([1 / 3], np.float32).view(np.uint8); y = np.empty_like(x)
    >>> TruncPrec().forward(x, y, FilterContext(4, 4)); hex(y.view(np.uint32)[0])
    '0x3ea80000'
    """

    id = Filter.TRUNC_PREC
    name = "trunc_prec"

    def check(self, typesize: int, meta: int) -> None:
        _zeroed_bits(typesize, meta)

    def forward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        zeroed = _zeroed_bits(ctx.typesize, ctx.meta)
        mask_low_bits(src, dst, ctx.typesize, zeroed, _MANTISSA[ctx.typesize][1])

    def backward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        dst[:] = src
