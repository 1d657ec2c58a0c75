"""Axis permutations and diagonals: ``permute_dims``, ``matrix_transpose``, ``transpose``
(deprecated in python-blosc2) and ``diagonal``, each writing a new NDArray chunk by chunk
from the parts of the operand the chunk covers. Any dtype without Python objects is taken
(strings and structured items included): nothing is computed on the items.

As python-blosc2, ``permute_dims``, ``matrix_transpose`` and ``transpose`` return a scalar or
an operand of fewer than 2 dimensions as it is (unless storage keywords ask for a new array).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..errors import ParamError
from ..ndarray.chunkfill import Region, fill_regions
from ..ndarray.ndarray import NDArray
from ..params import is_int
from . import plan
from .operands import Operand, as_operand, is_scalar
from .output import new_result

__all__ = ["diagonal", "matrix_transpose", "permute_dims", "transpose"]


def _permutation(axes: Any, ndim: int) -> tuple[int, ...]:
    if axes is None:
        return tuple(range(ndim))[::-1]
    items = tuple(axes) if isinstance(axes, tuple | list | np.ndarray) else (axes,)
    ok = len(items) == ndim and all(is_int(a) and -ndim <= a < ndim for a in items)
    perm = tuple(int(a) % ndim for a in items) if ok else ()
    if sorted(perm) != list(range(ndim)):
        raise ParamError(f"axes {axes!r} is not a valid permutation of {ndim} dimensions")
    return perm


def _nthreads(out: NDArray) -> int:
    return int(out.schunk.cparams.nthreads)


def permute_dims(arr: Any, axes: Any = None, **kwargs: Any) -> Any:
    """``arr`` with its axes permuted (reversed by default), as a new NDArray
    (``np.permute_dims``); ``kwargs`` are the constructors' (``chunks`` default to the
    operand's, permuted, when it has chunks). Each result chunk reads the operand's box it
    covers.

    >>> a = np.arange(6).reshape(2, 3)
    >>> permute_dims(a)[...]
    array([[0, 3],
           [1, 4],
           [2, 5]])
    >>> permute_dims(np.arange(3)) is not None, permute_dims(5)
    (True, 5)
    """
    if is_scalar(arr):
        return arr
    op = as_operand(arr, "arr", numeric=False)
    if op.ndim < 2 and not kwargs:
        return arr
    perm = _permutation(axes, op.ndim)
    shape = tuple(op.shape[d] for d in perm)
    if op.chunked and kwargs.get("chunks") is None and kwargs.get("blocks") is None:
        kwargs = {**kwargs, "chunks": tuple(op.chunks[d] for d in perm)}
    out = new_result(shape, op.dtype, kwargs)

    def piece(region: Region) -> np.ndarray:
        src: list[slice] = [slice(0)] * op.ndim
        for i, d in enumerate(perm):
            src[d] = region[i]
        return np.transpose(op.read(tuple(src)), perm)

    return fill_regions(out, piece, _nthreads(out))


def matrix_transpose(arr: Any, **kwargs: Any) -> Any:
    """The transpose of each matrix of ``arr`` (its last two axes swapped), as a new NDArray.

    >>> matrix_transpose(np.arange(6).reshape(1, 2, 3))[...]
    array([[[0, 3],
            [1, 4],
            [2, 5]]])
    """
    if is_scalar(arr):
        return arr
    ndim = len(getattr(arr, "shape", np.shape(arr)))
    axes = None if ndim <= 2 else (*range(ndim - 2), ndim - 1, ndim - 2)
    return permute_dims(arr, axes, **kwargs)


def transpose(x: Any, **kwargs: Any) -> Any:
    """python-blosc2's deprecated ``transpose`` of a matrix (2 dimensions; 0 or 1 are
    returned as they are): use :func:`matrix_transpose` or :func:`permute_dims`.

    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     transpose(np.arange(4).reshape(2, 2))[...].tolist()
    [[0, 2], [1, 3]]
    """
    warnings.warn(
        "transpose is deprecated and will be removed in a future version. "
        "Use matrix_transpose or permute_dims instead.",
        DeprecationWarning,
        stacklevel=2,
    )
    if is_scalar(x):
        return x
    ndim = len(getattr(x, "shape", np.shape(x)))
    if ndim > 2:
        raise ParamError(
            f"transpose takes arrays of at most 2 dimensions, got {ndim}: use permute_dims"
        )
    return permute_dims(x, **kwargs)


def _diagonal_length(n: int, m: int, offset: int) -> int:
    return max(0, min(n, m - offset) if offset >= 0 else min(n + offset, m))


def diagonal(x: Any, offset: int = 0, **kwargs: Any) -> NDArray:
    """The ``offset``-th diagonals of the matrices of ``x`` (its last two axes; positive
    above the main one), as a new NDArray of shape ``x.shape[:-2] + (length,)``, as
    ``np.diagonal(x, offset, -2, -1)``. Each result chunk reads square boxes along its part
    of the diagonal, never the whole matrices.

    >>> diagonal(np.arange(12).reshape(3, 4), offset=1)[...]
    array([ 1,  6, 11])
    """
    if not is_int(offset):
        raise ParamError(f"offset must be an int, got {offset!r}")
    op = as_operand(x, "x", numeric=False)
    if op.ndim < 2:
        raise ParamError(f"diagonal needs at least 2 dimensions, got shape {op.shape}")
    n, m = op.shape[-2:]
    length = _diagonal_length(n, m, int(offset))
    r0, c0 = max(0, -int(offset)), max(0, int(offset))
    out = new_result((*op.shape[:-2], length), op.dtype, kwargs)

    def piece(region: Region) -> np.ndarray:
        return _diagonal_piece(op, region, r0, c0)

    return fill_regions(out, piece, _nthreads(out))


def _diagonal_piece(op: Operand, region: Region, r0: int, c0: int) -> np.ndarray:
    stack, span = region[:-1], region[-1]
    lanes = math.prod(s.stop - s.start for s in stack)
    side = max(1, math.isqrt(plan.STEP_BYTES // max(1, lanes * op.dtype.itemsize)))
    parts = []
    for i in range(span.start, span.stop, side):
        j = min(i + side, span.stop)
        box = (*stack, slice(r0 + i, r0 + j), slice(c0 + i, c0 + j))
        parts.append(np.diagonal(op.read(box), axis1=-2, axis2=-1))
    return np.concatenate(parts, axis=-1)
