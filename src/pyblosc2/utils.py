"""python-blosc2's ``blosc2.utils`` names that scripts and tests import (index keys).

>>> process_key(2, (5,))
((slice(2, 3, None),), (True,))
"""

import numpy as np

from .ndarray.keys import get_chunks_idx, process_key

__all__ = ["NUMPY_GE_2_0", "get_chunks_idx", "npvecdot", "process_key"]

#: whether numpy is 2.0 or newer (python-blosc2's flag)
NUMPY_GE_2_0 = int(np.__version__.split(".")[0]) >= 2


def npvecdot(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    """numpy's ``vecdot`` (the conjugated dot product along ``axis``), also before numpy 2.

    >>> float(npvecdot(np.array([1.0, 2.0]), np.array([3.0, 4.0])))
    11.0
    """
    vecdot = getattr(np, "vecdot", None)
    if vecdot is not None:
        return vecdot(a, b, axis=axis)
    return np.sum(np.conj(a) * b, axis=axis)
