"""INT_TRUNC (id 36): zero low bits of integers (spec §9.6). Lossy.

Unsigned little-endian view of width typesize (1, 2, 4 or 8; others are refused).
``p = int8(meta)``: ``p >= 0`` keeps the ``p`` high bits (zeroes ``uint8(8·typesize − p)``),
``p < 0`` zeroes ``-p`` bits; zeroing ``8·typesize`` bits or more is an error (so ``p == 0``
and ``p > 8·typesize`` are). The ``bsize % typesize`` trailing bytes are copied (C leaves them
undefined, §9.0). Decompression is a copy.
"""

from __future__ import annotations

from ..constants import Filter
from ..errors import ParamError
from .truncprec import LowBitsFilter, signed_meta

__all__ = ["IntTrunc"]


def _zeroed_bits(typesize: int, meta: int) -> int:
    if typesize not in (1, 2, 4, 8):
        raise ParamError(f"INT_TRUNC needs typesize 1, 2, 4 or 8, got {typesize}")
    width = 8 * typesize
    p = signed_meta(meta)
    zeroed = (width - p) % 256 if p >= 0 else -p
    if zeroed >= width:
        raise ParamError(
            f"INT_TRUNC precision must be in -{width - 1}..-1 or 1..{width} for typesize "
            f"{typesize}, got {p}"
        )
    return zeroed


class IntTrunc(LowBitsFilter):
    """Integer truncation.

    >>> import numpy as np
    >>> from pyblosc2.filters.base import FilterContext
    >>> x = np.array([0x1234, 0xFFFF, 0x00FF], np.uint16).view(np.uint8); y = np.empty_like(x)
    >>> IntTrunc().forward(x, y, FilterContext(2, 8)); [hex(v) for v in y.view(np.uint16)]
    ['0x1200', '0xff00', '0x0']
    """

    id = Filter.INT_TRUNC
    name = "int_trunc"
    lossy = True

    @staticmethod
    def zeroed_bits(typesize: int, meta: int) -> int:
        return _zeroed_bits(typesize, meta)
