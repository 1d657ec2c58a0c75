"""python-blosc2's ``convert_dtype``: a framework's dtype (NumPy, PyTorch, TensorFlow) as a
NumPy dtype. (``SimpleProxy`` and ``as_simpleproxy`` are operands of the compute engine:
:mod:`pyblosc2.compute.simpleproxy`.)"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["convert_dtype"]


def convert_dtype(dt: Any) -> np.dtype[Any]:
    """``dt`` as a NumPy dtype (also a framework's dtype: ``torch.float64``, a TensorFlow
    dtype with ``as_numpy_dtype``).

    >>> convert_dtype("f4")
    dtype('float32')
    """
    if hasattr(dt, "as_numpy_dtype"):
        dt = dt.as_numpy_dtype
    try:
        return np.dtype(dt)
    except TypeError:
        name = str(dt).split(".")[-1]
        try:
            return np.dtype(name)
        except TypeError:
            raise TypeError(f"Could not parse dtype arg {dt}.") from None
