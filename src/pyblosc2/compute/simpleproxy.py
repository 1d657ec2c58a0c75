"""``SimpleProxy``: any array (numpy, dask, zarr, h5py, pandas... anything with ``shape``,
``dtype`` and ``__getitem__``, else what ``np.asarray`` makes of it) as an operand of lazy
expressions (python-blosc2's ``SimpleProxy``): its operators build expressions, and the
engine reads only the parts of it each piece needs. ``jit`` wraps a function's arguments in
it to record what the function computes.

>>> import numpy as np
>>> p = SimpleProxy(np.arange(6.0).reshape(2, 3))
>>> e = p * 2 + 1
>>> type(e).__name__, e[1].tolist(), p.chunks
('LazyExpr', [7.0, 9.0, 11.0], (2, 3))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ParamTypeError
from ..ndarray.members import NDField
from ..ndarray.numpylike import compute_chunks_blocks
from ..ndarray.operand import Operand
from ..proxies import Proxy, ProxyNDField
from ..proxies.simple import convert_dtype

__all__ = ["SimpleProxy", "as_simpleproxy"]


def _ints(seq: Any) -> bool:
    return (
        isinstance(seq, Sequence)
        and not isinstance(seq, str | bytes)
        and all(isinstance(x, int | np.integer) for x in seq)
    )


class SimpleProxy(Operand):
    """``src`` as an operand (python-blosc2's ``SimpleProxy``; no caching: every read goes
    to ``src``). ``chunks``/``blocks`` are ``src``'s when it has them, else those given or
    the automatic ones; pieces of an expression follow them.

    >>> p = SimpleProxy(np.arange(20, dtype=np.float32).reshape(4, 5))
    >>> p[1:3, 2:4], p.ndim, type(p + 1).__name__
    (array([[ 7.,  8.],
           [12., 13.]], dtype=float32), 2, 'LazyExpr')
    """

    def __init__(self, src: Any, chunks: Any = None, blocks: Any = None) -> None:
        if not hasattr(src, "shape") or not hasattr(src, "dtype"):
            src = np.asarray(src)
        if not callable(getattr(src, "__getitem__", None)):
            raise ParamTypeError(
                f"a SimpleProxy source needs __getitem__, {type(src).__name__} has none"
            )
        self._src = src
        self._dtype = convert_dtype(src.dtype)
        self._shape = tuple(int(n) for n in src.shape)
        if chunks is None and _ints(getattr(src, "chunks", None)):
            chunks = tuple(src.chunks)
        if blocks is None and _ints(getattr(src, "blocks", None)):
            blocks = tuple(src.blocks)
        self.chunks, self.blocks = compute_chunks_blocks(
            self._shape, chunks, blocks, self._dtype if not self._dtype.hasobject else np.uint8
        )

    @property
    def src(self) -> Any:
        """The wrapped object."""
        return self._src

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the source."""
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        """The dtype of the source."""
        return self._dtype

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self._shape)

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d SimpleProxy")
        return self._shape[0]

    def __getitem__(self, item: Any) -> Any:
        """``src[item]`` as numpy (scalars as they come)."""
        out = self._src[item]
        if not hasattr(out, "shape") or out.shape == ():
            return out
        return np.asarray(out)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = np.asarray(self[()])
        return out if dtype is None else out.astype(dtype)

    def __repr__(self) -> str:
        return f"SimpleProxy({type(self._src).__name__}, shape={self.shape}, dtype={self.dtype})"


#: what is already an operand (python-blosc2's ``blosc2.Operand`` subclasses pyblosc2 has)
OPERANDS = (Operand, NDField, Proxy, ProxyNDField)


def as_simpleproxy(*arrs: Any) -> Any:
    """Each of ``arrs`` as an operand: operands as they are, the rest in a
    :class:`SimpleProxy` (one value for one argument, else a tuple).

    >>> type(as_simpleproxy(np.ones(2))).__name__
    'SimpleProxy'
    """
    out = tuple(x if isinstance(x, OPERANDS) else SimpleProxy(x) for x in arrs)
    return out[0] if len(out) == 1 else out
