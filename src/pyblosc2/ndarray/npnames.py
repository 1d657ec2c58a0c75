"""numpy functions whose names changed with numpy 2, under the names python-blosc2 gives
them (``blosc2.utils.npvecdot``, ``nptranspose``), for any numpy pyblosc2 supports.

>>> complex(npvecdot(np.array([1j, 2]), np.array([1, 1]))), nptranspose(np.zeros((2, 3))).shape
((2-1j), (3, 2))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["NUMPY_GE_2_0", "nptranspose", "npvecdot"]

#: whether numpy is 2.0 or newer
NUMPY_GE_2_0 = int(np.__version__.split(".")[0]) >= 2


def _vecdot_einsum(x1: Any, x2: Any, axis: int = -1) -> Any:
    """``np.vecdot`` before numpy 2: ``sum(conj(x1) * x2)`` over ``axis``, broadcasting."""
    a, b = np.moveaxis(np.conj(x1), axis, -1), np.moveaxis(x2, axis, -1)
    return np.einsum("...i,...i->...", a, b)


#: numpy's ``vecdot``: the conjugate of ``x1`` times ``x2``, summed over ``axis``
npvecdot: Callable[..., Any] = getattr(np, "vecdot", _vecdot_einsum)
#: numpy's ``permute_dims`` (``np.transpose`` before numpy 2)
nptranspose: Callable[..., Any] = getattr(np, "permute_dims", np.transpose)
