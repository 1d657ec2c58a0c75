"""Chunk-wise constructors that combine or convert existing arrays (python-blosc2's
``concat``, ``stack`` and ``astype``): each output chunk reads only the input regions it
covers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import DTypeLike

from ..params import parse_choice, parse_int, refuse
from .chunkfill import Region, fill_regions, reader_of
from .constructors import _new
from .ndarray import NDArray
from .numpylike import expand_dims

__all__ = ["astype", "concat", "stack"]

_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def _operand(a: Any) -> Any:
    return a if isinstance(a, NDArray) else np.asarray(a)


def concat(arrays: Sequence[Any], /, axis: int = 0, **kwargs: Any) -> NDArray:
    """Join arrays (NDArrays or array-likes) along an existing ``axis`` into a new NDArray
    (``np.concatenate``); ``kwargs`` are those of the constructors (``chunks``, ``urlpath``...).

    >>> from .constructors import asarray
    >>> concat([asarray(np.arange(3)), np.arange(10, 12)])[...]
    array([ 0,  1,  2, 10, 11])
    """
    ops = [_operand(a) for a in arrays]
    if not ops:
        refuse("arrays", "at least one array", arrays)
    ndim = ops[0].ndim
    if ndim == 0 or any(o.ndim != ndim for o in ops):
        refuse("arrays", "arrays with the same number (> 0) of dimensions", [o.shape for o in ops])
    ax = parse_int(axis, "axis", -ndim, ndim - 1) % ndim
    rest = [o.shape[:ax] + o.shape[ax + 1 :] for o in ops]
    if any(r != rest[0] for r in rest):
        refuse("arrays", f"shapes equal but along axis {ax}", [o.shape for o in ops])
    offsets = np.cumsum([0] + [o.shape[ax] for o in ops]).tolist()
    shape = (*ops[0].shape[:ax], offsets[-1], *ops[0].shape[ax + 1 :])
    dtype = kwargs.pop("dtype", None) or np.result_type(*(o.dtype for o in ops))
    out = _new(shape, dtype, kwargs.pop("chunks", None), kwargs.pop("blocks", None), kwargs)

    def piece(region: Region) -> np.ndarray:
        buf = np.empty(tuple(r.stop - r.start for r in region), out.dtype)
        a0, a1 = region[ax].start, region[ax].stop
        for op, off in zip(ops, offsets, strict=False):
            lo, hi = max(a0, off), min(a1, off + op.shape[ax])
            if lo < hi:
                src = list(region)
                src[ax] = slice(lo - off, hi - off)
                dst: list[slice] = [slice(None)] * len(region)
                dst[ax] = slice(lo - a0, hi - a0)
                buf[tuple(dst)] = op[tuple(src)]
        return buf

    return fill_regions(out, piece)


def stack(arrays: Sequence[Any], axis: int = 0, **kwargs: Any) -> NDArray:
    """Join arrays of the same shape along a new ``axis`` (``np.stack``).

    >>> stack([np.arange(3), np.arange(3, 6)], axis=1)[...]
    array([[0, 3],
           [1, 4],
           [2, 5]])
    """
    ops = [_operand(a) for a in arrays]
    if not ops or any(o.shape != ops[0].shape for o in ops):
        refuse("arrays", "at least one array, all of the same shape", [o.shape for o in ops])
    ax = parse_int(axis, "axis", -ops[0].ndim - 1, ops[0].ndim) % (ops[0].ndim + 1)
    grown = [expand_dims(o, ax) if isinstance(o, NDArray) else np.expand_dims(o, ax) for o in ops]
    return concat(grown, axis=ax, **kwargs)


def astype(
    array: Any, dtype: DTypeLike, casting: str = "unsafe", copy: bool = True, **kwargs: Any
) -> NDArray:
    """A copy of ``array`` cast to ``dtype`` chunk by chunk; ``casting`` as in numpy.

    >>> from .constructors import asarray
    >>> astype(asarray(np.arange(3)), np.float32)[...]
    array([0., 1., 2.], dtype=float32)
    """
    casting = parse_choice(casting, "casting", _CASTINGS)
    src = _operand(array)
    dt = np.dtype(dtype)
    if not np.can_cast(src.dtype, dt, casting):  # type: ignore[arg-type]
        refuse("dtype", f"a dtype {src.dtype} can be cast to with casting={casting!r}", dtype)
    if isinstance(src, NDArray):
        kwargs.setdefault("chunks", src.chunks)
        kwargs.setdefault("blocks", src.blocks)
    out = _new(src.shape, dt, kwargs.pop("chunks", None), kwargs.pop("blocks", None), kwargs)
    return fill_regions(out, reader_of(src))
