"""Contractions: ``tensordot`` (and ``outer``, its case without contracted axes) and
``vecdot``, as numpy's, computed out of core like :mod:`.matmul`: a work region of the result
at a time, summing the contraction of the operands' parts over steps of the contracted axes
(:mod:`.plan`). tensordot's parts are laid out as numpy's ``tensordot`` lays them out (kept
axes, then contracted) and multiplied as matrices in bands on threads
(:func:`.backend.banded_matmul`); vecdot's are numpy's ``vecdot``. Dtypes are numpy's for the
pair (``np.dot``'s, ``np.vecdot``'s); integer and boolean results are exact, floats differ
from numpy's by summation order only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import BoundsError, ParamError, ParamTypeError
from ..ndarray.chunkfill import Region
from ..ndarray.ndarray import NDArray
from ..ndarray.npnames import npvecdot
from ..params import is_int
from . import plan
from .backend import banded_matmul, one_blas_thread
from .operands import Operand, as_operand, probe_dtype
from .output import fill_by_work, new_result
from .plan import Panel

__all__ = ["outer", "tensordot", "vecdot"]


def _fast_path(kwargs: dict[str, Any]) -> None:
    """python-blosc2's testing switch ``fast_path`` (None or a bool) is accepted and changes
    nothing: every contraction here goes by steps sized to memory."""
    value = kwargs.pop("fast_path", None)
    if value is not None and not isinstance(value, bool):
        raise ParamTypeError(f"fast_path must be None or a bool, got {value!r}")


def _axes_list(value: Any, ndim: int, name: str) -> list[int]:
    items = [value] if is_int(value) else value
    if not isinstance(items, Sequence) or not all(is_int(v) for v in items):
        raise ParamTypeError(f"{name} must be an int or a sequence of ints, got {value!r}")
    out = []
    for v in items:
        if not -ndim <= v < ndim:
            raise BoundsError(f"{name}: axis {v} is out of bounds for {ndim} dimensions")
        out.append(int(v) % ndim)
    if len(set(out)) != len(out):
        raise ParamError(f"{name}: duplicate axes are not allowed in tensordot, got {value!r}")
    return out


def _parse_axes(axes: Any, a: Operand, b: Operand) -> tuple[list[int], list[int]]:
    """numpy's ``axes`` of tensordot: N (the last N axes of ``a`` with the first N of ``b``)
    or a pair of axis sequences; the contracted lengths must match pairwise."""
    if is_int(axes):
        if not 0 <= axes <= min(a.ndim, b.ndim):
            raise ParamError(
                f"tensordot: axes must be in 0..{min(a.ndim, b.ndim)} for shapes {a.shape} "
                f"and {b.shape}, got {axes}"
            )
        a_axes, b_axes = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    elif isinstance(axes, tuple | list) and len(axes) == 2:
        a_axes = _axes_list(axes[0], a.ndim, "axes[0]")
        b_axes = _axes_list(axes[1], b.ndim, "axes[1]")
        if len(a_axes) != len(b_axes):
            raise ParamError(f"tensordot: axes[0] and axes[1] differ in length: {axes!r}")
    else:
        raise ParamTypeError(f"tensordot: axes must be an int or a pair of sequences, got {axes!r}")
    for i, j in zip(a_axes, b_axes, strict=True):
        if a.shape[i] != b.shape[j]:
            raise ParamError(
                f"tensordot: shape-mismatch for sum: axis {i} of x1 {a.shape} has length "
                f"{a.shape[i]}, axis {j} of x2 {b.shape} {b.shape[j]}"
            )
    return a_axes, b_axes


def _sum_steps(
    panels: tuple[Panel, Panel],
    lengths: list[int],
    grains: list[int],
    itemsize: int,
    contract: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> np.ndarray:
    """``contract`` of the two panels' parts, summed over the steps of the contracted axes."""
    pa, pb = panels
    per_unit = sum(math.prod(s.stop - s.start for s in p.fixed.values()) for p in panels)
    _, boxes = plan.steps(lengths, grains, per_unit, itemsize)
    acc: np.ndarray | None = None
    for box in boxes:
        part = np.asarray(contract(pa.part(box), pb.part(box)))
        if acc is None:
            acc = part.copy() if not part.flags.owndata else part
        else:
            np.add(acc, part, out=acc)
    assert acc is not None  # at least one step (no contracted axis: one empty box)
    return acc


def tensordot(x1: Any, x2: Any, axes: Any = 2, **kwargs: Any) -> NDArray:
    """The tensor contraction of ``x1`` and ``x2`` over ``axes`` as a new NDArray, as
    ``np.tensordot`` (N: the last N axes of ``x1`` with the first N of ``x2``; a pair of
    sequences: those axes pairwise; 0: the outer product). The result's axes are the kept axes
    of ``x1`` then of ``x2``; ``kwargs`` are the constructors' (``chunks``, ``urlpath``...).

    >>> import numpy as np
    >>> a, b = np.arange(24).reshape(2, 3, 4), np.arange(12).reshape(4, 3)
    >>> tensordot(a, b, axes=([1, 2], [1, 0]))[...]
    array([ 440, 1232])
    """
    _fast_path(kwargs)
    a, b = as_operand(x1, "x1"), as_operand(x2, "x2")
    a_axes, b_axes = _parse_axes(axes, a, b)
    a_keep = [d for d in range(a.ndim) if d not in a_axes]
    b_keep = [d for d in range(b.ndim) if d not in b_axes]
    shape = tuple(a.shape[d] for d in a_keep) + tuple(b.shape[d] for d in b_keep)
    dtype = probe_dtype(np.dot, a.dtype, b.dtype)
    out = new_result(shape, dtype, kwargs)
    lengths = [a.shape[d] for d in a_axes]
    if 0 in lengths:  # an empty sum: numpy's zeros
        return out
    grains = [a.chunks[d] for d in a_axes]
    itemsize = max(a.dtype.itemsize, b.dtype.itemsize, dtype.itemsize)

    nthreads = int(out.schunk.cparams.nthreads)
    a_order, b_order = [*a_keep, *a_axes], [*b_axes, *b_keep]

    def product(work: Region) -> np.ndarray:
        pa = Panel(a, dict(zip(a_keep, work[: len(a_keep)], strict=True)), a_axes)
        pb = Panel(b, dict(zip(b_keep, work[len(a_keep) :], strict=True)), b_axes)
        per_unit = sum(math.prod(s.stop - s.start for s in p.fixed.values()) for p in (pa, pb))
        _, boxes = plan.steps(lengths, grains, per_unit, itemsize)
        rows = math.prod(s.stop - s.start for s in work[: len(a_keep)])
        acc = np.empty((rows, math.prod(s.stop - s.start for s in work[len(a_keep) :])), dtype)
        for i, box in enumerate(boxes):  # np.tensordot's 2-d product, banded on threads
            x = np.transpose(pa.part(box), a_order).reshape(rows, -1)
            y = np.transpose(pb.part(box), b_order).reshape(x.shape[1], -1)
            banded_matmul(acc, x, y, i == 0, nthreads)
        return acc.reshape(tuple(s.stop - s.start for s in work))

    with one_blas_thread():
        return fill_by_work(out, product)


def outer(x1: Any, x2: Any, **kwargs: Any) -> NDArray:
    """The outer product of two vectors (1-d arrays) as a new NDArray of shape ``(N, M)``,
    as python-blosc2's ``outer`` (other dimensions are refused, where ``np.outer`` would
    flatten them).

    >>> outer(np.arange(3), np.arange(1, 3))[...]
    array([[0, 0],
           [1, 2],
           [2, 4]])
    """
    a, b = as_operand(x1, "x1"), as_operand(x2, "x2")
    if a.ndim != 1 or b.ndim != 1:
        raise ParamError(f"outer only valid for 1-d inputs, got shapes {a.shape} and {b.shape}")
    return tensordot(a.src, b.src, ((), ()), **kwargs)


def _vec_axes(axis: Any, a: Operand, b: Operand) -> tuple[int, int]:
    """The axis of each operand that ``axis`` of vecdot names: counted from the end of
    both when negative (python-blosc2 takes ``-N..-1``, N the smaller ndim), from the start of
    each when not, as numpy does."""
    if not is_int(axis):
        raise ParamTypeError(f"vecdot: axis must be an int, got {axis!r}")
    n = min(a.ndim, b.ndim)
    if not -n <= axis < n:
        raise ParamError(
            f"vecdot: axis must be in [{-n}, {n - 1}] for shapes {a.shape} and {b.shape}, "
            f"got {axis}"
        )
    return int(axis) % a.ndim, int(axis) % b.ndim


def _broadcast_fixed(op: Operand, skip: int, region: Region) -> dict[int, slice]:
    """The slices of ``op``'s axes but ``skip`` for the result ``region`` (right-aligned;
    a length-1 axis broadcasts)."""
    rest = [d for d in range(op.ndim) if d != skip]
    lead = len(region) - len(rest)
    return {d: slice(0, 1) if op.shape[d] == 1 else region[lead + i] for i, d in enumerate(rest)}


def vecdot(x1: Any, x2: Any, axis: int = -1, **kwargs: Any) -> NDArray:
    """The dot products of the vectors of ``x1`` (conjugated) and ``x2`` along ``axis``, as a
    new NDArray (``np.vecdot``: a negative axis counts from the end of both, a non-negative
    one from the start of each; the other axes broadcast); ``kwargs`` are the constructors'.

    >>> vecdot(np.array([[1, 2], [3, 4]]), np.array([1, 1]))[...]
    array([3, 7])
    """
    _fast_path(kwargs)
    a, b = as_operand(x1, "x1"), as_operand(x2, "x2")
    ka, kb = _vec_axes(axis, a, b)
    if a.shape[ka] != b.shape[kb]:
        raise ParamError(
            f"vecdot: the vectors differ in length: {a.shape[ka]} (x1 {a.shape}) and "
            f"{b.shape[kb]} (x2 {b.shape}) along axis {axis}"
        )
    rest_a = tuple(n for d, n in enumerate(a.shape) if d != ka)
    rest_b = tuple(n for d, n in enumerate(b.shape) if d != kb)
    try:
        shape = tuple(np.broadcast_shapes(rest_a, rest_b))
    except ValueError:
        raise ParamError(f"vecdot: shapes {a.shape} and {b.shape} do not broadcast") from None
    dtype = probe_dtype(npvecdot, a.dtype, b.dtype, ndims=(1, 1))
    out = new_result(shape, dtype, kwargs)
    k = a.shape[ka]
    if k == 0:
        return out
    itemsize = max(a.dtype.itemsize, b.dtype.itemsize, dtype.itemsize)

    def product(work: Region) -> np.ndarray:
        panels = (
            Panel(a, _broadcast_fixed(a, ka, work), (ka,)),
            Panel(b, _broadcast_fixed(b, kb, work), (kb,)),
        )
        acc = _sum_steps(
            panels, [k], [a.chunks[ka]], itemsize, lambda x, y: npvecdot(x, y, axis=int(axis))
        )
        return acc.astype(dtype, copy=False)

    return fill_by_work(out, product)
