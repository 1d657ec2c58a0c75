"""python-blosc2's :class:`SimpleProxy` and :func:`as_simpleproxy`: any array-like (NumPy,
PyTorch, a list) seen through the minimal interface of an operand (``shape``, ``dtype``,
``chunks``, ``blocks``, ``__getitem__`` returning NumPy), without caching."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..ndarray.members import NDField
from ..ndarray.ndarray import NDArray
from ..ndarray.numpylike import compute_chunks_blocks
from ..params import CParams
from .proxy import Proxy, ProxyNDField

__all__ = ["SimpleProxy", "as_simpleproxy", "convert_dtype"]


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


def _ints(value: Any) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, str | bytes)
        and all(isinstance(x, int) for x in value)
    )


class SimpleProxy:
    """An array-like as an operand: its ``__getitem__`` results as NumPy arrays, with the
    ``chunks`` and ``blocks`` a compressed copy of it would get.

    >>> p = SimpleProxy(np.arange(20, dtype=np.float32).reshape(4, 5))
    >>> p[1:3, 2:4], p.ndim
    (array([[ 7.,  8.],
           [12., 13.]], dtype=float32), 2)
    """

    def __init__(
        self, src: Any, chunks: Sequence[int] | None = None, blocks: Sequence[int] | None = None
    ) -> None:
        if not hasattr(src, "shape") or not hasattr(src, "dtype"):
            src = np.asarray(src)
        if not hasattr(src, "__getitem__"):
            raise TypeError("The source must have a __getitem__ method")
        self._src = src
        self._dtype = convert_dtype(src.dtype)
        self._shape = tuple(int(n) for n in src.shape)
        chunks = src.chunks if chunks is None and _ints(getattr(src, "chunks", None)) else chunks
        blocks = src.blocks if blocks is None and _ints(getattr(src, "blocks", None)) else blocks
        self.chunks, self.blocks = compute_chunks_blocks(
            self._shape, chunks, blocks, self._dtype, cparams=CParams(clevel=0)
        )

    @property
    def src(self) -> Any:
        """The wrapped source object."""
        return self._src

    @property
    def shape(self) -> tuple[int, ...]:
        """The source's shape."""
        return self._shape

    @property
    def dtype(self) -> np.dtype[Any]:
        """The source's dtype."""
        return self._dtype

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self._shape)

    def __getitem__(self, item: Any) -> Any:
        out = self._src[item]
        if not hasattr(out, "shape") or out.shape == ():
            return out
        return np.asarray(out)


#: what is already an operand (python-blosc2's ``blosc2.Operand`` subclasses pyblosc2 has)
OPERANDS = (NDArray, NDField, Proxy, ProxyNDField, SimpleProxy)


def as_simpleproxy(*arrs: Any) -> Any:
    """Each of ``arrs`` as an operand: itself when it is one, else a :class:`SimpleProxy`
    (one value for one argument, else a tuple).

    >>> type(as_simpleproxy([1, 2, 3])).__name__
    'SimpleProxy'
    """
    out = tuple(x if isinstance(x, OPERANDS) else SimpleProxy(x) for x in arrs)
    return out[0] if len(out) == 1 else out
