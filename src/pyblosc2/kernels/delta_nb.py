"""Prefix kernels of the delta filters in numba's Python subset: the JIT twins of
:mod:`.delta_np` (the format rules, spec §9.3 and §9.5, are held by
:mod:`pyblosc2.filters.delta` and :mod:`pyblosc2.filters.bytedelta`). Only
:mod:`.numba_set` imports this module.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

__all__ = ["channel_cumsum", "prefix_xor"]

_jit = numba.njit(nogil=True, cache=True)


@_jit
def _prefix_xor(y: Any, x: Any) -> None:
    acc = y.dtype.type(0)
    for i in range(y.size):
        acc ^= y[i]
        x[i] = acc


@_jit
def _channel_cumsum(y: Any, x: Any) -> None:
    g, length = y.shape
    for k in range(g):
        acc = np.uint8(0)
        for i in range(length):
            acc = np.uint8(acc + y[k, i])
            x[k, i] = acc


def prefix_xor(y: np.ndarray, x: np.ndarray) -> None:
    """``x[i] = y[0] ^ ... ^ y[i]`` for 1-d unsigned arrays of equal length."""
    _prefix_xor(y, x)


def channel_cumsum(y: np.ndarray, x: np.ndarray) -> None:
    """``x = cumsum(y, axis=1) mod 256`` for 2-d ``uint8`` arrays."""
    _channel_cumsum(y, x)
