"""Reductions of an expression (or an array) piece by piece: ``sum``, ``prod``, ``min``,
``max``, ``any``, ``all``, ``mean``, ``var``, ``std``, ``argmin``, ``argmax``,
``count_nonzero`` and the cumulative ``cumulative_sum``/``cumulative_prod``.

Each piece is read (decoding only the chunks it covers) and reduced on a thread; the partial
results are combined in piece order in the calling thread, so the result does not depend on
the thread count. The accumulators have the reduced shape; the plan counts them (and a
cumulative result, which has the operand's shape) against the memory bound before anything is
read. Sums of floats accumulate in float64 (complex128), and are cast to numpy's result dtype
at the end; ``var``/``std`` take two passes, as numpy does: the means, then the squared
deviations from them. ``where=`` masks the items a reduction sees,
as numpy's ``where=`` does.

>>> import numpy as np
>>> from pyblosc2 import asarray
>>> from .blockwise import Source
>>> from .selection import Selection
>>> from .tree import Name
>>> a = asarray(np.arange(12.0).reshape(3, 4), chunks=(2, 2), blocks=(1, 2))
>>> src = Source(Name("a"), {"a": a}, (3, 4), a.dtype)
>>> reduce(src, Selection.everything((3, 4)), "sum", axis=0, bound=1 << 26).tolist()
[12.0, 15.0, 18.0, 21.0]
>>> int(reduce(src, Selection.everything((3, 4)), "argmax", bound=1 << 26))
11
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ParamError
from .analysis import Meta, normalize_axes, reduce_meta
from .blockwise import PIECE_ITEMS, PieceBuffers, Source, run_pieces
from .plan import Plan
from .selection import Box, Selection, piece_boxes

__all__ = ["cumulate", "reduce"]

_FLOAT_ACC = {"f": np.float64, "c": np.complex128}


def _user_axes(sel: Selection, axis: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The reduced axes in the selection's coordinates (the user's ``axis`` over the result
    shape, plus the axes an int removed), and the user's axes over the result."""
    res_to_sel = [d for d in range(len(sel.ranges)) if d not in sel.squeeze]
    user = normalize_axes(axis, len(res_to_sel))
    return tuple(sorted({res_to_sel[a] for a in user} | set(sel.squeeze))), user


def _finish(acc: np.ndarray, sel: Selection, user: tuple[int, ...], keepdims: bool) -> Any:
    """The accumulator (selection coordinates, reduced axes of length 1) as numpy's result."""
    res_shape = [n for d, n in enumerate(acc.shape) if d not in sel.squeeze]
    if not keepdims:
        res_shape = [n for d, n in enumerate(res_shape) if d not in user]
    out = acc.reshape(res_shape)
    return out[()] if out.ndim == 0 else out


class _Reducer:
    """Per-piece partials and their combination for one reduction."""

    def __init__(self, op: str, dtype: np.dtype, src_dtype: np.dtype, ddof: int) -> None:
        self.op, self.dtype, self.src_dtype, self.ddof = op, dtype, src_dtype, ddof
        kind = np.dtype(dtype).kind
        if op in ("sum", "mean"):
            self.acc_dtype = np.dtype(_FLOAT_ACC.get(kind, dtype))
        elif op in ("var", "std"):
            self.acc_dtype = np.dtype(np.complex128 if src_dtype.kind == "c" else np.float64)
        else:
            self.acc_dtype = np.dtype(dtype)

    def start(self, shape: tuple[int, ...]) -> list[np.ndarray]:
        op = self.op
        if op in ("sum", "count_nonzero"):
            return [np.zeros(shape, self.acc_dtype)]
        if op == "prod":
            return [np.ones(shape, self.acc_dtype)]
        if op == "any":
            return [np.zeros(shape, bool)]
        if op == "all":
            return [np.ones(shape, bool)]
        if op in ("min", "max"):
            return [np.full(shape, _identity(op, self.dtype), self.dtype)]
        if op == "mean":
            return [np.zeros(shape, self.acc_dtype), np.zeros(shape, np.int64)]
        if op in ("var", "std"):
            return [np.zeros(shape, np.int64), np.zeros(shape, np.float64)]
        raise ParamError(f"unknown reduction {op!r}")

    #: var/std: the mean of each cell (the first pass), subtracted in the second
    center: np.ndarray | None = None

    def constant(self, v: Any, shape: tuple[int, ...], count: int, region: Any = None) -> list[Any]:
        """The partial of ``count`` items all equal to ``v`` (a special chunk: answered in
        O(1), nothing decoded), as arrays of the partial's ``shape``."""
        op = self.op
        full = lambda value, dt: np.full(shape, value, dt)  # noqa: E731
        with np.errstate(all="ignore"):
            if op == "sum":
                return [full(np.asarray(v, self.acc_dtype) * count, self.acc_dtype)]
            if op == "prod":
                return [full(np.asarray(v, self.acc_dtype) ** count, self.acc_dtype)]
            if op == "count_nonzero":
                return [full(count if v != 0 else 0, np.int64)]
            if op in ("any", "all"):
                return [full(bool(v != 0), bool)]
            if op in ("min", "max"):
                return [full(v, self.dtype)]
            if op == "mean":
                return [
                    full(np.asarray(v, self.acc_dtype) * count, self.acc_dtype),
                    full(count, np.int64),
                ]
        assert self.center is not None and region is not None
        dev = np.asarray(v, self.acc_dtype) - self.center[region]
        sq = (dev * np.conj(dev)).real if np.iscomplexobj(dev) else dev * dev
        return [full(count, np.int64), np.broadcast_to(sq * count, shape).astype(np.float64)]

    def partial(
        self, x: np.ndarray, axes: tuple[int, ...], mask: np.ndarray | None, region: Any = None
    ) -> list[Any]:
        op = self.op
        if mask is None and x.size and not any(x.strides):  # one value: a special chunk
            shape = tuple(1 if d in axes else n for d, n in enumerate(x.shape))
            count = math.prod(x.shape[d] for d in axes)
            return self.constant(x.reshape(-1)[0], shape, count, region)
        kw: dict[str, Any] = {"axis": axes, "keepdims": True}
        if mask is not None:
            kw["where"] = mask
        if op == "sum":
            return [np.sum(x, dtype=self.acc_dtype, **kw)]
        if op == "prod":
            return [np.prod(x, dtype=self.acc_dtype, **kw)]
        if op == "count_nonzero":
            return [np.sum(x != 0, dtype=np.int64, **kw)]
        if op == "any":
            return [np.any(x, **kw)]
        if op == "all":
            return [np.all(x, **kw)]
        if op in ("min", "max"):
            fn = np.min if op == "min" else np.max
            return [fn(x, initial=_identity(op, self.dtype), **kw).astype(self.dtype, copy=False)]
        if mask is None:  # every item counts: the count of a cell is the reduced length
            cells = tuple(1 if d in axes else n for d, n in enumerate(x.shape))
            n = np.full(cells, math.prod(x.shape[d] for d in axes), np.int64)
        else:
            n = np.asarray(np.sum(mask, axis=axes, keepdims=True, dtype=np.int64))
        if op == "mean":
            return [np.sum(x, dtype=self.acc_dtype, **kw), n]
        # var, std: squared deviations from the cells' means (the first pass)
        assert self.center is not None and region is not None
        with np.errstate(invalid="ignore"):
            dev = x - self.center[region]
            sq = (dev * np.conj(dev)).real if dev.dtype.kind == "c" else dev * dev
            return [n, np.sum(sq, dtype=np.float64, **kw)]

    def combine(self, acc: list[np.ndarray], box: Box, part: list[Any]) -> None:
        op = self.op
        region: Any = box if box else Ellipsis  # a 0-d accumulator: a view, not a scalar
        a = acc[0][region]
        if op in ("sum", "count_nonzero"):
            np.add(a, part[0], out=a)
        elif op == "prod":
            np.multiply(a, part[0], out=a)
        elif op == "any":
            np.logical_or(a, part[0], out=a)
        elif op == "all":
            np.logical_and(a, part[0], out=a)
        elif op == "min":
            np.minimum(a, part[0], out=a)
        elif op == "max":
            np.maximum(a, part[0], out=a)
        elif op == "mean":
            np.add(a, part[0], out=a)
            c = acc[1][region]
            np.add(c, part[1], out=c)
        else:  # var, std: counts and sums of squared deviations
            np.add(a, part[0], out=a)
            m2 = acc[1][region]
            np.add(m2, part[1], out=m2)

    def result(self, acc: list[np.ndarray], count: int | None) -> np.ndarray:
        op = self.op
        if op in ("sum", "prod", "count_nonzero", "any", "all", "min", "max"):
            return acc[0].astype(self.dtype, copy=False)
        with np.errstate(invalid="ignore", divide="ignore"):
            if op == "mean":
                return (acc[0] / acc[1]).astype(self.dtype)
            var = acc[1] / np.maximum(acc[0] - self.ddof, 0)
            var = np.where(acc[0] - self.ddof > 0, var, np.nan)
            out = np.sqrt(var) if op == "std" else var
            return out.astype(self.dtype)


def _identity(op: str, dtype: np.dtype) -> Any:
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return op == "min"
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return info.max if op == "min" else info.min
    if dt.kind == "f":
        return np.inf if op == "min" else -np.inf
    if dt.kind in "mM":
        return np.array(
            np.iinfo(np.int64).max if op == "min" else np.iinfo(np.int64).min + 1
        ).astype(dt)
    raise ParamError(f"{op} of dtype {dt} is not supported")


def _plan(src: Source, sel: Selection, fixed: int, bound: int, what: str) -> tuple[Plan, Any, int]:
    chunks = src.chunks
    items = max(1, min(math.prod(chunks) if chunks else PIECE_ITEMS, math.prod(sel.shape) or 1))
    return Plan.make(what, src.piece_bytes(items), fixed, src.nthreads, bound), chunks, items


def reduce(
    src: Source,
    sel: Selection,
    op: str,
    axis: Any = None,
    keepdims: bool = False,
    dtype: Any = None,
    ddof: int = 0,
    bound: int = 0,
    where: Source | None = None,
) -> Any:
    """Reduction ``op`` of ``src[sel]`` over ``axis`` (numpy's meaning and result dtype);
    ``where``: a boolean source of the same shape masking the items."""
    if op in ("argmin", "argmax"):
        return _arg(src, sel, op, axis, keepdims, bound)
    axes, user = _user_axes(sel, axis)
    res_meta = reduce_meta(op, Meta(sel.result_shape, src.dtype), {"axis": axis, "dtype": dtype})
    red = _Reducer(op, res_meta.dtype, src.dtype, int(ddof))
    acc_shape = tuple(1 if d in axes else n for d, n in enumerate(sel.shape))
    if op in ("min", "max") and any(sel.shape[d] == 0 for d in axes) and where is None:
        raise ParamError(f"zero-size array to reduction operation {op} which has no identity")
    acc_bytes = math.prod(acc_shape) * 2 * max(8, red.acc_dtype.itemsize)
    plan, chunks, items = _plan(src, sel, 2 * acc_bytes, bound, f"{op} of the expression")
    if op in ("var", "std"):  # two passes, as numpy: the means, then the squared deviations
        mean = _Reducer("mean", red.acc_dtype, src.dtype, 0)
        total, count = _accumulate(src, sel, mean, axes, acc_shape, where, plan, chunks, items)
        with np.errstate(invalid="ignore", divide="ignore"):
            red.center = total / np.maximum(count, 1)
    acc = _accumulate(src, sel, red, axes, acc_shape, where, plan, chunks, items)
    return _finish(red.result(acc, None), sel, user, keepdims)


def _accumulate(
    src: Source,
    sel: Selection,
    red: _Reducer,
    axes: tuple[int, ...],
    acc_shape: tuple[int, ...],
    where: Source | None,
    plan: Plan,
    chunks: Any,
    items: int,
) -> list[np.ndarray]:
    """One pass over the pieces of ``src[sel]``: ``red``'s accumulators."""
    acc = red.start(acc_shape)
    bufs = PieceBuffers()

    def piece(box: Box) -> tuple[Box, list[Any]]:
        key = sel.source_key(box)
        cache = bufs.cache()
        x = src.read(key, cache)
        mask = None if where is None else np.broadcast_to(where.read(key, cache), x.shape)
        region = tuple(slice(0, 1) if d in axes else b for d, b in enumerate(box))
        return region, red.partial(x, axes, mask, region if region else Ellipsis)

    for region, part in run_pieces(piece, piece_boxes(sel, chunks, items), plan.nthreads):
        red.combine(acc, region, part)
    return acc


def _arg(src: Source, sel: Selection, op: str, axis: Any, keepdims: bool, bound: int) -> Any:
    """argmin/argmax: the first index of the extreme (NaN counts as the extreme, as numpy)."""
    res_shape = sel.result_shape
    if axis is not None and not isinstance(axis, int | np.integer):
        raise ParamError(f"{op} takes an int axis or None, got {axis!r}")
    if math.prod(res_shape) == 0:
        raise ParamError(f"attempt to get {op} of an empty sequence")
    res_to_sel = [d for d in range(len(sel.ranges)) if d not in sel.squeeze]
    if axis is None:
        axes = tuple(range(len(sel.shape)))
        user: tuple[int, ...] = tuple(range(len(res_shape)))
    else:
        user = normalize_axes(axis, len(res_shape))
        axes = tuple(sorted({res_to_sel[user[0]]} | set(sel.squeeze)))
    acc_shape = tuple(1 if d in axes else n for d, n in enumerate(sel.shape))
    plan, chunks, items = _plan(
        src, sel, math.prod(acc_shape) * 24, bound, f"{op} of the expression"
    )
    best = np.zeros(acc_shape, src.dtype)
    best_idx = np.full(acc_shape, -1, np.int64)
    rshape = [n for d, n in enumerate(sel.shape) if d not in sel.squeeze]
    pick = np.argmin if op == "argmin" else np.argmax

    def piece(box: Box) -> tuple[Box, np.ndarray, np.ndarray]:
        x = src.read(sel.source_key(box))
        region = tuple(slice(0, 1) if d in axes else b for d, b in enumerate(box))
        moved = np.moveaxis(x, axes, range(x.ndim - len(axes), x.ndim))
        flat = moved.reshape(*moved.shape[: x.ndim - len(axes)], -1)
        local = pick(flat, axis=-1)
        vals = np.take_along_axis(flat, local[..., None], axis=-1)[..., 0]
        # the local flat index over the reduced axes of the piece -> global index
        lshape = [x.shape[d] for d in axes]
        coords = np.unravel_index(local, lshape) if lshape else ()
        if axis is None:
            glob = [c + box[d].start for c, d in zip(coords, axes, strict=True)]
            full = [glob[i] for i, d in enumerate(axes) if d not in sel.squeeze]
            idx = np.ravel_multi_index(full, rshape) if rshape else np.zeros_like(local)
        else:
            d = res_to_sel[user[0]]
            idx = coords[axes.index(d)] + box[d].start
        shape = tuple(1 if d in axes else n for d, n in enumerate(x.shape))
        return region, vals.reshape(shape), np.asarray(idx, np.int64).reshape(shape)

    for box, vals, idx in run_pieces(piece, piece_boxes(sel, chunks, items), plan.nthreads):
        region: Any = box if box else Ellipsis
        b, bi = best[region], best_idx[region]
        with np.errstate(invalid="ignore"):
            better = vals < b if op == "argmin" else vals > b
            if src.dtype.kind in "fc":
                vnan, bnan = np.isnan(vals), np.isnan(b)
                better = (better & ~bnan) | (vnan & ~bnan)
                tie = (vals == b) | (vnan & bnan)
            else:
                tie = vals == b
        take = (bi < 0) | better | (tie & (idx < bi))
        b[take] = vals[take]
        bi[take] = idx[take]
    if axis is None:
        out = best_idx.reshape(())
        return out.reshape((1,) * len(res_shape)) if keepdims else out[()]
    return _finish(best_idx, sel, user, keepdims)


def cumulate(
    src: Source,
    sel: Selection,
    op: str,
    axis: Any = None,
    include_initial: bool = False,
    dtype: Any = None,
    bound: int = 0,
) -> np.ndarray:
    """``cumulative_sum``/``cumulative_prod`` of ``src[sel]`` along ``axis`` (required for
    more than one dimension), as a numpy array: pieces are cumulated on the threads and
    carried in piece order."""
    res_shape = sel.result_shape
    if axis is None:
        if len(res_shape) > 1:
            raise ParamError(
                f"axis must be given for {op} of an array of {len(res_shape)} dimensions"
            )
        axis = 0
    user = normalize_axes(axis, max(len(res_shape), 1))[0]
    res_to_sel = [d for d in range(len(sel.ranges)) if d not in sel.squeeze]
    ax = res_to_sel[user] if res_to_sel else 0
    prod = op in ("cumulative_prod", "cumprod")
    meta = reduce_meta(op, Meta(res_shape, src.dtype), {"axis": user, "dtype": dtype})
    out_shape = list(sel.shape) or [1]
    if include_initial:
        out_shape[ax] += 1
    nbytes = math.prod(out_shape) * meta.dtype.itemsize
    plan, chunks, items = _plan(src, sel, 2 * nbytes, bound, f"{op} of the expression")
    out = np.empty(out_shape, meta.dtype)
    off = 1 if include_initial else 0
    if include_initial:
        head = [slice(None)] * len(out_shape)
        head[ax] = slice(0, 1)
        out[tuple(head)] = 1 if prod else 0
    carry = np.full(
        tuple(1 if d == ax else n for d, n in enumerate(out_shape)), 1 if prod else 0, meta.dtype
    )
    fn = np.cumprod if prod else np.cumsum

    def piece(box: Box) -> tuple[Box, np.ndarray]:
        x = src.read(sel.source_key(box)) if sel.shape else src.read(()).reshape(1)
        return box, fn(x, axis=ax, dtype=meta.dtype)

    boxes = piece_boxes(sel, chunks, items) if sel.shape else iter([(slice(0, 1),)])
    for box, local in run_pieces(piece, boxes, plan.nthreads):
        other = tuple(slice(0, 1) if d == ax else b for d, b in enumerate(box))
        c = carry[other]
        res = local * c if prod else local + c
        dst = list(box)
        dst[ax] = slice(box[ax].start + off, box[ax].stop + off)
        out[tuple(dst)] = res
        last = [slice(None)] * res.ndim
        last[ax] = slice(-1, None)
        carry[other] = res[tuple(last)]
    final = (
        [n for d, n in enumerate(out.shape) if d not in sel.squeeze]
        if sel.shape
        else list(res_shape or [out.shape[0]])
    )
    return out.reshape(final) if res_shape else out
