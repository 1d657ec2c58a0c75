"""``matmul``: the matrix product of two arrays as numpy's ``matmul`` (1-d operands promoted
and their axis dropped, leading axes broadcast as a stack of matrices), computed out of core.

Each work region of the result (consecutive chunks, :mod:`.plan`) is the sum, over steps of
the contracted axis, of the numpy products of the operands' parts, each step's product cut in
bands of rows computed side by side on the result's ``cparams.nthreads`` threads (numpy's
BLAS on one thread per band, :func:`.backend.one_blas_thread`); its chunks are written once,
compressed, into a new NDArray (:mod:`.output`).
The dtype is numpy's for the pair; integers and booleans give numpy's exact result (integer
sums wrap the same way in any order), floats differ from one numpy product of the whole by
the order of the summation only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ParamError
from ..ndarray.chunkfill import Region
from ..ndarray.ndarray import NDArray
from . import plan
from .backend import banded_matmul, one_blas_thread
from .operands import Operand, as_operand, is_scalar, probe_dtype
from .output import fill_by_work, new_result
from .plan import Panel

__all__ = ["matmul"]


@dataclass(frozen=True, slots=True)
class _Layout:
    """The shapes of ``a @ b``: the stack (broadcast leading axes), ``n x k`` times
    ``k x m``, and which operand was a vector (its unit axis is not in the result)."""

    a: Operand
    b: Operand
    batch: tuple[int, ...]
    n: int
    k: int
    m: int

    @property
    def a_vector(self) -> bool:
        return self.a.ndim == 1

    @property
    def b_vector(self) -> bool:
        return self.b.ndim == 1

    @property
    def shape(self) -> tuple[int, ...]:
        rows = () if self.a_vector else (self.n,)
        cols = () if self.b_vector else (self.m,)
        return (*self.batch, *rows, *cols)

    @classmethod
    def of(cls, a: Operand, b: Operand) -> _Layout:
        ash = (1, *a.shape) if a.ndim == 1 else a.shape
        bsh = (*b.shape, 1) if b.ndim == 1 else b.shape
        (n, k), (k2, m) = ash[-2:], bsh[-2:]
        if k != k2:
            raise ParamError(
                f"matmul: shapes {a.shape} and {b.shape} are not aligned: x1's last axis has "
                f"length {k}, x2's {'only' if b.ndim == 1 else 'second-to-last'} axis {k2}"
            )
        try:
            batch = tuple(np.broadcast_shapes(ash[:-2], bsh[:-2]))
        except ValueError:
            raise ParamError(
                f"matmul: the stacks of shapes {a.shape} and {b.shape} do not broadcast"
            ) from None
        return cls(a, b, batch, n, k, m)

    def panels(self, region: Region) -> tuple[Panel, Panel]:
        """The two operands' parts for the result chunk ``region``."""
        nb = len(self.batch)
        stack = region[:nb]
        rows = slice(0, 1) if self.a_vector else region[nb]
        cols = slice(0, 1) if self.b_vector else region[-1]
        return (
            self._panel(self.a, stack, {self.a.ndim - 2: rows}, self.a.ndim - 1),
            self._panel(self.b, stack, {self.b.ndim - 1: cols}, self.b.ndim - 2),
        )

    @staticmethod
    def _panel(op: Operand, stack: Region, own: dict[int, slice], axis: int) -> Panel:
        if op.ndim == 1:
            return Panel(op, {}, (0,))
        lead = op.ndim - 2
        fixed = {
            d: slice(0, 1) if op.shape[d] == 1 else stack[len(stack) - lead + d]
            for d in range(lead)
        }
        return Panel(op, {**fixed, **own}, (axis,))


def _product(lay: _Layout, dtype: np.dtype, nthreads: int, work: Region) -> np.ndarray:
    """The items of the result's region ``work``: the products of the steps' parts, summed."""
    pa, pb = lay.panels(work)
    rows = math.prod(s.stop - s.start for s in pa.fixed.values())
    cols = math.prod(s.stop - s.start for s in pb.fixed.values())
    grain = lay.b.chunks[-2] if lay.b.ndim > 1 else lay.b.chunks[0]
    _, boxes = plan.steps([lay.k], [grain], rows + cols, max(lay.a.dtype.itemsize, dtype.itemsize))
    acc: np.ndarray | None = None
    for box in boxes:
        x = pa.part(box)
        y = pb.part(box)
        x = x[None, :] if lay.a_vector else x
        y = y[:, None] if lay.b_vector else y
        first = acc is None
        if acc is None:
            shape = (*np.broadcast_shapes(x.shape[:-2], y.shape[:-2]), x.shape[-2], y.shape[-1])
            acc = np.empty(shape, dtype)
        banded_matmul(acc, x, y, first, nthreads)
    assert acc is not None  # k > 0: one step at least
    return acc.reshape(tuple(s.stop - s.start for s in work))


def matmul(x1: Any, x2: Any, **kwargs: Any) -> NDArray:
    """The matrix product ``x1 @ x2`` as a new NDArray (python-blosc2's ``matmul``), computed
    chunk by chunk: numpy's shapes, broadcasting and dtype; ``kwargs`` are those of the
    constructors for the result (``chunks``, ``blocks``, ``urlpath``, ``mode``, ``cparams``...).
    Operands: NDArrays, numpy arrays, any array with
    ``shape``, ``dtype`` and ``__getitem__``; scalars are refused as numpy refuses them.

    >>> import numpy as np
    >>> from pyblosc2 import asarray
    >>> a = asarray(np.array([[1, 2], [3, 4]]))
    >>> matmul(a, np.array([[2, 3], [2, 1]]))[...]
    array([[ 6,  5],
           [14, 13]])
    >>> matmul(a, np.array([1, 2]))[...], matmul(np.array([1, 2]), a)[...]
    (array([ 5, 11]), array([ 7, 10]))
    """
    if is_scalar(x1) or is_scalar(x2):
        raise ParamError("matmul: x1 and x2 must be arrays, not scalars (as in np.matmul)")
    a, b = as_operand(x1, "x1"), as_operand(x2, "x2")
    if not a.ndim or not b.ndim:
        raise ParamError(f"matmul: operands need at least 1 dimension, got {a.shape} and {b.shape}")
    lay = _Layout.of(a, b)
    dtype = probe_dtype(np.matmul, a.dtype, b.dtype)
    out = new_result(lay.shape, dtype, kwargs)
    if lay.k == 0:  # nothing to sum: numpy's zeros
        return out
    nthreads = int(out.schunk.cparams.nthreads)
    with one_blas_thread():
        return fill_by_work(out, lambda work: _product(lay, dtype, nthreads, work))
