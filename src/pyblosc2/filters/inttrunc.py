"""INT_TRUNC (id 36): zero low bits of integers (spec §9.6). Lossy.

``p = int8(meta)``: ``p >= 0`` keeps ``p`` significant bits (zeroes ``8·typesize − p``),
``p < 0`` zeroes ``-p`` bits; typesize 1, 2, 4 or 8; zeroing every bit is an error.
Decompression is a copy.
"""

from __future__ import annotations

import numpy as np

from ..constants import Filter
from ..errors import ParamError
from .base import BaseFilter, FilterContext
from .truncprec import mask_low_bits, signed_meta

__all__ = ["IntTrunc"]

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _zeroed_bits(typesize: int, meta: int) -> int:
    if typesize not in _UINT:
        raise ParamError(f"INT_TRUNC needs typesize 1, 2, 4 or 8, got {typesize}")
    width = 8 * typesize
    p = signed_meta(meta)
    zeroed = (width - p) % 256 if p >= 0 else -p
    if zeroed >= width:
        raise ParamError(f"INT_TRUNC meta must leave at least one bit of {width}, got {p}")
    return zeroed


class IntTrunc(BaseFilter):
    """Integer truncation.

    >>> x = np.array([0x1234, 0xFFFF, 0x00FF], np.uint16).view(np.uint8); y = np.empty_like(x)
    >>> IntTrunc().forward(x, y, FilterContext(2, 8)); [hex(v) for v in y.view(np.uint16)]
    ['0x1200', '0xff00', '0x0']
    """

    id = Filter.INT_TRUNC
    name = "int_trunc"

    def check(self, typesize: int, meta: int) -> None:
        _zeroed_bits(typesize, meta)

    def forward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        zeroed = _zeroed_bits(ctx.typesize, ctx.meta)
        mask_low_bits(src, dst, ctx.typesize, zeroed, _UINT[ctx.typesize])

    def backward(self, src: np.ndarray, dst: np.ndarray, ctx: FilterContext) -> None:
        dst[:] = src
